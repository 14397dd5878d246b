/**
 * The body of the USE-lite worker thread, started with `new Worker(source, { eval: true })` so the same
 * code runs from `src/` (tests) and `dist/` without a separate file to ship. The model packages are
 * resolved by the parent (workerData) and imported here, so TF.js lives only on the worker's thread.
 *
 * Protocol: the parent posts `{ id, texts }`; the worker answers `{ id, vectors }` (Float32Arrays, buffers
 * transferred) or `{ id, error }`. A model that fails to load answers every request with that error.
 */
export const USE_LITE_WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { pathToFileURL } = require("node:url");
const load = (async () => {
  const emb = await import(pathToFileURL(workerData.embeddings).href);
  const src = await import(pathToFileURL(workerData.model).href);
  const initModel = emb.initModel ?? emb.default.initModel;
  const modelSource = src.modelSource ?? src.default.modelSource;
  // initModel starts TF.js's wasm backend and reads the weights at the same time; when the weights win the
  // race they touch a backend that is still initializing and it throws "has not yet been initialized".
  // The backend finishes on its own, so a short wait and another try succeeds.
  for (let attempt = 1; ; attempt++) {
    try {
      return await initModel(modelSource);
    } catch (err) {
      if (attempt >= 5 || !/has not yet been initialized/.test(String(err && err.message))) throw err;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
})();
load.catch(() => undefined);
parentPort.on("message", async ({ id, texts }) => {
  try {
    const model = await load;
    const rows = await model.embed(texts);
    const vectors = rows.map((row) => Float32Array.from(row));
    parentPort.postMessage({ id, vectors }, vectors.map((v) => v.buffer));
  } catch (err) {
    parentPort.postMessage({ id, error: err && err.message ? err.message : String(err) });
  }
});
`;
