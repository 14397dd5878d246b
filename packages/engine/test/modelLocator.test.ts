import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ModelLoadError } from "../src/errors.js";
import { readGgufHeader } from "../src/gguf/readHeader.js";
import { listCachedModels } from "../src/models/cachedModels.js";
import { defaultModelPath, modelCacheDir, resolveModel, shippedModelPath } from "../src/models/modelLocator.js";

const cache = mkdtempSync(join(tmpdir(), "attr-rag-models-"));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

describe("model locator", () => {
  it("model locator - the repository ships stories260K.gguf (the file the NOTICE describes)", () => {
    const shipped = shippedModelPath();
    expect(shipped).toMatch(/examples\/models\/stories260K\.gguf$/);
    const bytes = readFileSync(shipped); // fails, never skips, when the checkout lacks it
    expect(createHash("sha256").update(bytes).digest("hex")).toBe("270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d");
    expect(readFileSync(join(shipped, "../NOTICE"), "utf8")).toMatch(/MIT/);
  });

  it("model locator - ATTR_RAG_MODEL overrides the shipped model, as a path or a cache name", () => {
    expect(defaultModelPath({})).toBe(shippedModelPath());
    expect(defaultModelPath({ ATTR_RAG_MODEL: "" })).toBe(shippedModelPath());
    const file = join(cache, "mine.gguf");
    copyFileSync(shippedModelPath(), file);
    expect(defaultModelPath({ ATTR_RAG_MODEL: file })).toBe(file);
    expect(defaultModelPath({ ATTR_RAG_MODEL: "mine", ATTR_RAG_MODELS: cache })).toBe(file);
    expect(() => defaultModelPath({ ATTR_RAG_MODEL: "absent", ATTR_RAG_MODELS: cache })).toThrow(ModelLoadError);
  });

  it("model locator - the cache is ATTR_RAG_MODELS, else XDG_CACHE_HOME or ~/.cache, under attr-rag/models", () => {
    expect(modelCacheDir({ ATTR_RAG_MODELS: cache })).toBe(cache);
    expect(modelCacheDir({ XDG_CACHE_HOME: "/var/cache/u" })).toBe("/var/cache/u/attr-rag/models");
    expect(modelCacheDir({})).toBe(join(homedir(), ".cache/attr-rag/models"));
  });

  it("model locator - a --model value is a path if one exists, else a cache name with or without .gguf; else a clear error", () => {
    const env = { ATTR_RAG_MODELS: cache };
    const file = join(cache, "qwen-q4.gguf");
    writeFileSync(file, "GGUF");
    expect(resolveModel(file, env)).toBe(file);
    expect(resolveModel("qwen-q4", env)).toBe(file);
    expect(resolveModel("qwen-q4.gguf", env)).toBe(file);
    expect(() => resolveModel("llama-70b", env)).toThrow(ModelLoadError);
    expect(() => resolveModel("llama-70b", env)).toThrow(
      new RegExp(`no model "llama-70b": not a file here and not a name in the model cache ${cache}; cached: mine\\.gguf, qwen-q4\\.gguf\\. Download one with \`attr-rag models pull`),
    );
    expect(() => resolveModel("/nowhere/m.gguf", env)).toThrow(/cannot read the model file \/nowhere\/m\.gguf: it does not exist/);
    expect(() => resolveModel("  ", env)).toThrow(/the model is empty/);
  });

  it("model locator - models list reads architecture, parameters, quantization and context from each header", async () => {
    const dir = join(cache, "listed");
    mkdirSync(dir);
    copyFileSync(shippedModelPath(), join(dir, "stories260K.gguf"));
    writeFileSync(join(dir, "broken.gguf"), "not a gguf at all");
    writeFileSync(join(dir, "big.gguf.partial"), Buffer.alloc(1234));
    writeFileSync(join(dir, "notes.txt"), "ignored");
    const { models, partial } = await listCachedModels(dir);
    const header = await readGgufHeader(shippedModelPath());
    const parameters = header.tensors.reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
    expect(models.map((m) => m.name)).toEqual(["broken.gguf", "stories260K.gguf"]);
    expect(models[1]).toMatchObject({ architecture: "llama", parameters, quantization: "F32", contextLength: 2048, bytes: 1185376 });
    expect(parameters).toBeGreaterThan(200_000);
    expect(parameters).toBeLessThan(300_000);
    expect(models[0]!.error).toMatch(/GGUF/);
    expect(partial).toEqual([{ name: "big.gguf", bytes: 1234 }]);
    expect(await listCachedModels(join(cache, "does-not-exist"))).toEqual({ models: [], partial: [] });
  });
});
