// llama-server of our llama.cpp release on the bench workload: started here with the same model, threads,
// batch and cells per sequence, and asked over HTTP the way a pipeline would. `--parallel n+1` with every
// prompt sent at once (continuous batching, each slot prefilling its own prompt), or `--parallel 1` with
// the prompts one after another (cache_prompt then keeps what a prompt shares with the previous one).
// Greedy: temperature 0, top_k 1. Its /metrics give llama_decode calls; /proc gives its peak RSS.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { freePort } from "../freePort.js";
import type { PeerWorkload, SystemRun } from "./peerTypes.js";

export const LLAMA_SERVER_BUILD = "native/scripts/build-llama-server.sh";

interface Completion {
  tokens?: number[];
  timings?: { prompt_n: number; predicted_n: number };
}

/** The GPU backend module llama-server loads besides the CPU kernels beside it (same npm packages as ours). */
function gpuBackend(repoRoot: string, gpu: PeerWorkload["gpu"]): string | undefined {
  if (gpu === "cpu") return undefined;
  const pkg = `linux-x64-${gpu}`;
  const so = join(repoRoot, "node_modules", "@node-llama-cpp", pkg, "bins", pkg, `libggml-${gpu}.so`);
  if (!existsSync(so)) throw new Error(`${so} is missing: npm install --no-save @node-llama-cpp/${pkg}@3.22.1 (docs/engine.md, "GPU backends")`);
  return so;
}

async function waitHealthy(base: string, server: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`llama-server exited (${server.exitCode}) while loading:\n${log().slice(-2000)}`);
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`llama-server did not become healthy within 120 s:\n${log().slice(-2000)}`);
}

async function decodeCalls(base: string): Promise<number | null> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = /^llamacpp:n_decode_total\s+([0-9.e+]+)/m.exec(text);
  return m ? Number(m[1]) : null;
}

export async function runLlamaServer(serial: boolean, w: PeerWorkload, binary: string, repoRoot: string): Promise<SystemRun> {
  if (!existsSync(binary)) throw new Error(`${binary} is missing: build it once with \`${LLAMA_SERVER_BUILD}\` (about six minutes on 2 cores)`);
  const slots = serial ? 1 : w.prompts.length;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // The settings the report shows; the model and address are added apart (they say nothing about the run).
  const settings = [
    ...["--parallel", String(slots)],
    ...["-c", String(slots * w.sequenceCells), "-b", String(w.batchSize), "-ub", String(w.batchSize)],
    ...["-t", String(w.threads), "-tb", String(w.threads), "-ngl", w.gpu === "cpu" ? "0" : "999", "-fa", "off"],
    ...["--metrics", "--no-ui", "--cont-batching"],
  ];
  const args = ["-m", w.model, "--host", "127.0.0.1", "--port", String(port), ...settings];
  const backend = gpuBackend(repoRoot, w.gpu);
  const env = { ...process.env, LD_LIBRARY_PATH: [dirname(binary), process.env.LD_LIBRARY_PATH].filter(Boolean).join(":"), ...(backend ? { GGML_BACKEND_PATH: backend } : {}) };
  // What it will offload to, in its own words (a GPU run must not silently run on the CPU).
  const listed = spawnSync(binary, ["--list-devices"], { env, encoding: "utf8" });
  const listedDevices = `${listed.stdout}`.split("Available devices:")[1]?.trim().split("\n").map((l) => l.trim()).join("; ") ?? "unknown";
  const devices = listedDevices === "(none)" ? "CPU only" : listedDevices;
  if (w.gpu !== "cpu" && !/\w+\d+:/.test(devices)) throw new Error(`llama-server sees no ${w.gpu} device (--list-devices: ${devices}); check ${backend}`);
  const server = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"], env });
  let output = "";
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-64 * 1024);
  };
  server.stdout!.on("data", keep);
  server.stderr!.on("data", keep);
  try {
    await waitHealthy(base, server, () => output);
    // Its slots and KV layout as it logged them ("n_slots = 11, n_ctx_slot = 2048, kv_unified = 'false'").
    const slotsLine = /n_slots = .*/.exec(output)?.[0] ?? "";
    const complete = async (prompt: number[], nPredict: number): Promise<Completion> => {
      const res = await fetch(`${base}/completion`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt, n_predict: nPredict, temperature: 0, top_k: 1, cache_prompt: true, return_tokens: true, stream: false }),
      });
      if (!res.ok) throw new Error(`llama-server answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
      return (await res.json()) as Completion;
    };
    // Warm-up on a short prompt that shares no prefix with the workload's (no BOS), so no slot starts warm.
    await complete(w.prompts[0]!.slice(-16), 2);
    const callsBefore = await decodeCalls(base);
    const t0 = performance.now();
    const results: Completion[] = [];
    if (serial) for (const p of w.prompts) results.push(await complete(p, w.maxTokens));
    else results.push(...(await Promise.all(w.prompts.map((p) => complete(p, w.maxTokens)))));
    const wall = performance.now() - t0;
    const callsAfter = await decodeCalls(base);
    const hwm = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"));
    // Prompt tokens it evaluated (those cache_prompt did not keep) plus generated tokens fed back (all but the last).
    const evaluated = results.reduce((n, r) => n + (r.timings?.prompt_n ?? 0) + Math.max(0, (r.timings?.predicted_n ?? 0) - 1), 0);
    return {
      system: serial ? "llama-server-serial" : "llama-server",
      wall_ms: wall,
      tokens_evaluated: evaluated,
      decode_calls: callsBefore !== null && callsAfter !== null ? callsAfter - callsBefore : null,
      answers: results.map((r) => r.tokens ?? []),
      peak_rss_mib: hwm ? Number(hwm[1]) / 1024 : 0,
      setup: `llama-server (devices: ${devices}; ${slotsLine}) ${settings.join(" ")}; /completion with temperature 0, top_k 1, cache_prompt, ${serial ? "one prompt after another" : "every prompt at once"}`,
    };
  } finally {
    server.kill("SIGTERM");
    await new Promise<void>((r) => (server.exitCode !== null ? r() : server.once("exit", () => r())));
  }
}
