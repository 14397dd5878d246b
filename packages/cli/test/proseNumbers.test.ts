import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { docFiles, REPO_ROOT } from "../../../tools/bench/readme-tables.mjs";
import { measuredNumbers, splitProse, untracedNumbers } from "../../../tools/bench/prose-numbers.mjs";

/**
 * Numbers in README/docs prose that are settings or outside facts, not measurements. Each names the phrase
 * that holds it and where it comes from: a source file whose text must still say the same (so the docs cannot
 * drift from the code), a check computed here, or, for a fact about something we do not build, why.
 */
interface Setting {
  file: string;
  says: string;
  source?: [path: string, pattern: RegExp];
  check?: () => string;
  why?: string;
}

const SETTINGS: Setting[] = [
  { file: "README.md", says: "llama, 1.1 MiB, MIT", check: () => `${(statSync(join(REPO_ROOT, "examples/models/stories260K.gguf")).size / 2 ** 20).toFixed(1)} MiB` },
  { file: "README.md", says: "cmake ≥ 3.18", source: ["native/CMakeLists.txt", /cmake_minimum_required\(VERSION 3\.18\)/] },
  { file: "docs/troubleshooting.md", says: "cmake ≥ 3.18", source: ["native/CMakeLists.txt", /cmake_minimum_required\(VERSION 3\.18\)/] },
  { file: "docs/api.md", says: "(up to 5 s)", source: ["packages/gateway/src/server/startGatewayServer.ts", /shutdownGraceMs = 5_000/] },
  { file: "docs/commands.md", says: "(up to 5 s)", source: ["packages/index/src/service/startIndexServer.ts", /shutdownGraceMs = 5_000/] },
  { file: "docs/api.md", says: "above 65,536", source: ["packages/core/src/coalitions/coalitionOptions.ts", /MAX_SAMPLES = 65_536;/] },
  { file: "docs/attribution.md", says: "above 65,536", source: ["packages/core/src/coalitions/coalitionOptions.ts", /MAX_SAMPLES = 65_536;/] },
  { file: "docs/api.md", says: "Refreshes every 2 s", source: ["packages/web/src/console/pages/cluster.ts", /\}, 2_000\);/] },
  { file: "docs/asking.md", says: "cosine is ≥ 0.35", source: ["packages/gateway/src/pipeline/citations.ts", /MIN_CITATION_SIMILARITY = 0\.35;/] },
  { file: "docs/asking.md", says: "| 0.05 | elbow threshold", source: ["packages/cli/src/ask/askRequestOptions.ts", /elbow threshold \(default 0\.05\)/] },
  { file: "docs/asking.md", says: "drop > τ = 0.05", source: ["packages/cli/src/ask/askRequestOptions.ts", /elbow threshold \(default 0\.05\)/] },
  { file: "docs/asking.md", says: "| 0.01 | below this α", source: ["packages/cli/src/ask/askRequestOptions.ts", /context-ignored threshold \(default 0\.01\)/] },
  { file: "docs/asking.md", says: "all α < ε = 0.01", source: ["packages/cli/src/ask/askRequestOptions.ts", /context-ignored threshold \(default 0\.01\)/] },
  { file: "docs/asking.md", says: "to ≤ 1,000 characters", source: ["packages/core/src/chunking/chunkDocument.ts", /maxChars: 1000,/] },
  { file: "docs/evaluation.md", says: "30 chunks of ~1,000 characters", source: ["packages/core/src/chunking/chunkDocument.ts", /maxChars: 1000,/] },
  { file: "docs/asking.md", says: "λ = 0.9 for BM25", source: ["packages/index/src/search/fusionSettings.ts", /method: "convex", bm25Weight: 0\.9 \}/] },
  { file: "docs/retrieval.md", says: "0.9 × min-max", source: ["packages/index/src/search/fusionSettings.ts", /method: "convex", bm25Weight: 0\.9 \}/] },
  { file: "docs/retrieval.md", says: "BM25 + 0.1 × normalised cosine", source: ["packages/index/src/search/fusionSettings.ts", /method: "convex", bm25Weight: 0\.9 \}/] },
  { file: "docs/retrieval.md", says: "at 50k chunks", source: ["tools/bench/index-bench.mjs", /chunks: \{ type: "string", default: "50000" \}/] },
  { file: "docs/attribution.md", says: "within 1 % of", source: ["packages/core/src/coalitions/coalitionOptions.ts", /DEFAULT_TRUNCATION = 0\.01;/] },
  { file: "docs/attribution.md", says: "λ = 1 % of λ_max", source: ["packages/core/src/coalitions/coalitionOptions.ts", /DEFAULT_LASSO_RATIO = 0\.01;/] },
  // The convergence tolerances the coalition tests assert.
  { file: "docs/attribution.md", says: "at 4,096 samples", source: ["packages/core/test/coalitions.test.ts", /await error\(4096\)/] },
  { file: "docs/attribution.md", says: "Kernel SHAP 0.03, TMC 0.03 (no truncation) and 0.04 (default)", source: ["packages/core/test/coalitions.test.ts", /"kernel-shap" \}, 14, "shapley", 0\.03\][\s\S]*truncation: 0 \}, 10, "shapley", 0\.03\][\s\S]*"tmc-shapley" \}, 10, "shapley", 0\.04\]/] },
  { file: "docs/attribution.md", says: "0.03 against Shapley, Beta(16, 1) 0.08", source: ["packages/core/test/coalitions.test.ts", /betaBeta: 1 \}, 10, "shapley", 0\.03\][\s\S]*"beta-shapley" \}, 10, "beta16", 0\.08\]/] },
  { file: "docs/attribution.md", says: "(152k × 640", why: "the bench preset's width (640, PRESET_SHAPES) times the qwen2 vocabulary (151,936 tokens, docs/commands.md)" },
  { file: "docs/batches.md", says: "at least every 10 s", source: ["packages/gateway/src/server/batch/batchServiceImplementation.ts", /WATCH_HEARTBEAT_MS = 10_000;/] },
  { file: "docs/batches.md", says: "(100,000) items per batch", source: ["packages/gateway/src/config/gatewayConfig.ts", /maxBatchItems: 100_000,/] },
  { file: "docs/batches.md", says: "(64 MiB) per request", source: ["packages/gateway/src/config/gatewayConfig.ts", /maxMessageBytes: 64 \* 1024 \* 1024,/] },
  { file: "docs/batches.md", says: "gRPC's usual 4 MB", why: "gRPC's default receive limit (grpc-js and grpcio), not ours" },
  { file: "docs/batches.md", says: "1 h de-duplication", source: ["packages/gateway/src/batch/jetstream/batchStreams.ts", /ITEMS_DUPLICATE_WINDOW_MS = 3600 \* 1000;/] },
  { file: "docs/batches.md", says: "services every 10 s", source: ["packages/gateway/src/batch/workerBasedConcurrency.ts", /this\.#refresh\(\), 10_000\)/] },
  { file: "docs/commands.md", says: "(151,936 tokens)", why: "the size of the real qwen2 tokenizer the presets embed (its vocab-only GGUF)" },
  { file: "docs/commands.md", says: "FFN 1,792", source: ["packages/engine/src/synth/presets.ts", /bench: \{[^}]*embeddingLength: 640, blockCount: 8, feedForwardLength: 1792, headCount: 10, headCountKv: 2/] },
  { file: "docs/commands.md", says: "FFN 4,864", source: ["packages/engine/src/synth/presets.ts", /"qwen2-0\.5b": \{[^}]*embeddingLength: 896, blockCount: 24, feedForwardLength: 4864, headCount: 14, headCountKv: 2/] },
  { file: "docs/commands.md", says: "BM25 weight 1–32 × k 10, 30, 60", source: ["packages/cli/src/eval/tuneFusion.ts", /RRF_WEIGHTS: readonly number\[\] = \[1, 2, 4, 8, 16, 32\];/] },
  { file: "docs/commands.md", says: "(λ 0–1 by 0.05)", source: ["packages/cli/src/eval/tuneFusion.ts", /CONVEX_STEPS = 20;/] },
  { file: "docs/distributed.md", says: "remembered 15 s", source: ["packages/gateway/src/backends/rerankBackends.ts", /PRESENCE_TTL_MS = 15_000;/] },
  { file: "docs/distributed.md", says: "(within 10 s, tested)", source: ["packages/cli/test/distributed.test.ts", /expect\(outcome\.endedAt - killedAt\)\.toBeLessThan\(10_000\);/] },
  { file: "docs/engine.md", says: "builds weigh ~725 MB", why: "the unpacked sizes npm lists for @node-llama-cpp/linux-x64-cuda and -vulkan 3.22.1, not ours" },
  { file: "docs/engine.md", says: "at least 95 % of answers", source: ["packages/engine/test/occlusion.test.ts", /expect\(identical \/ total\)\.toBeGreaterThanOrEqual\(0\.95\);/] },
  { file: "docs/engine.md", says: "more than 80 % with it on", source: ["packages/engine/test/occlusionFlashAttention.test.ts", /expect\(identical \/ total\)\.toBeGreaterThan\(0\.8\);/] },
  { file: "docs/engine.md", says: "with 512 MiB", source: ["packages/engine/src/native/offloadPlan.ts", /OFFLOAD_MARGIN_BYTES = 512 \* 2 \*\* 20;/] },
  { file: "docs/engine.md", says: "has waited 2 s", source: ["native/src/DecodeScheduler.h", /kAgingMs = 2000;/] },
  { file: "docs/engine.md", says: "(or 50 ms have passed)", source: ["native/src/DecodeScheduler.cpp", /kGather = std::chrono::milliseconds\(50\);/] },
  { file: "docs/evaluation.md", says: "with 95 % percentile-bootstrap intervals, 2,000 resamples", source: ["packages/cli/src/eval/answers/answersSummary.ts", /resamples = 2000\)/] },
  { file: "docs/evaluation.md", says: "default 8,192 cells", source: ["packages/cli/src/commands/evalAnswers.ts", /"--judge-context <n>", "KV cells of the local judge's context", "8192"\)/] },
  { file: "docs/evaluation.md", says: "65,536 / 8 gives each 8,192 cells", source: ["docs/evaluation.md", /--context-size 65536 --sequences 8 /] },
  { file: "docs/models.md", says: "| ~4.7 GB |", why: "the size of the published GGUF file on Hugging Face" },
  { file: "docs/models.md", says: "| ~36 MB |", why: "the size of the published GGUF file on Hugging Face" },
  { file: "docs/models.md", says: "| ~0.6 GB |", why: "the size of the published GGUF file on Hugging Face" },
];

