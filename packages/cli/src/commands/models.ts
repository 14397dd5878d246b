import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import {
  GgufError,
  PRESET_ARCHS,
  SYNTH_ARCHS,
  SYNTH_PRESETS,
  SYNTH_QUANTS,
  synthesizeModel,
  type GgufWriteProgress,
  type SynthArch,
  type SynthesizedModel,
  type SynthPreset,
  type SynthQuant,
} from "@attr-rag/engine";
import { CliError } from "../cliError.js";
import { registerModelsList, registerModelsPull } from "./modelsCache.js";

/** `models synth` options as commander hands them over: strings, unvalidated. */
export interface SynthCommandOptions {
  preset?: string;
  arch?: string;
  quant?: string;
  seed?: string;
  out?: string;
  vocabDir?: string;
  force?: boolean;
}

export interface SynthRequest {
  preset: SynthPreset;
  arch: SynthArch;
  quant: SynthQuant;
  seed: number;
  out: string;
  vocabDir?: string;
  force: boolean;
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[], fallback?: T): T {
  if (value === undefined) {
    if (fallback !== undefined) return fallback;
    throw new CliError(`${flag} is required (one of: ${allowed.join(", ")})`);
  }
  if (!(allowed as readonly string[]).includes(value)) throw new CliError(`${flag} must be one of ${allowed.join(", ")}, got ${JSON.stringify(value)}`);
  return value as T;
}

/** Validates the options; every problem is a CliError (exit code 2) naming the flag. */
export function parseSynthOptions(options: SynthCommandOptions): SynthRequest {
  const preset = oneOf("--preset", options.preset, SYNTH_PRESETS);
  const arch = oneOf("--arch", options.arch, SYNTH_ARCHS, PRESET_ARCHS[preset][0]);
  if (!PRESET_ARCHS[preset].includes(arch)) throw new CliError(`--preset ${preset} is made in ${PRESET_ARCHS[preset].join(" or ")}, not --arch ${arch}`);
  const quant = oneOf("--quant", options.quant, SYNTH_QUANTS, "q8_0");
  const seedText = options.seed ?? "1";
  const seed = Number(seedText);
  if (!/^\d+$/.test(seedText) || seed > 0xffffffff) throw new CliError(`--seed must be an integer from 0 to 4294967295, got ${JSON.stringify(seedText)}`);
  if (options.out === undefined || options.out.trim() === "") throw new CliError("--out FILE.gguf is required");
  const out = resolve(options.out);
  if (existsSync(out) && !options.force) throw new CliError(`${out} already exists; pass --force to replace it`);
  return { preset, arch, quant, seed, out, vocabDir: options.vocabDir, force: options.force ?? false };
}

/** Progress as whole percentages of bytes written: rewritten in place on a terminal, a line per 10% otherwise. */
export function progressReporter(write: (text: string) => void, isTty: boolean): (p: GgufWriteProgress) => void {
  const step = isTty ? 1 : 10;
  let lastBucket = -1;
  return (p) => {
    const percent = Math.floor((100 * p.bytesWritten) / p.totalBytes);
    const bucket = Math.floor(percent / step);
    if (bucket === lastBucket) return;
    lastBucket = bucket;
    const where = p.tensorName !== "" ? ` (tensor ${p.tensorIndex + 1}/${p.tensorCount} ${p.tensorName})` : "";
    write(isTty ? `\r\x1b[Ksynth: ${percent}%${where}${percent === 100 ? "\n" : ""}` : `synth: ${percent}%${where}\n`);
  };
}

export function summaryLine(m: SynthesizedModel): string {
  return `wrote ${m.path}: ${m.arch} ${m.preset} ${m.quant} seed ${m.seed}, ${m.parameterCount.toLocaleString("en-US")} parameters, ${(m.fileSize / 1e6).toFixed(1)} MB`;
}

/** Runs `models synth`; progress goes to `stderr`. Errors of the work itself become CliError exit code 1. */
export async function runModelsSynth(options: SynthCommandOptions, stderr: { write(text: string): void; isTTY?: boolean } = process.stderr): Promise<SynthesizedModel> {
  const request = parseSynthOptions(options);
  mkdirSync(dirname(request.out), { recursive: true });
  try {
    return await synthesizeModel({ ...request, onProgress: progressReporter((t) => stderr.write(t), stderr.isTTY === true) });
  } catch (err) {
    if (err instanceof GgufError) throw new CliError(err.message, 1, { cause: err });
    throw err;
  }
}

export function registerModelsCommand(program: Command): void {
  const models = program
    .command("models")
    .summary("download, list and make model files")
    .description("The model cache (pull, list) and synthetic test models (synth). Any --model flag takes a path or a cache name.");
  registerModelsPull(models);
  registerModelsList(models);
  models
    .command("synth")
    .summary("write a synthetic llama.cpp GGUF (random weights, real tokenizer) for tests and benchmarks")
    .description(
      [
        "Writes a GGUF that llama.cpp loads like a real model: the real qwen2 (or",
        "llama SentencePiece) tokenizer copied from llama.cpp's vocab GGUFs, a",
        "realistic layer layout and random weights from a seeded generator. Its",
        "text is meaningless, but continuations depend on the whole prompt, so it",
        "exercises generation and occlusion. The same options always give a",
        "byte-identical file.",
        "",
        "Presets (parameter counts with the qwen2 vocabulary):",
        "  tiny           n_embd 64, 2 layers, 4 heads (2 KV), FFN 128, ctx 2048        9.8M",
        "  bench          n_embd 640, 8 layers, 10 heads (2 KV), FFN 1792, ctx 4096   132.6M",
        "  qwen2-0.5b     Qwen2-0.5B's shape: n_embd 896, 24 layers, 14 heads (2 KV)  494.0M",
        "  reranker-tiny  bert cross-encoder with a classification head (rank",
        "                 pooling): n_embd 64, 2 layers, 4 heads, ctx 512            2.1M",
        "qwen2 has q/k/v biases and tied embeddings; llama has no biases and a",
        "separate output matrix (and a 32000-token vocabulary). reranker-tiny is",
        "always bert (the bge WordPiece vocabulary): pass it as --reranker to",
        "exercise the GGUF re-ranking path.",
        "",
        "Progress goes to stderr, a summary line to stdout. The vocab GGUFs come",
        "from building @attr-rag/native (npm run build -w @attr-rag/native).",
        "",
        "Example:",
        "  attr-rag models synth --preset bench --out .cache/models/bench.gguf",
      ].join("\n"),
    )
    .option("--preset <name>", `model shape: ${SYNTH_PRESETS.join(" | ")} (required)`)
    .option("--arch <name>", `architecture: ${SYNTH_ARCHS.join(" | ")} (default: qwen2; bert for reranker-tiny)`)
    .option("--quant <type>", `weight type of the matrices: ${SYNTH_QUANTS.join(" | ")} (norms and biases stay f32)`, "q8_0")
    .option("--seed <n>", "random seed, an integer from 0 to 4294967295", "1")
    .option("--out <file>", "output .gguf path (required; missing directories are created)")
    .option("--vocab-dir <dir>", "directory holding llama.cpp's ggml-vocab-*.gguf files (default: <repo>/native/.cache/llama.cpp/models)")
    .option("--force", "replace the output file if it exists")
    .action(async (options: SynthCommandOptions) => {
      const model = await runModelsSynth(options);
      process.stdout.write(`${summaryLine(model)}\n`);
    });
}
