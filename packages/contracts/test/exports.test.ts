import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as contracts from "../src/index.js";
import { GEN_DIR } from "../scripts/toolchain.mjs";

const GEN_V1 = join(GEN_DIR, "attr_rag", "v1");
const FILE_SYMBOLS = new Set(["protobufPackage", "protobufFileName"]);

describe("exports", () => {
  it("exports - index lists every generated message, enum, service and enum helper", async () => {
    const files = readdirSync(GEN_V1).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThanOrEqual(11);
    const missing: string[] = [];
    for (const file of files) {
      const mod = (await import(join(GEN_V1, file))) as Record<string, unknown>;
      for (const name of Object.keys(mod)) {
        // map-entry helpers such as Document_MetadataEntry are internal to their message
        if (FILE_SYMBOLS.has(name) || name.includes("_")) continue;
        if (!(name in contracts)) missing.push(`${file}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