const doc = (file: string) => readFileSync(join(REPO_ROOT, file), "utf8");

describe("numbers in README and docs prose", () => {
  it("prose numbers - every measurement in prose is in a generated block of its document, or a declared setting", () => {
    const { missing, unusedSettings } = untracedNumbers(SETTINGS);
    // Each entry says where the number is and what to do: regenerate it from bench/results/, declare it, or drop it.
    expect(missing.map((m) => `${m.file}:${m.line}: ${m.number} (${m.text})`)).toEqual([]);
    expect(unusedSettings.map((s) => `${s.file}: ${s.says}`)).toEqual([]);
  });

  it("prose numbers - each declared setting still says what its source says", () => {
    for (const s of SETTINGS) {
      expect([s.source, s.check, s.why].filter((x) => x !== undefined).length, s.says).toBe(1);
      if (s.source) expect(doc(s.source[0]), `${s.file} "${s.says}" against ${s.source[0]}`).toMatch(s.source[1]);
      if (s.check) expect(s.says, s.file).toContain(s.check());
      if (s.why) expect(s.why.length, s.says).toBeGreaterThan(20);
    }
  });

  it("prose numbers - a number typed into prose from memory is caught; the same number rendered in the block passes", () => {
    const file = "docs/engine.md";
    const text = doc(file);
    // The drift the check exists for: the block says A_full alone took 12.1 s; prose once said 12.2 s.
    expect(text).toContain("A_full alone 12.1 s");
    const withProse = (line: string) => [{ file, text: `${text}\n${line}\n` }];
    const caught = untracedNumbers([], withProse("On `qwen2-0.5b` A_full alone takes 12.2 s, about 1.6× the rest.")).missing.filter((m) => m.text.includes("A_full alone takes"));
    expect(caught.map((m) => m.number)).toEqual(["12.2 s", "1.6×"]);
    const passes = untracedNumbers([], withProse("On `qwen2-0.5b` A_full alone takes 12.1 s.")).missing.filter((m) => m.text.includes("A_full alone takes"));
    expect(passes).toEqual([]);
    // Other documents' blocks do not vouch for a number: only its own page's.
    const elsewhere = untracedNumbers([], [{ file: "docs/other.md", text: "A_full alone takes 12.1 s.\n" }]).missing;
    expect(elsewhere.map((m) => m.number)).toEqual(["12.1 s"]);
  });

  it("prose numbers - code, names and versions are not prose measurements; units, decimals and separators are", () => {
    const { prose } = splitProse(
      [
        "Runs 1.5× faster in 3.2 s, 89 % of the time, ~7 ms, 10,279 tokens, 0.25 of naive.",
        "Not these: `--k 0.5 1.5×`, qwen2-0.5b, bge-small-en-v1.5, node-llama-cpp@3.22.1, k8s, 2026-11-22, 10 sets, k = 8.",
        "```",
        "12.5 s in a fence",
        "```",
        "<!-- generated:x -->",
        "9.9 s in a block",
        "<!-- /generated:x -->",
        "An inline span `over a",
        "line break 4.2 s` ends [a link](bench/results/x-1.5.json).",
      ].join("\n"),
    );
    expect(measuredNumbers(prose).map((n: { raw: string }) => n.raw)).toEqual(["1.5×", "3.2 s", "89 %", "~7 ms", "10,279", "0.25"]);
  });

  it("prose numbers - a setting whose source changed no longer vouches for the docs", () => {
    const moved = { file: "docs/distributed.md", says: "remembered 15 s", source: ["packages/gateway/src/backends/rerankBackends.ts", /PRESENCE_TTL_MS = 30_000;/] as [string, RegExp] };
    expect(doc(moved.source[0])).not.toMatch(moved.source[1]);
    // And every document the checker reads exists and has prose.
    for (const file of docFiles()) expect(splitProse(doc(file)).prose.join("").trim().length, file).toBeGreaterThan(0);
  });
});
