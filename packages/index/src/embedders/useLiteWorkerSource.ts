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
  return initModel(modelSource);
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
