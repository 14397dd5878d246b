import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../bench/render/readme-tables.mjs";
import { markdownFiles, measuredNumbers, splitProse, staleSettings, untracedNumbers } from "../../bench/render/prose-numbers.mjs";

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

const doc = (file: string) => readFileSync(join(REPO_ROOT, file), "utf8");

/** "MIN–MAX UNIT" of a measure over the demo corpus's ten lab write-ups. */
function labWriteUps(measure: (d: { id: string; text: string }) => number, unit: string): string {
  const docs = doc("examples/demo-corpus/corpus.jsonl").trim().split("\n").map((l) => JSON.parse(l) as { id: string; text: string });
  const values = docs.filter((d) => d.id.startsWith("exp-")).map(measure);
  expect(values).toHaveLength(10);
  return `${Math.min(...values).toLocaleString("en-US")}–${Math.max(...values).toLocaleString("en-US")} ${unit}`;
}

const SETTINGS: Setting[] = [
  { file: "docs/asking.md", says: "a block supports a sentence (default 1.0)", source: ["packages/core/src/attribution/sentenceAttribution.ts", /DEFAULT_SENTENCE_THRESHOLD = 1\.0;/] },
  { file: "docs/attribution.md", says: "default **1.0 nat**", source: ["packages/core/src/attribution/sentenceAttribution.ts", /DEFAULT_SENTENCE_THRESHOLD = 1\.0;/] },
  { file: "docs/attribution.md", says: "differs by up to 1.9e-3 nats per token", source: ["packages/engine/test/gpu/exactness.test.ts", /differs by up to 1\.9e-3 nats per token on lavapipe \(measured\)/] },
  { file: "docs/attribution.md", says: "within 5e-3 of it", source: ["packages/engine/test/gpu/exactness.test.ts", /toBeLessThan\(5e-3\)/] },
  { file: "docs/attribution.md", says: "within 1e-4 nats for every token and every sentence", source: ["packages/engine/test/answerScores.test.ts", /for \(const d of diffs\) expect\(d\)\.toBeLessThan\(1e-4\);/] },
  { file: "docs/engine.md", says: "(608 KB a row for qwen2's 151,936 tokens)", check: () => `(${Math.round((151_936 * 4) / 1000)} KB a row for qwen2's ${(151_936).toLocaleString("en-US")} tokens)` },
  { file: "docs/engine.md", says: "margins within 1e-5 relative and log-probabilities within 1e-4", source: ["packages/engine/test/devicePicks.test.ts", /toBeLessThanOrEqual\(1e-5 \* Math\.max[\s\S]*expectClose\(sb\.full, sa\.full, 1e-4\)/] },
  { file: "docs/engine.md", says: "sized at 4 × vocabulary × the", why: "llama.cpp's output_reserve (src/llama-context.cpp of our pinned release): logits, backend-sampled logits and probabilities, candidates" },
  { file: "docs/engine.md", says: "(about 1.2 GB at 512 outputs and 151,936 tokens)", check: () => `(about ${((4 * 4 * 151_936 * 512) / 1e9).toFixed(1)} GB at 512 outputs and ${(151_936).toLocaleString("en-US")} tokens)` },
  { file: "README.md", says: "llama, 1.1 MiB, MIT", check: () => `${(statSync(join(REPO_ROOT, "examples/models/stories260K.gguf")).size / 2 ** 20).toFixed(1)} MiB` },
  { file: "docs/benchmarks.md", says: "strategy at 1.7× the faster peer's wall or better", why: "the goal issue 51 set for bench peers on bench-f16 (a peer that prefills every prompt does 1.72× our tokens), not a measurement" },
  { file: "docs/benchmarks.md", says: "Reaching 1.7× its wall", why: "the same goal of issue 51 for bench peers on bench-f16, quoted to say what reaching it would take" },
  { file: "README.md", says: "cmake ≥ 3.18", source: ["native/CMakeLists.txt", /cmake_minimum_required\(VERSION 3\.18\)/] },
  { file: "docs/troubleshooting.md", says: "cmake ≥ 3.18", source: ["native/CMakeLists.txt", /cmake_minimum_required\(VERSION 3\.18\)/] },
  { file: "docs/api.md", says: "(up to 5 s)", source: ["packages/gateway/src/server/startGatewayServer.ts", /shutdownGraceMs = 5_000/] },
  { file: "docs/api.md", says: "with no call for 5 minutes is closed", source: ["packages/gateway/src/server/startGatewayServer.ts", /"grpc\.max_connection_idle_ms": 300_000,/] },
  { file: "docs/api.md", says: "pinged every 2 minutes", source: ["packages/gateway/src/server/startGatewayServer.ts", /"grpc\.keepalive_time_ms": 120_000,/] },
  { file: "docs/api.md", says: "body is at most 4 MiB", source: ["packages/gateway/src/http/startHttpFace.ts", /SMALL_BODY_BYTES = 4 \* 1024 \* 1024;/] },
  { file: "docs/api.md", says: "arrive within 15 s", source: ["packages/gateway/src/http/startHttpFace.ts", /server\.headersTimeout = 15_000;/] },
  { file: "docs/api.md", says: "at most 64 KiB more", source: ["packages/gateway/src/http/startHttpFace.ts", /DRAIN_BYTES = 64 \* 1024;/] },
  { file: "docs/api.md", says: "20 refused 60 MiB uploads", source: ["packages/gateway/test/server.security.test.ts", /60 \* 1024 \* 1024\);[\s\S]*length: 20 \}, \(\) => post\(\["-H", "Expect:"\]\)/] },
  { file: "docs/commands.md", says: "(up to 5 s)", source: ["packages/index/src/service/startIndexServer.ts", /shutdownGraceMs = 5_000/] },
  { file: "docs/distributed.md", says: "at most 4,096 vectors scores every vector", source: ["packages/index/src/vectors/VectorIndex.ts", /EXHAUSTIVE_SEARCH_MAX = 4_096;/] },
  { file: "docs/distributed.md", says: "(default 1000) or", source: ["packages/index/src/nats/replicaLag.ts", /DEFAULT_LAG_LIMITS: ReplicaLagLimits = \{ entries: 1_000, seconds: 5 \}/] },
  { file: "docs/distributed.md", says: "(ids, order, scores to 1e-9)", source: ["packages/index/test/sharded.test.ts", /1e-9 \* Math\.max\(1, Math\.abs\(a\), Math\.abs\(b\)\)/] },
  { file: "docs/api.md", says: "above 65,536", source: ["packages/core/src/coalitions/coalitionOptions.ts", /MAX_SAMPLES = 65_536;/] },
  { file: "docs/attribution.md", says: "above 65,536", source: ["packages/core/src/coalitions/coalitionOptions.ts", /MAX_SAMPLES = 65_536;/] },
  { file: "docs/api.md", says: "Refreshes every 2 s", source: ["packages/web/src/console/pages/cluster.ts", /const REFRESH_MS = 2_000;/] },
  { file: "docs/asking.md", says: "cosine is ≥ 0.35", source: ["packages/gateway/src/pipeline/citations.ts", /MIN_CITATION_SIMILARITY = 0\.35;/] },
  { file: "docs/asking.md", says: "| 0.05 | elbow threshold", source: ["packages/core/src/selection/selectionOptions.ts", /^ {2}tau: 0\.05,$/m] },
  { file: "docs/asking.md", says: "drop > τ = 0.05", source: ["packages/core/src/selection/selectionOptions.ts", /^ {2}tau: 0\.05,$/m] },
  { file: "docs/asking.md", says: "| 0.01 | below this α", source: ["packages/core/src/selection/selectionOptions.ts", /^ {2}epsilon: 0\.01,$/m] },
  { file: "docs/asking.md", says: "all α < ε = 0.01", source: ["packages/core/src/selection/selectionOptions.ts", /^ {2}epsilon: 0\.01,$/m] },
  // The configuration table's defaults (the gateway's config test also reads the table).
  { file: "docs/asking.md", says: "| 32768 | generator KV cells", source: ["packages/gateway/src/config/gatewayConfig.ts", /contextSize: 32_768,/] },
  { file: "docs/asking.md", says: "| 4000 | server limit: question length", source: ["packages/gateway/src/config/gatewayConfig.ts", /maxQuestionChars: 4_000,/] },
  { file: "docs/asking.md", says: "| 4096 | server limit: max_tokens", source: ["packages/gateway/src/config/gatewayConfig.ts", /maxMaxTokens: 4_096,/] },
  { file: "docs/asking.md", says: "| 200000 | server limit: characters", source: ["packages/gateway/src/config/gatewayConfig.ts", /maxAttributeChars: 200_000,/] },
  { file: "docs/asking.md", says: "| 100000 | server limit: items in one batch", source: ["packages/gateway/src/config/gatewayConfig.ts", /maxBatchItems: 100_000,/] },
  { file: "docs/asking.md", says: "| 86400 | batch webhooks: seconds", source: ["packages/gateway/src/config/gatewayConfig.ts", /webhookRetryFor: 86_400,/] },
  { file: "docs/asking.md", says: "| 1000 | batch webhooks: first retry", source: ["packages/gateway/src/config/gatewayConfig.ts", /webhookBackoffMs: 1_000,/] },
  { file: "docs/batches.md", says: "complete answer within 10 s", source: ["packages/gateway/src/config/gatewayConfig.ts", /webhookAttemptTimeoutMs: 10_000,/] },
  { file: "docs/asking.md", says: "| 10000 | batch webhooks: ms one", source: ["packages/gateway/src/config/gatewayConfig.ts", /webhookAttemptTimeoutMs: 10_000,/] },
  { file: "docs/batches.md", says: "1 s, doubling up to 10 minutes", source: ["packages/batch/src/webhooks/attemptWebhook.ts", /const MAX_BACKOFF_MS = 600_000;/] },
  { file: "docs/asking.md", says: "| 67108864 | server limit: bytes", source: ["packages/gateway/src/config/gatewayConfig.ts", /maxMessageBytes: 64 \* 1024 \* 1024,/] },
  { file: "docs/asking.md", says: "to ≤ 1,000 characters", source: ["packages/core/src/chunking/chunkDocument.ts", /maxChars: 1000,/] },
  { file: "docs/evaluation.md", says: "30 chunks of ~1,000 characters", source: ["packages/core/src/chunking/chunkDocument.ts", /maxChars: 1000,/] },
  { file: "docs/asking.md", says: "λ = 0.9 for BM25", source: ["packages/index/src/search/fusionSettings.ts", /method: "convex", bm25Weight: 0\.9 \}/] },
  { file: "docs/retrieval.md", says: "0.9 × min-max", source: ["packages/index/src/search/fusionSettings.ts", /method: "convex", bm25Weight: 0\.9 \}/] },
  { file: "docs/retrieval.md", says: "BM25 + 0.1 × normalised cosine", source: ["packages/index/src/search/fusionSettings.ts", /method: "convex", bm25Weight: 0\.9 \}/] },
  { file: "docs/retrieval.md", says: "the changes are 5% of the index or 5 minutes old", source: ["packages/index/src/vectors/chunkVectors.ts", /SAVE_GROWTH = 0\.05;[\s\S]*SAVE_INTERVAL_MS = 5 \* 60_000;/] },
  { file: "docs/retrieval.md", says: "(IDF 1e-6 in FTS5", source: ["packages/index/src/search/bm25Stats.ts", /return idf <= 0 \? 1e-6 : idf;/] },
  { file: "docs/retrieval.md", says: "a batch of 8,192 chunks", source: ["packages/index/src/sqlite/termPostings.ts", /POSTINGS_BATCH = 8192;/] },
  { file: "docs/retrieval.md", says: "up to 150,000 postings", source: ["packages/index/src/search/bm25TopK.ts", /OWN_SCAN = 150_000;/] },
  { file: "docs/retrieval.md", says: "at 50k chunks", source: ["packages/bench/scripts/index-bench.mjs", /chunks: \{ type: "string", default: "50000" \}/] },
  { file: "docs/attribution.md", says: "within 1 % of", source: ["packages/core/src/coalitions/coalitionOptions.ts", /DEFAULT_TRUNCATION = 0\.01;/] },
  { file: "docs/attribution.md", says: "λ = 1 % of λ_max", source: ["packages/core/src/coalitions/coalitionOptions.ts", /DEFAULT_LASSO_RATIO = 0\.01;/] },
  // The tolerances the tests assert.
  { file: "docs/attribution.md", says: "equals exact Shapley within 1e-9", source: ["packages/core/test/coalitions.test.ts", /expect\(maxAbsDiff\(kernel\.scores, exact\)\)\.toBeLessThan\(1e-9\);/] },
  { file: "docs/commands.md", says: "to 1e-9 on published examples", source: ["packages/core/test/metrics/fixtures.ts", /export const TOLERANCE = 1e-9;/] },
  { file: "docs/distributed.md", says: "α table (to 1e-9)", source: ["packages/cli/test/distributed.test.ts", /scores\[k\]!\.alpha\)\)\.toBeLessThanOrEqual\(1e-9\)/] },
  { file: "docs/distributed.md", says: "(re-rank scores to 1e-6)", source: ["packages/cli/test/distributedReranker.test.ts", /embedded\.sets\[i\]!\.score\), s\.setId\)\.toBeLessThanOrEqual\(1e-6\)/] },
  { file: "docs/engine.md", says: "alone within 1e-3 nats", source: ["packages/engine/test/scoring.test.ts", /which !== "stories260K" \? 1e-2 : 1e-3;/] },
  { file: "docs/engine.md", says: "sums, within 1e-2.", source: ["packages/engine/test/scoring.test.ts", /which !== "stories260K" \? 1e-2 : 1e-3;/] },
  { file: "docs/attribution.md", says: "at 4,096 samples", source: ["packages/core/test/coalitions.test.ts", /await error\(4096\)/] },
  { file: "docs/attribution.md", says: "Kernel SHAP 0.03, TMC 0.03 (no truncation) and 0.04 (default)", source: ["packages/core/test/coalitions.test.ts", /"kernel-shap" \}, 14, "shapley", 0\.03\][\s\S]*truncation: 0 \}, 10, "shapley", 0\.03\][\s\S]*"tmc-shapley" \}, 10, "shapley", 0\.04\]/] },
  { file: "docs/attribution.md", says: "0.03 against Shapley, Beta(16, 1) 0.08", source: ["packages/core/test/coalitions.test.ts", /betaBeta: 1 \}, 10, "shapley", 0\.03\][\s\S]*"beta-shapley" \}, 10, "beta16", 0\.08\]/] },
  { file: "docs/attribution.md", says: "(152k × 640", why: "the bench preset's width (640, PRESET_SHAPES) times the qwen2 vocabulary (151,936 tokens, docs/commands.md)" },
  { file: "docs/batches.md", says: "at least every 10 s", source: ["packages/gateway/src/server/batch/batchServiceImplementation.ts", /WATCH_HEARTBEAT_MS = 10_000;/] },
  { file: "docs/batches.md", says: "(100,000) items per batch", source: ["packages/gateway/src/config/gatewayConfig.ts", /maxBatchItems: 100_000,/] },
  { file: "docs/batches.md", says: "(64 MiB) per request", source: ["packages/gateway/src/config/gatewayConfig.ts", /maxMessageBytes: 64 \* 1024 \* 1024,/] },
  { file: "docs/batches.md", says: "gRPC's usual 4 MB", why: "gRPC's default receive limit (grpc-js and grpcio), not ours" },
  { file: "docs/batches.md", says: "1 h de-duplication", source: ["packages/batch/src/jetstream/batchStreams.ts", /ITEMS_DUPLICATE_WINDOW_MS = 3600 \* 1000;/] },
  { file: "docs/batches.md", says: "(up to 5 times for", source: ["packages/batch/src/BatchRunner.ts", /item\.attempt < \(this\.o\.maxAttempts \?\? 5\)/] },
  { file: "docs/batches.md", says: "services every 10 s", source: ["packages/batch/src/workerBasedConcurrency.ts", /this\.#refresh\(\), 10_000\)/] },
  { file: "docs/commands.md", says: "(151,936 tokens)", why: "the size of the real qwen2 tokenizer the presets embed (its vocab-only GGUF)" },
  { file: "docs/commands.md", says: "FFN 1,792", source: ["packages/engine/src/synth/presets.ts", /bench: \{[^}]*embeddingLength: 640, blockCount: 8, feedForwardLength: 1792, headCount: 10, headCountKv: 2/] },
  { file: "docs/commands.md", says: "FFN 4,864", source: ["packages/engine/src/synth/presets.ts", /"qwen2-0\.5b": \{[^}]*embeddingLength: 896, blockCount: 24, feedForwardLength: 4864, headCount: 14, headCountKv: 2/] },
  { file: "docs/commands.md", says: "BM25 weight 1–32 × k 10, 30, 60", source: ["packages/eval/src/tuneFusion.ts", /RRF_WEIGHTS: readonly number\[\] = \[1, 2, 4, 8, 16, 32\];/] },
  { file: "docs/commands.md", says: "(λ 0–1 by 0.05)", source: ["packages/eval/src/tuneFusion.ts", /CONVEX_STEPS = 20;/] },
  { file: "docs/distributed.md", says: "remembered 15 s", source: ["packages/gateway/src/backends/rerankBackends.ts", /PRESENCE_TTL_MS = 15_000;/] },
  { file: "docs/distributed.md", says: "remembered for 15 s", source: ["packages/worker/src/nats/workerEmbedder.ts", /PRESENCE_TTL_MS = 15_000;/] },
  { file: "docs/distributed.md", says: "unanswered for 120 s", source: ["packages/worker/src/nats/workerEmbedder.ts", /JOB_TIMEOUT_MS = 120_000;/] },
  { file: "docs/distributed.md", says: "(within 10 s, tested)", source: ["packages/cli/test/distributed.test.ts", /expect\(outcome\.endedAt - killedAt\)\.toBeLessThan\(10_000\);/] },
  { file: "docs/engine.md", says: "at least 95 % of answers", source: ["packages/engine/test/occlusion.test.ts", /expect\(identical \/ total\)\.toBeGreaterThanOrEqual\(0\.95\);/] },
  { file: "docs/engine.md", says: "more than 80 % with it on", source: ["packages/engine/test/occlusionFlashAttention.test.ts", /expect\(identical \/ total\)\.toBeGreaterThan\(0\.8\);/] },
  { file: "docs/engine.md", says: "with 512 MiB", source: ["packages/engine/src/native/offloadPlan.ts", /OFFLOAD_MARGIN_BYTES = 512 \* 2 \*\* 20;/] },
  { file: "docs/engine.md", says: "has waited 2 s", source: ["native/src/DecodeScheduler.h", /kAgingMs = 2000;/] },
  { file: "docs/engine.md", says: "(or 50 ms have passed)", source: ["native/src/DecodeScheduler.cpp", /kGather = std::chrono::milliseconds\(50\);/] },
  { file: "docs/evaluation.md", says: "with 95 % percentile-bootstrap intervals, 2,000 resamples", source: ["packages/eval/src/answers/answersSummary.ts", /resamples = 2000\)[\s\S]*confidence: 0\.95,/] },
  { file: "docs/evaluation.md", says: "default 8,192 cells", source: ["packages/cli/src/commands/evalAnswers.ts", /"--judge-context <n>", "KV cells of the local judge's context", "8192"\)/] },
  { file: "docs/evaluation.md", says: "65,536 / 8 gives each 8,192 cells", source: ["docs/evaluation.md", /--context-size 65536 --sequences 8 /] },
  { file: "docs/layout.md", says: "the CLI over 4,500 lines", source: ["packages/cli/test/packageLayout.test.ts", /expect\(byName\.get\("@attr-rag\/cli"\)!\.lines\)\.toBeLessThanOrEqual\(4_500\);/] },
  { file: "docs/layout.md", says: "the gateway over 5,500", source: ["packages/cli/test/packageLayout.test.ts", /expect\(byName\.get\("@attr-rag\/gateway"\)!\.lines\)\.toBeLessThanOrEqual\(5_500\);/] },
  { file: "docs/models.md", says: "| ~4.7 GB |", why: "the size of the published GGUF file on Hugging Face" },
  { file: "docs/models.md", says: "| ~36 MB |", why: "the size of the published GGUF file on Hugging Face" },
  { file: "docs/models.md", says: "| ~0.6 GB |", why: "the size of the published GGUF file on Hugging Face" },
  { file: "examples/demo-corpus/README.md", says: "runs to 2,867–3,181 characters", check: () => labWriteUps((d) => d.text.length, "characters") },
  { file: "clients/python/README.md", says: ">= 3.15 (", source: ["clients/python/generate_stubs.py", /MIN_RELEASE = 15  # protoc 3\.15/] },
  { file: "docs/api.md", says: ">= 3.15 if there is one", source: ["clients/python/generate_stubs.py", /MIN_RELEASE = 15  # protoc 3\.15/] },
  { file: "clients/go/README.md", says: "timestamps within 5 minutes", source: ["clients/go/attrrag/webhook.go", /const WebhookTolerance = 5 \* time\.Minute/] },
  { file: "clients/go/README.md", says: "waits of 200 ms ×2 per retry up to 5 s, each spread by ±20 %", source: ["clients/go/attrrag/retry.go", /InitialBackoff: 200 \* time\.Millisecond, MaxBackoff: 5 \* time\.Second, Multiplier: 2, Jitter: 0\.2\}/] },
  { file: "clients/go/README.md", says: "bookworm: Go 1.19,", source: ["clients/go/go.mod", /^go 1\.19$/m] },
  { file: "docs/distributed.md", says: "keeps trying for up to 60 s", source: ["packages/nats/src/connect.ts", /export const ROLE_NATS_WAIT_MS = 60_000;/] },
  { file: "docs/operations.md", says: "stays under 1.5× that of the first quarter plus 128 MiB", source: ["packages/core/src/soak/checkHistory.ts", /RSS_GROWTH = \{ factor: 1\.5, plusBytes: 128 \* 2 \*\* 20 \}/] },
  { file: "docs/api.md", says: "bookworm's Go 1.19 and", source: ["clients/go/go.mod", /^go 1\.19$/m] },
  {
    file: "tools/reference/README.md",
    says: "more than 2,000 words",
    check: () => `more than ${(Math.floor(JSON.parse(doc("packages/core/test/metrics/fixtures/cases.json")).stemWords.length / 1000) * 1000).toLocaleString("en-US")} words`,
  },
];


describe("numbers in README and docs prose", () => {
  it("prose numbers - every measurement in prose is in a generated block of its document, or a declared setting", () => {
    const { missing, unusedSettings } = untracedNumbers(SETTINGS);
    // Each entry says where the number is and what to do: regenerate it from bench/results/, declare it, or drop it.
    expect(missing.map((m) => `${m.file}:${m.line}: ${m.number} (${m.text})`)).toEqual([]);
    expect(unusedSettings.map((s) => `${s.file}: ${s.says}`)).toEqual([]);
  });

  it("prose numbers - each declared setting still says what its source says", () => {
    expect(staleSettings(SETTINGS).map((s) => `${s.file} "${s.says}": ${s.problem}`)).toEqual([]);
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
        "Also 8e-3 nats, 4–16 % and 2-3× more, **1.49×**, _2.5×_, 0.20/2.47×, 1147 chunks, 3x and 5 seconds.",
        "Not these: `--k 0.5 1.5×`, qwen2-0.5b, Qwen2.5-7B, bge-small-en-v1.5, node-llama-cpp@3.22.1, k8s, 2026-11-22, 10 sets, k = 8, 150-token sets, a/b.",
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
    expect(measuredNumbers(prose).map((n: { raw: string }) => n.raw)).toEqual([
      ...["1.5×", "3.2 s", "89 %", "~7 ms", "10,279", "0.25"],
      ...["8e-3", "4 %", "16 %", "2 ×", "3×", "1.49×", "2.5×", "0.20", "2.47×", "1147", "3x", "5 seconds"],
    ]);
  });

  it("prose numbers - a setting whose source changed, whose check disagrees or that gives no evidence is stale", () => {
    const file = "docs/distributed.md";
    const says = "remembered 15 s";
    const code = "const PRESENCE_TTL_MS = 30_000;\n"; // the constant changed, the docs did not
    const stale = staleSettings(
      [
        { file, says, source: ["rerankBackends.ts", /PRESENCE_TTL_MS = 15_000;/] as [string, RegExp] },
        { file, says, check: () => "remembered 30 s" },
        { file, says },
        { file, says, why: "trust me" },
      ],
      () => code,
    );
    expect(stale.map((s) => s.problem)).toEqual([
      "rerankBackends.ts no longer matches /PRESENCE_TTL_MS = 15_000;/",
      'the phrase does not contain "remembered 30 s", which is what the check computes now',
      "needs exactly one of source, check or why",
      "the reason is too short to say where the number comes from",
    ]);
    expect(staleSettings([{ file, says, source: ["rerankBackends.ts", /PRESENCE_TTL_MS = 30_000;/] as [string, RegExp] }], () => code)).toEqual([]);
    // Every Markdown file is read, not only README.md and docs/.
    expect(markdownFiles()).toEqual(expect.arrayContaining(["README.md", "docs/engine.md", "examples/demo-corpus/README.md", "tools/reference/README.md"]));
    expect(markdownFiles().some((f) => f.includes("node_modules"))).toBe(false);
  });
});
