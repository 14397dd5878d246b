// Synthetic models for tests and benchmarks, generated once into a git-ignored cache and reused. A file
// under its final name is always complete (writeGguf renames it into place), so existence plus a matching
// generator version means it can be reused as is.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { GgufError } from "../gguf/ggufError.js";
import { readGgufHeader } from "../gguf/readHeader.js";
import { PRESET_ARCHS, type SynthArch, type SynthPreset, type SynthQuant } from "./presets.js";
import { findRepoRoot } from "./repoPaths.js";
import {
  DEFAULT_SYNTH_SEED,
  SYNTH_GENERATOR_VERSION,
  SYNTH_VERSION_KEY,
  synthesizeModel,
  type SynthesizeModelOptions,
} from "./synthesizeModel.js";

export interface EnsureSynthModelOptions {
  readonly quant?: SynthQuant;
  readonly arch?: SynthArch;
  readonly seed?: number;
  /** Defaults to <repo>/.cache/models. */
  readonly cacheDir?: string;
  readonly vocabDir?: string;
  readonly onProgress?: SynthesizeModelOptions["onProgress"];
}

export interface EnsuredSynthModel {
  readonly path: string;
  /** False when an existing cached file was reused. */
  readonly created: boolean;
}

/** The default cache directory, <repo>/.cache/models (git-ignored). */
export function defaultSynthCacheDir(): string {
  const root = findRepoRoot();
  if (root === undefined) throw new GgufError("cannot find the attr-rag repository above this module; pass cacheDir explicitly");
  return join(root, ".cache", "models");
}

export function synthModelFileName(preset: SynthPreset, arch: SynthArch, quant: SynthQuant, seed: number): string {
  return `${arch}-${preset}-${quant}-seed${seed}.gguf`;
}

/** The path of the cached synthetic model, generating it first if missing or made by another generator version. */
export async function ensureSynthModel(preset: SynthPreset, options: EnsureSynthModelOptions = {}): Promise<EnsuredSynthModel> {
  const quant = options.quant ?? "q8_0";
  const arch = options.arch ?? PRESET_ARCHS[preset][0]!;
  const seed = options.seed ?? DEFAULT_SYNTH_SEED;
  const cacheDir = options.cacheDir ?? defaultSynthCacheDir();
  const path = join(cacheDir, synthModelFileName(preset, arch, quant, seed));
  if (existsSync(path) && (await isCurrent(path))) return { path, created: false };
  mkdirSync(cacheDir, { recursive: true });
  // Concurrent callers may both generate; each writes its own temporary file and the renames are atomic,
  // so the survivor is a complete file either way.
  await synthesizeModel({ preset, arch, quant, seed, out: path, vocabDir: options.vocabDir, onProgress: options.onProgress });
  return { path, created: true };
}

async function isCurrent(path: string): Promise<boolean> {
  try {
    const version = (await readGgufHeader(path)).metadata.get(SYNTH_VERSION_KEY);
    return version?.type === "uint32" && version.value === SYNTH_GENERATOR_VERSION;
  } catch {
    return false; // unreadable: regenerate over it
  }
}
