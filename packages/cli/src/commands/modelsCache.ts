// `attr-rag models pull` and `attr-rag models list`: the local model cache that every --model flag can name.
import type { Command } from "commander";
import { EngineArgumentError, listCachedModels, modelCacheDir, ModelPullError, pullModel, type CachedModel } from "@attr-rag/engine";
import { CliError } from "../cliError.js";
import { progressBar } from "@attr-rag/telemetry";

interface PullFlags {
  sha256?: string;
  dir?: string;
  name?: string;
  force?: boolean;
  json?: boolean;
}

const MB = 1024 * 1024;

export function registerModelsPull(models: Command): void {
  models
    .command("pull")
    .summary("download a GGUF into the model cache (resumable, checksummed)")
    .description(
      [
        "Downloads SOURCE into the model cache (~/.cache/attr-rag/models, or $ATTR_RAG_MODELS, or --dir) so that its file",
        "name works wherever a --model path does. SOURCE is an http(s) URL or hf:OWNER/REPO/FILE.gguf (a file of a",
        "Hugging Face model repository, main revision; HF_TOKEN is sent for gated ones, HF_ENDPOINT moves the hub).",
        "",
        "Bytes go to NAME.gguf.partial; an interrupted pull resumes from there (HTTP Range) when run again, or starts",
        "over when the server cannot resume. The file gets its final name only once its size, GGUF header and sha256",
        "(--sha256, or the hub's own checksum for hf: files) are right; a wrong checksum deletes the download.",
        "",
        "Example:",
        "  attr-rag models pull hf:Qwen/Qwen2.5-7B-Instruct-GGUF/qwen2.5-7b-instruct-q4_k_m.gguf",
        "  attr-rag ask \"...\" --store DIR --model qwen2.5-7b-instruct-q4_k_m",
      ].join("\n"),
    )
    .argument("<source>", "URL or hf:OWNER/REPO/FILE.gguf")
    .option("--sha256 <hex>", "expected sha256 of the file")
    .option("--dir <dir>", "download into this directory instead of the model cache")
    .option("--name <file.gguf>", "file name to save as (default: the URL's)")
    .option("--force", "download again even if the file is already there")
    .option("--json", "print the result as JSON")
    .action(async (source: string, o: PullFlags) => {
      const controller = new AbortController();
      const onSigint = () => controller.abort();
      process.once("SIGINT", onSigint);
      let bar: ReturnType<typeof progressBar> | undefined;
      try {
        const result = await pullModel({
          source,
          ...(o.sha256 !== undefined ? { sha256: o.sha256 } : {}),
          ...(o.dir !== undefined ? { dir: o.dir } : {}),
          ...(o.name !== undefined ? { name: o.name } : {}),
          force: o.force === true,
          signal: controller.signal,
          onNote: (line) => process.stderr.write(`pull: ${line}\n`),
          onProgress: ({ received, total }) => {
            bar ??= progressBar("pull");
            const done = Math.floor(received / MB);
            bar.update(done, total !== undefined ? Math.ceil(total / MB) : done, "MB");
          },
        });
        bar?.done();
        if (o.json) {
          process.stdout.write(`${JSON.stringify(result)}\n`);
          return;
        }
        const check = result.verifiedBy === "none" ? "not checked (pass --sha256 to check it)" : `checked against ${result.verifiedBy}`;
        const verb = result.alreadyPresent ? "already present" : result.resumedFrom > 0 ? `downloaded (resumed at ${result.resumedFrom} bytes)` : "downloaded";
        process.stdout.write(`${result.path}: ${verb}, ${result.bytes} bytes, sha256 ${result.sha256} ${check}\n`);
        process.stdout.write(`use it as --model ${result.name.replace(/\.gguf$/, "")}\n`);
      } catch (err) {
        bar?.done();
        if (err instanceof EngineArgumentError) throw new CliError(err.message, 2, { cause: err });
        if (err instanceof ModelPullError) throw new CliError(err.message, controller.signal.aborted ? 130 : err.retryable ? 1 : 2, { cause: err });
        throw err;
      } finally {
        process.off("SIGINT", onSigint);
      }
    });
}

export function registerModelsList(models: Command): void {
  models
    .command("list")
    .summary("show the model cache with each model's architecture, size, quantization and context length")
    .option("--dir <dir>", "list this directory instead of the model cache")
    .option("--json", "print one JSON object")
    .action(async (o: { dir?: string; json?: boolean }) => {
      const dir = o.dir ?? modelCacheDir();
      const { models: found, partial } = await listCachedModels(dir);
      if (o.json) {
        process.stdout.write(`${JSON.stringify({ dir, models: found, partial })}\n`);
        return;
      }
      process.stdout.write(`model cache ${dir}\n`);
      if (found.length === 0 && partial.length === 0) {
        process.stdout.write("  (empty: `attr-rag models pull URL|hf:OWNER/REPO/FILE.gguf` adds models)\n");
        return;
      }
      const rows = found.map(row);
      const header = ["name", "architecture", "parameters", "quantization", "context", "size"];
      const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      for (const r of [header, ...rows]) process.stdout.write(`  ${r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()}\n`);
      for (const p of partial) process.stdout.write(`  ${p.name}: partial download, ${p.bytes} bytes; run the same pull again to resume\n`);
    });
}

function row(m: CachedModel): string[] {
  if (m.error !== undefined) return [m.name, `unreadable: ${m.error}`, "", "", "", size(m.bytes)];
  return [m.name, m.architecture ?? "?", m.parameters !== undefined ? count(m.parameters) : "?", m.quantization ?? "?", m.contextLength !== undefined ? String(m.contextLength) : "?", size(m.bytes)];
}

function count(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}K`;
  return String(n);
}

function size(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}
