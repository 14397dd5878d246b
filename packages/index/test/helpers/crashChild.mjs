// Child process for the kill -9 test. Runs the compiled store (dist/, no TypeScript loader on Node 20),
// writes documents and prints one JSON line per event on stdout:
//   {"event":"begin", op...}  before a write starts;
//   {"event":"ack",   op...}  after it resolved (the store has acknowledged it: it must survive);
//   {"event":"done"}          when a scripted plan is finished (the child then idles until killed).
// It never closes the store: the parent kills it with SIGKILL at a moment of its choosing.
//
// argv[2] is a JSON plan: { store, round, saveEvery, script?: [{ op: "upsert", id, version } | { op: "delete", id }] }.
// Without a script it loops forever over new documents, replacements and deletions of its own documents.
import { ChunkStore } from "../../dist/index.js";
import { FAKE_EMBEDDER, fakeEmbed } from "./fakeEmbedder.mjs";
import { makeDocument, TEST_CHUNKER } from "./syntheticDocs.mjs";

const plan = JSON.parse(process.argv[2]);
const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

function* loop(round) {
  const live = new Map(); // id -> version, documents of this round only
  for (let i = 0; ; i++) {
    const ids = [...live.keys()];
    if (i % 5 === 3 && ids.length > 0) {
      const id = ids[i % ids.length];
      live.set(id, live.get(id) + 1);
      yield { op: "upsert", id, version: live.get(id) };
    } else if (i % 7 === 6 && ids.length > 1) {
      const id = ids[(i * 3) % ids.length];
      live.delete(id);
      yield { op: "delete", id };
    } else {
      const id = `r${round}-${i}`;
      live.set(id, 1);
      yield { op: "upsert", id, version: 1 };
    }
  }
}

const store = await ChunkStore.open(plan.store, {
  create: true,
  embedder: FAKE_EMBEDDER,
  embed: fakeEmbed,
  chunker: TEST_CHUNKER,
  saveEvery: plan.saveEvery,
});
say({ event: "ready", repair: store.repairReport });
for (const op of plan.script ?? loop(plan.round)) {
  say({ event: "begin", ...op });
  if (op.op === "upsert") {
    const result = await store.upsertDocument(makeDocument(op.id, op.version), fakeEmbed);
    say({ event: "ack", ...op, status: result.status });
  } else {
    store.deleteDocument(op.id);
    say({ event: "ack", ...op });
  }
}
say({ event: "done" });
setInterval(() => {}, 60_000); // keep the store open, unflushed, until SIGKILL
