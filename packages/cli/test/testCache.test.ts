// The per-run cache test files start from (tools/ci/testCache.mjs): built once, copied after, never shared
// outside a run that set it up.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fromRunCache } from "../../../tools/ci/testCache.mjs";

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "attr-rag-cache-test-"));
  dirs.push(d);
  return d;
};
const saved = process.env.ATTR_RAG_TEST_CACHE;
afterEach(() => {
  if (saved === undefined) delete process.env.ATTR_RAG_TEST_CACHE;
  else process.env.ATTR_RAG_TEST_CACHE = saved;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A build that counts its calls and writes a folder with a nested file. */
function counter() {
  let calls = 0;
  return {
    calls: () => calls,
    build: async (dest: string) => {
      calls += 1;
      mkdirSync(join(dest, "sub"), { recursive: true });
      writeFileSync(join(dest, "sub", "data.txt"), `build ${calls}`);
    },
  };
}

describe("tools/ci/testCache.mjs", () => {
  it("cache - with a run's cache the first call builds, later ones copy the same contents into their own folder", async () => {
    const run = join(temp(), "run");
    process.env.ATTR_RAG_TEST_CACHE = run;
    const c = counter();
    const [a, b] = [join(temp(), "a"), join(temp(), "b")];
    expect(await fromRunCache("demo-store", a, c.build)).toBe("built");
    expect(await fromRunCache("demo-store", b, c.build)).toBe("copied");
    expect(c.calls()).toBe(1);
    expect(readFileSync(join(b, "sub", "data.txt"), "utf8")).toBe("build 1");
    // Each caller owns its copy: a change to one is not seen by the next.
    writeFileSync(join(b, "sub", "data.txt"), "changed");
    const third = join(temp(), "c");
    await fromRunCache("demo-store", third, c.build);
    expect(readFileSync(join(third, "sub", "data.txt"), "utf8")).toBe("build 1");
    // Another key is another build; no partial copy is left behind.
    expect(await fromRunCache("other-store", join(temp(), "d"), c.build)).toBe("built");
    expect(c.calls()).toBe(2);
    expect(existsSync(join(run, `demo-store.${process.pid}.partial`))).toBe(false);
  });

  it("cache - without a run's cache every call builds; a failed build keeps nothing; a bad key is refused", async () => {
    delete process.env.ATTR_RAG_TEST_CACHE;
    const c = counter();
    expect(await fromRunCache("demo-store", join(temp(), "a"), c.build)).toBe("built");
    expect(await fromRunCache("demo-store", join(temp(), "b"), c.build)).toBe("built");
    expect(c.calls()).toBe(2);

    const run = join(temp(), "run");
    process.env.ATTR_RAG_TEST_CACHE = run;
    await expect(fromRunCache("demo-store", join(temp(), "x"), () => Promise.reject(new Error("ingest failed")))).rejects.toThrow("ingest failed");
    expect(existsSync(join(run, "demo-store"))).toBe(false);
    expect(await fromRunCache("demo-store", join(temp(), "y"), c.build)).toBe("built");
    await expect(fromRunCache("../escape", join(temp(), "z"), c.build)).rejects.toThrow(/cache key/);
  });

  it("cache - two builds at once: both callers get a whole folder and the cache keeps one", async () => {
    const run = join(temp(), "run");
    process.env.ATTR_RAG_TEST_CACHE = run;
    const c = counter();
    const [a, b] = [join(temp(), "a"), join(temp(), "b")];
    const results = await Promise.all([fromRunCache("demo-store", a, c.build), fromRunCache("demo-store", b, c.build)]);
    expect(results).toEqual(["built", "built"]);
    for (const d of [a, b]) expect(readFileSync(join(d, "sub", "data.txt"), "utf8")).toMatch(/^build [12]$/);
    expect(readFileSync(join(run, "demo-store", "sub", "data.txt"), "utf8")).toMatch(/^build [12]$/);
  });
});
