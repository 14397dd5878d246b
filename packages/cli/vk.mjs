import { backendSelection, listDevices, Model } from "@attr-rag/engine";
const s = backendSelection();
console.log(s.summary);
console.log(listDevices());
if (s.backend !== "cpu") {
  const m = await Model.load("examples/models/stories260K.gguf", { gpuLayers: -1 });
  const ctx = await m.createContext({ contextSize: 2048, sequences: 2 });
  const t = performance.now();
  const r = await ctx.generate ? "gen" : "";
  console.log(Object.getOwnPropertyNames(Object.getPrototypeOf(ctx)));
  await ctx.dispose(); await m.dispose();
}
