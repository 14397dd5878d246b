import { describe, expect, it } from "vitest";
import { nativeAddon } from "../src/native/loadAddon.js";

// Standalone tier: the addon itself, no model. Misuse must surface as JS errors, never abort the process.
describe("native addon (no model)", () => {
  it("native - loads its backends and lists at least the CPU device", () => {
    const addon = nativeAddon();
    const devices = addon.devices();
    expect(devices.some((d) => d.type === "cpu")).toBe(true);
    expect(addon.defaultLibraryDir).toMatch(/bins\/linux-x64$/);
  });

  it("native - an unloaded model and a context on it refuse work with errors", async () => {
    const addon = nativeAddon();
    const model = new addon.AddonModel();
    expect(() => model.tokenize("x", false, false)).toThrow(/not loaded/);
    expect(() => model.info()).toThrow(/not loaded/);
    expect(() => new addon.AddonContext(model)).toThrow(/not loaded/);
    await expect(model.load("/definitely/missing.gguf", { gpuLayers: 0, vocabOnly: false, useMmap: true })).rejects.toThrow(/could not load the model/);
    model.dispose();
    expect(() => model.tokenize("x", false, false)).toThrow(/disposed/);
    expect(() => model.load("/x.gguf", { gpuLayers: 0, vocabOnly: false, useMmap: true })).toThrow(/disposed/);
  });
});
