import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { readGgufHeader, shippedModelPath } from "@attr-rag/engine";
import { CliError } from "../src/cliError.js";
import { parseSynthOptions, progressReporter, registerModelsCommand, runModelsSynth } from "../src/commands/models.js";
import { runCli } from "./helpers/runCli.js";

const TEST_SHIPPED = shippedModelPath();

const dir = mkdtempSync(join(tmpdir(), "models-cmd-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cliError(fn: () => unknown): CliError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CliError) return err;
    throw err;
  }
  throw new Error("expected a CliError");
}

describe("attr-rag models synth", () => {
  it("cli models synth - validates options: presets, archs, quants, seeds and --out, each a usage error (exit 2)", () => {
    const out = join(dir, "m.gguf");
    expect(parseSynthOptions({ preset: "tiny", out })).toEqual({ preset: "tiny", arch: "qwen2", quant: "q8_0", seed: 1, out, vocabDir: undefined, force: false });
    expect(parseSynthOptions({ preset: "bench", arch: "llama", quant: "f16", seed: "4294967295", out })).toMatchObject({ arch: "llama", quant: "f16", seed: 4294967295 });
    expect(parseSynthOptions({ preset: "reranker-tiny", out })).toMatchObject({ preset: "reranker-tiny", arch: "bert" });
    const cases: [Parameters<typeof parseSynthOptions>[0], RegExp][] = [
      [{ out }, /--preset is required \(one of: tiny, bench, qwen2-0\.5b, reranker-tiny\)/],
      [{ preset: "huge", out }, /--preset must be one of tiny, bench, qwen2-0\.5b, reranker-tiny, got "huge"/],
      [{ preset: "tiny", arch: "gpt2", out }, /--arch must be one of qwen2, llama, bert/],
      [{ preset: "tiny", arch: "bert", out }, /--preset tiny is made in qwen2 or llama, not --arch bert/],
      [{ preset: "reranker-tiny", arch: "llama", out }, /--preset reranker-tiny is made in bert, not --arch llama/],
      [{ preset: "tiny", quant: "q4_0", out }, /--quant must be one of f16, q8_0/],
      [{ preset: "tiny", seed: "-1", out }, /--seed must be an integer from 0 to 4294967295/],
      [{ preset: "tiny", seed: "1.5", out }, /--seed/],
      [{ preset: "tiny", seed: "4294967296", out }, /--seed/],
      [{ preset: "tiny" }, /--out FILE.gguf is required/],
    ];
    for (const [options, message] of cases) {
      const err = cliError(() => parseSynthOptions(options));
      expect(err.message).toMatch(message);
      expect(err.exitCode).toBe(2);
    }
  });

  it("cli models synth - refuses to overwrite an existing file unless --force", () => {
    const existing = join(dir, "existing.gguf");
    writeFileSync(existing, "keep me");
    expect(cliError(() => parseSynthOptions({ preset: "tiny", out: existing })).message).toMatch(/already exists; pass --force/);
    expect(parseSynthOptions({ preset: "tiny", out: existing, force: true }).force).toBe(true);
  });

  it("cli models synth - progress lines every 10% when stderr is not a terminal, ending at 100%", () => {
    const lines: string[] = [];
    const report = progressReporter((t) => lines.push(t), false);
    for (let bytes = 0; bytes <= 1000; bytes += 7) report({ tensorIndex: 1, tensorCount: 3, tensorName: "w", bytesWritten: bytes, totalBytes: 1000 });
    report({ tensorIndex: 3, tensorCount: 3, tensorName: "", bytesWritten: 1000, totalBytes: 1000 });
    expect(lines).toHaveLength(11);
    expect(lines[0]).toBe("synth: 0% (tensor 2/3 w)\n");
    expect(lines.at(-1)).toBe("synth: 100%\n");
  });

  it("cli models synth - writes a tiny model, reports progress on stderr and returns the summary", async () => {
    const out = join(dir, "nested", "tiny.gguf");
    let stderr = "";
    const model = await runModelsSynth({ preset: "tiny", arch: "llama", quant: "f16", seed: "3", out }, { write: (t) => void (stderr += t), isTTY: false });
    expect(model).toMatchObject({ path: out, arch: "llama", preset: "tiny", quant: "f16", seed: 3, parameterCount: 4_170_048 });
    expect(statSync(out).size).toBe(model.fileSize);
    expect(stderr.trim().split("\n").at(-1)).toMatch(/^synth: 100%/);
    const header = await readGgufHeader(out);
    expect(header.metadata.get("general.name")).toEqual({ type: "string", value: "attr-rag synthetic llama tiny" });
  });

  it("cli models synth - a missing vocab directory is a failure of the work (exit 1) that says how to fix it", async () => {
    const err = await runModelsSynth({ preset: "tiny", out: join(dir, "novocab.gguf"), vocabDir: join(dir, "nowhere") }, { write: () => {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(1);
    expect((err as CliError).message).toMatch(/build @attr-rag\/native first/);
  });

  it("cli models synth - --help describes the presets and every option", () => {
    let help = "";
    // Set before registering: subcommands copy output settings when they are created.
    const program = new Command("attr-rag").exitOverride().configureOutput({ writeOut: (t) => void (help += t) });
    registerModelsCommand(program);
    expect(() => program.parse(["node", "attr-rag", "models", "synth", "--help"])).toThrow();
    for (const text of ["--preset <name>", "--arch <name>", "--quant <type>", "--seed <n>", "--out <file>", "--vocab-dir <dir>", "--force", "bench", "132.6M", "reranker-tiny", "classification head"]) {
      expect(help).toContain(text);
    }
  });
});

describe("attr-rag models pull and list", () => {
  it("cli models pull - downloads from a URL into --dir, and models list shows it with its GGUF facts", async () => {
    const model = readFileSync(TEST_SHIPPED);
    const sha = createHash("sha256").update(model).digest("hex");
    const server = createServer((req, res) => {
      if (req.url === "/m/stories260K.gguf") res.writeHead(200, { "content-length": model.length }).end(model);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cache = join(dir, "cache");
    try {
      const pulled = await runCli(["models", "pull", `${origin}/m/stories260K.gguf`, "--dir", cache, "--sha256", sha]);
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(pulled.stdout).toBe(`${join(cache, "stories260K.gguf")}: downloaded, ${model.length} bytes, sha256 ${sha} checked against --sha256\nuse it as --model stories260K\n`);
      expect(pulled.stderr).toMatch(/^pull: 0\/2 MB/m);
      expect(readFileSync(join(cache, "stories260K.gguf")).equals(model)).toBe(true);

      const again = await runCli(["models", "pull", `${origin}/m/stories260K.gguf`, "--dir", cache, "--json"]);
      expect(JSON.parse(again.stdout)).toMatchObject({ alreadyPresent: true, sha256: sha, bytes: model.length });

      const missing = await runCli(["models", "pull", `${origin}/m/absent.gguf`, "--dir", cache]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toBe(`attr-rag: error: HTTP 404 Not Found from ${origin}/m/absent.gguf: no such file; check the URL\n`);
      const wrongSum = await runCli(["models", "pull", `${origin}/m/stories260K.gguf`, "--dir", join(dir, "other"), "--sha256", "e".repeat(64)]);
      expect(wrongSum.code).toBe(2);
      expect(wrongSum.stderr).toMatch(/sha256 mismatch for stories260K\.gguf: expected e{64} \(--sha256\), got [0-9a-f]{64}; the download was deleted/);

      const list = await runCli(["models", "list"], { ATTR_RAG_MODELS: cache });
      expect(list.code, list.stderr).toBe(0);
      const lines = list.stdout.trim().split("\n");
      expect(lines[0]).toBe(`model cache ${cache}`);
      expect(lines[1]).toMatch(/^ {2}name +architecture +parameters +quantization +context +size$/);
      expect(lines[2]).toMatch(/^ {2}stories260K\.gguf +llama +\d+\.\dK +F32 +2048 +1\.2 MB$/);
      const json = JSON.parse((await runCli(["models", "list", "--dir", cache, "--json"])).stdout);
      expect(json.models).toEqual([expect.objectContaining({ name: "stories260K.gguf", architecture: "llama", quantization: "F32", contextLength: 2048, bytes: model.length })]);
      const empty = await runCli(["models", "list", "--dir", join(dir, "empty-cache")]);
      expect(empty.stdout).toMatch(/\(empty: `attr-rag models pull/);
    } finally {
      server.close();
    }
  });
});
