// The one place that says where a model comes from: the model shipped in the repository, the local model
// cache that `attr-rag models pull` fills, and how a `--model` value (a path or a cache name) becomes a file.
// Every command and every test finds its model through here, so ATTR_RAG_MODEL and ATTR_RAG_MODELS mean the
// same thing everywhere.
import { existsSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve, sep } from "node:path";
import { ModelLoadError } from "../errors.js";
import { findRepoRoot } from "../synth/repoPaths.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** File name of the model that ships with the repository (examples/models/, MIT, 1.1 MB). */
export const SHIPPED_MODEL_NAME = "stories260K.gguf";

/** <repo>/examples/models/stories260K.gguf: the real tiny llama every fresh clone has. */
export function shippedModelPath(): string {
  const root = findRepoRoot();
  if (root === undefined) throw new ModelLoadError(`cannot find the attr-rag repository above this module, so not ${SHIPPED_MODEL_NAME} either; set ATTR_RAG_MODEL`);
  return join(root, "examples", "models", SHIPPED_MODEL_NAME);
}

/** The model used when a command or test names none: $ATTR_RAG_MODEL (a path or cache name), else the shipped one. */
export function defaultModelPath(env: Env = process.env): string {
  const fromEnv = env.ATTR_RAG_MODEL;
  return fromEnv !== undefined && fromEnv !== "" ? resolveModel(fromEnv, env) : shippedModelPath();
}

/** $ATTR_RAG_MODELS, else ~/.cache/attr-rag/models (XDG_CACHE_HOME respected). */
export function modelCacheDir(env: Env = process.env): string {
  const explicit = env.ATTR_RAG_MODELS;
  if (explicit !== undefined && explicit !== "") return resolve(explicit);
  const cacheHome = env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(cacheHome, "attr-rag", "models");
}

/**
 * A `--model` value as a file: an existing path as is; otherwise a name in the model cache (with or without
 * `.gguf`). Throws ModelLoadError saying where it looked and how to get the model.
 */
export function resolveModel(spec: string, env: Env = process.env): string {
  if (spec.trim() === "") throw new ModelLoadError("the model is empty; pass a GGUF path or a model-cache name (attr-rag models list)");
  if (existsSync(spec)) return resolve(spec);
  const cache = modelCacheDir(env);
  const looksLikeName = !spec.includes("/") && !spec.includes(sep);
  if (looksLikeName) {
    for (const candidate of [spec, `${spec}.gguf`]) {
      const path = join(cache, candidate);
      if (existsSync(path) && statSync(path).isFile()) return path;
    }
  }
  const cached = listCachedNames(cache);
  const known = cached.length > 0 ? `; cached: ${cached.join(", ")}` : "";
  throw new ModelLoadError(
    looksLikeName
      ? `no model "${spec}": not a file here and not a name in the model cache ${cache}${known}. ` +
          "Download one with `attr-rag models pull URL|hf:owner/repo/file.gguf`, or pass a path to a GGUF file"
      : `cannot read the model file ${spec}: it does not exist. Pass a GGUF file, or a name from \`attr-rag models list\` (cache ${cache})`,
  );
}

/** File names of complete models in the cache (partial downloads are not models). */
export function listCachedNames(cache: string): string[] {
  if (!existsSync(cache)) return [];
  return readdirSync(cache)
    .filter((name) => name.endsWith(".gguf"))
    .sort();
}

