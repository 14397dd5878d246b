import { InputError } from "@attr-rag/core";
import { ModelLoadError } from "../errors.js";
import { Model } from "../Model.js";
import { resolveModel } from "./modelLocator.js";

/** Loads a generator GGUF given as a path or a model-cache name; a missing or bad file is a usage error (exit 2). */
export async function loadModelArg(arg: string, options: Parameters<typeof Model.load>[1] = {}): Promise<Model> {
  try {
    return await Model.load(resolveModel(arg), options);
  } catch (err) {
    throw err instanceof ModelLoadError ? new InputError(err.message, 2, { cause: err }) : err;
  }
}
