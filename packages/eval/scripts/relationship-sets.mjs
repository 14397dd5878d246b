#!/usr/bin/env node
// Writes the synthetic relationship sets `attr-rag eval attribution` evaluates on, as JSON lines
// ({id, kind, question, answer, passages: [{id, role, text}]}), so they can be read, reused or fed to
// another tool. The generator is packages/eval/src/relationshipSets.ts (build first: npm run build).
//
//   node packages/eval/scripts/relationship-sets.mjs [--kind redundancy|complementarity|synergy|mixed] [--sets N] [--seed S] [--negatives 1-4]
import { parseArgs } from "node:util";
import { relationshipSets, RELATIONSHIP_KINDS } from "@attr-rag/eval";

const { values } = parseArgs({
  options: { kind: { type: "string", default: "mixed" }, sets: { type: "string", default: "12" }, seed: { type: "string", default: "0" }, negatives: { type: "string", default: "4" } },
});
const kind = values.kind;
if (kind !== "mixed" && !RELATIONSHIP_KINDS.includes(kind)) {
  console.error(`--kind must be one of ${RELATIONSHIP_KINDS.join(", ")}, mixed`);
  process.exit(2);
}
const [sets, seed, negatives] = [Number(values.sets), Number(values.seed), Number(values.negatives)];
if (![sets, seed, negatives].every(Number.isInteger) || sets < 1 || seed < 0 || negatives < 1 || negatives > 4) {
  console.error("--sets ≥ 1, --seed ≥ 0 and --negatives 1-4 must be integers");
  process.exit(2);
}
for (const example of relationshipSets(kind, sets, seed, negatives)) process.stdout.write(`${JSON.stringify(example)}\n`);
