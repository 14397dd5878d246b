import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { readGgufHeader } from "@attr-rag/engine";
import { CliError } from "../src/cliError.js";
import { parseSynthOptions, progressReporter, registerModelsCommand, runModelsSynth } from "../src/commands/models.js";

const dir = mkdtempSync(join(tmpdir(), "models-cmd-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const VOCAB_DIR = fileURLToPath(new URL("../../../native/.cache/llama.cpp/models", import.meta.url));

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
    const cases: [Parameters<typeof parseSynthOptions>[0], RegExp][] = [
      [{ out }, /--preset is required \(one of: tiny, bench, qwen2-0\.5b\)/],
      [{ preset: "huge", out }, /--preset must be one of tiny, bench, qwen2-0\.5b, got "huge"/],
      [{ preset: "tiny", arch: "gpt2", out }, /--arch must be one of qwen2, llama/],
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

  it.skipIf(!existsSync(VOCAB_DIR))("cli models synth - writes a tiny model, reports progress on stderr and returns the summary", async () => {
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
    for (const text of ["--preset <name>", "--arch <name>", "--quant <type>", "--seed <n>", "--out <file>", "--vocab-dir <dir>", "--force", "bench", "132.6M"]) {
      expect(help).toContain(text);
    }
  });
});
