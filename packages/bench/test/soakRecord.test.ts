// The hour under faults that docs/operations.md shows (bench/results/soak-60min.json) is what the checker says
// about the history recorded beside it, checked again with today's rules: a rule made stricter, or a record
// edited by hand, fails here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { checkHistory, type SoakHistory } from "@attr-rag/core";
import { RESULTS_DIR } from "../render/readme-tables.mjs";

describe("the recorded soak", () => {
  it("soak record - an hour with at least 200 faults: its history, checked again, gives exactly the record's violations", () => {
    const record = JSON.parse(readFileSync(join(RESULTS_DIR, "soak-60min.json"), "utf8"));
    const history = JSON.parse(gunzipSync(readFileSync(join(RESULTS_DIR, record.summary.history))).toString("utf8")) as SoakHistory;
    expect(record.soak.minutes).toBeGreaterThanOrEqual(60);
    expect(record.faults.applied).toBeGreaterThanOrEqual(200);
    expect(history.faults).toHaveLength(record.faults.applied);
    expect(history.seed).toBe(record.soak.seed);
    const counted = Object.values(record.operations as Record<string, Record<string, number>>).flatMap((codes) => Object.values(codes)).reduce((a, b) => a + b, 0);
    expect(history.operations).toHaveLength(counted);
    expect(checkHistory(history)).toEqual(record.violations);
  });
});
