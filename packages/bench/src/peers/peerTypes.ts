// What `attr-rag bench peers` hands each system and what each system hands back. Every system runs in its own
// process (our engine and node-llama-cpp in a Node child, llama-server as the server itself) so its peak
// RSS is its own, and every system gets the same token ids: the prompts are tokenized once, by the parent.
import type { DeviceCeiling } from "../engine/deviceCeiling.js";

/** Our engine's strategies the bench runs; kv-reuse is APPROXIMATE and labelled so everywhere. */
export const OUR_SYSTEMS = ["naive", "prefix-shared", "speculative", "kv-reuse"] as const;
/** The peers: node-llama-cpp with one LlamaCompletion per prompt, all at once, or one prompt at a time; llama-server likewise. */
export const PEER_SYSTEMS = ["node-llama-cpp", "node-llama-cpp-serial", "llama-server", "llama-server-serial"] as const;
export type OurSystem = (typeof OUR_SYSTEMS)[number];
export type PeerSystem = (typeof PEER_SYSTEMS)[number];
export type BenchSystem = OurSystem | PeerSystem;
export type PeerGpu = "cpu" | "cuda" | "vulkan";

export interface PeerWorkload {
  /** Absolute path of the GGUF every system loads. */
  model: string;
  /** The prompt as our engine's segments (token ids); prompt j + 1 leaves block j out, prompt 0 is A_full's. */
  segments: { prefix: number[]; blocks: number[][]; suffix: number[] };
  /** The n + 1 prompts as token ids, exactly as our naive strategy evaluates them (BOS included when the model adds one). */
  prompts: number[][];
  /** The model's BOS id when it adds one (node-llama-cpp prepends it itself), else null. */
  bos: number | null;
  maxTokens: number;
  threads: number;
  batchSize: number;
  /** KV cells per sequence (every system gets the same), and sequences = prompts.length. */
  sequenceCells: number;
  gpu: PeerGpu;
}

export interface SystemRun {
  system: BenchSystem;
  /** Wall time of the whole workload (all n + 1 answers), model load and warm-up excluded. */
  wall_ms: number;
  /** Tokens fed to llama_decode: prompt tokens not already in the KV cache, plus generated tokens fed back. */
  tokens_evaluated: number;
  /** llama_decode calls, where the system exposes them (null: it does not). */
  decode_calls: number | null;
  /** Each prompt's answer as token ids, end-of-generation excluded, in the order of PeerWorkload.prompts. */
  answers: number[][];
  /** Our engine only: top-1 minus top-2 logit at each step of each answer (naive's are the reference margins). */
  margins?: number[][];
  /** Peak resident memory of the system's process, MiB. */
  peak_rss_mib: number;
  /** Our engine only (the first of our systems to run): the device ceiling of this backend in this run. */
  ceiling?: DeviceCeiling;
  /** How the system was configured, in its own words (flags, options). */
  setup: string;
}
