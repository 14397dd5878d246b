import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials as grpcCredentials, status, type ServiceError as GrpcError } from "@grpc/grpc-js";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  AskEvent,
  AskRequest,
  AttrRagServiceClient,
  ClusterServiceClient,
  DEAD_LETTER_STREAM,
  DeadLetter,
  EngineStrategy,
  JOBS_STREAM,
  jobSubject,
  workerConsumer,
  SelectionFlag,
  type AttributionTable,
  type GetClusterResponse,
  type SelectionReason,
} from "@attr-rag/contracts";
import { connectNats, natsServerMissing } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { LocalCluster } from "@attr-rag/cluster";
import { PASSWORDS, startCluster } from "./helpers/cluster.js";
import { ingestDemoCorpus, runCli, TEST_MODEL } from "./helpers/runCli.js";

const dir = mkdtempSync(join(tmpdir(), "attr-rag-distributed-"));
const storeDistributed = join(dir, "store-d");
const storeEmbedded = join(dir, "store-e");
const QUESTIONS = ["Explain all the required steps of the acetaminophen synthesis.", "How do I collect oxygen gas over water?"];
/** The same engine settings for the workers and the embedded runs they are compared with. */
const ENGINE = ["--context-size", "16384", "--sequences", "4", "--threads", "1"];
const REQUEST = ["--k", "6", "--max-tokens", "12"];

const stages = (events: readonly AskEvent[]) => events.map((e) => e.stage!.$case).filter((s, i, all) => i === 0 || all[i - 1] !== s);
const first = <C extends string>(events: readonly AskEvent[], c: C) => events.find((e) => e.stage?.$case === c)?.stage?.value as never;
const parse = (out: string) => out.trim().split("\n").map((l) => AskEvent.fromJSON(JSON.parse(l)));

function askStream(address: string, request: AskRequest, onEvent: (e: AskEvent) => void = () => {}): Promise<{ events: AskEvent[]; error?: GrpcError; endedAt: number }> {
  const client = new AttrRagServiceClient(address, grpcCredentials.createInsecure());
  const events: AskEvent[] = [];
  return new Promise((resolve) => {
    const call = client.ask(request);
    call.on("data", (r: { event: AskEvent }) => {
      events.push(r.event);
      onEvent(r.event);
    });
    call.on("error", (error: GrpcError) => {
      client.close();
      resolve({ events, error, endedAt: performance.now() });
    });
    call.on("end", () => {
      client.close();
      resolve({ events, endedAt: performance.now() });
    });
  });
}

function getCluster(address: string): Promise<GetClusterResponse> {
  const client = new ClusterServiceClient(address, grpcCredentials.createInsecure());
  return new Promise<GetClusterResponse>((resolve, reject) => client.getCluster({}, (err, res) => (err ? reject(err) : resolve(res)))).finally(() => client.close());
}

let cluster: LocalCluster;

const missing = natsServerMissing();

/** The SIGKILL tests replace the worker they killed, pass or fail, so every test finds two live workers. */
async function replaceKilled(name: string | undefined): Promise<void> {
  if (name === undefined) return;
  await cluster.workers.find((w) => w.name === name)!.exited;
  await cluster.addWorker().waitFor(/serving model/);
}

beforeAll(async () => {
  if (missing !== undefined) return;
  const ingest = await ingestDemoCorpus(storeDistributed);
  expect(ingest.code, ingest.stderr).toBe(0);
  // The index service holds its store's lock: the embedded runs read an identical copy.
  cpSync(storeDistributed, storeEmbedded, { recursive: true });
  cluster = await startCluster({ store: storeDistributed, workers: 2, engine: ENGINE, ackWaitSeconds: 2, maxDeliver: 2, gatewayArgs: REQUEST });
}, 180_000);

afterAll(async () => {
  await cluster?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)(`distributed mode (real nats-server, one process per role)${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("distributed - the same selection, α table (1e-9) and final answer as embedded, for the same questions", async () => {
    for (const question of QUESTIONS) {
      const remote = await runCli(["ask", question, "--server", cluster.gatewayAddress, "--json", ...REQUEST]);
      expect(remote.code, remote.stderr + cluster.logs()).toBe(0);
      const local = await runCli(["ask", question, "--json", "--store", storeEmbedded, "--model", TEST_MODEL, ...ENGINE, ...REQUEST]);
      expect(local.code, local.stderr).toBe(0);
      const [d, e] = [parse(remote.stdout), parse(local.stdout)];
      expect(stages(d)).toEqual(stages(e));
      const [ta, tb] = [first(d, "attribution") as AttributionTable, first(e, "attribution") as AttributionTable];
      expect(ta.rows.map((r) => r.setId)).toEqual(tb.rows.map((r) => r.setId));
      ta.rows.forEach((row, i) => row.scores.forEach((s, k) => expect(Math.abs(s.alpha - tb.rows[i]!.scores[k]!.alpha)).toBeLessThanOrEqual(1e-9)));
      // Sentence-level attribution of A_full ran inside the workers' occlusion jobs: the same numbers.
      expect(ta.sentences!.sentences.length).toBeGreaterThan(0);
      expect(ta.sentences!.sentences.map((x) => [x.start, x.end, x.topSets])).toEqual(tb.sentences!.sentences.map((x) => [x.start, x.end, x.topSets]));
      ta.sentences!.sentences.forEach((x, i) => x.drops.forEach((dr, j) => expect(Math.abs(dr - tb.sentences!.sentences[i]!.drops[j]!)).toBeLessThanOrEqual(1e-6)));
      expect(first(d, "selection")).toEqual(first(e, "selection"));
      // The final answer, its citations and its sentences (a likelihood job on a worker) included.
      expect(first(d, "finalAnswer")).toEqual(first(e, "finalAnswer"));
      expect(first(d, "gapFill")).toEqual(first(e, "gapFill"));
      const counters = (events: AskEvent[]) => ({ ...(first(events, "done") as { counters: object }).counters, elapsedMs: 0 });
      expect(counters(d)).toEqual(counters(e));
    }
  });

  it("distributed - a coalition method runs its likelihood jobs on the workers: the same α table and selection as embedded", async () => {
    const method = ["--method", "kernel-shap", "--samples", "8", "--seed", "2"];
    const remote = await runCli(["ask", QUESTIONS[1]!, "--server", cluster.gatewayAddress, "--json", ...REQUEST, ...method]);
    expect(remote.code, remote.stderr + cluster.logs()).toBe(0);
    const local = await runCli(["ask", QUESTIONS[1]!, "--json", "--store", storeEmbedded, "--model", TEST_MODEL, ...ENGINE, ...REQUEST, ...method]);
    expect(local.code, local.stderr).toBe(0);
    const [d, e] = [parse(remote.stdout), parse(local.stdout)];
    expect(stages(d)).toEqual(stages(e));
    const [ta, tb] = [first(d, "attribution") as AttributionTable, first(e, "attribution") as AttributionTable];
    expect(ta.evaluations).toBe(tb.evaluations);
    expect(ta.rows.map((r) => r.setId)).toEqual(tb.rows.map((r) => r.setId));
    ta.rows.forEach((row, i) => expect(Math.abs(row.scores[0]!.alpha - tb.rows[i]!.scores[0]!.alpha)).toBeLessThanOrEqual(1e-9));
    expect(first(d, "selection")).toEqual(first(e, "selection"));
  });

  it("distributed - screen over NATS: the screened sets, their drops, α = 0 and SCREENED reasons are those of embedded", async () => {
    const screen = ["--strategy", "screen", "--screen-top-k", "1", "--include-occluded"];
    const remote = await runCli(["ask", QUESTIONS[0]!, "--server", cluster.gatewayAddress, "--json", ...REQUEST, ...screen]);
    expect(remote.code, remote.stderr + cluster.logs()).toBe(0);
    const local = await runCli(["ask", QUESTIONS[0]!, "--json", "--store", storeEmbedded, "--model", TEST_MODEL, ...ENGINE, ...REQUEST, ...screen]);
    expect(local.code, local.stderr).toBe(0);
    const [d, e] = [parse(remote.stdout), parse(local.stdout)];
    const outcomes = (events: AskEvent[]) =>
      events.flatMap((ev) => (ev.stage?.$case === "occlusionProgress" ? ev.stage.value.finished : [])).map((f) => ({ setId: f.setId, screened: f.screened, drop: f.screenDrop }));
    const [od, oe] = [outcomes(d), outcomes(e)];
    expect(od.map((o) => [o.setId, o.screened])).toEqual(oe.map((o) => [o.setId, o.screened]));
    expect(od.filter((o) => !o.screened)).toHaveLength(1);
    od.forEach((o, i) => expect(Math.abs(o.drop! - oe[i]!.drop!)).toBeLessThanOrEqual(1e-6));
    const selection = first(d, "selection") as { sets: { setId: string; reason: SelectionReason }[]; flags: SelectionFlag[] };
    expect(selection).toEqual(first(e, "selection"));
    expect(selection.flags).toContain(SelectionFlag.SELECTION_FLAG_SCREENED);
    const table = first(d, "attribution") as AttributionTable;
    for (const o of od.filter((x) => x.screened)) expect(table.rows.find((r) => r.setId === o.setId)!.scores.every((s) => s.alpha === 0)).toBe(true);
    expect((first(d, "done") as { occlusionCounters: { strategy: EngineStrategy } }).occlusionCounters.strategy).toBe(EngineStrategy.ENGINE_STRATEGY_SCREEN);
  });

  it("distributed - the selector and the index are NATS micro services: $SRV.PING, $SRV.INFO and $SRV.STATS answer", async () => {
    const nc = await connectNats({ url: cluster.url, name: "probe", user: "gateway", pass: PASSWORDS.gateway });
    try {
      for (const name of ["attr-rag-selector", "attr-rag-index"]) {
        const ping = (await nc.request(`$SRV.PING.${name}`, undefined, { timeout: 2_000 })).json<{ name: string; type: string }>();
        expect(ping).toMatchObject({ name, type: "io.nats.micro.v1.ping_response" });
        const info = (await nc.request(`$SRV.INFO.${name}`, undefined, { timeout: 2_000 })).json<{ endpoints: { subject: string; metadata: Record<string, string> }[] }>();
        expect(info.endpoints.length).toBeGreaterThan(0);
        for (const e of info.endpoints) expect(e.metadata.request).toMatch(/^attr_rag\.v1\./);
      }
      // STATS counts the requests each endpoint served: one index request and one unreadable selector request
      // (answered with the service error header, not dropped).
      type Stats = { type: string; endpoints: { name: string; num_requests: number; num_errors: number }[] };
      const stats = async (name: string, endpoint: string) => {
        const s = (await nc.request(`$SRV.STATS.${name}`, undefined, { timeout: 2_000 })).json<Stats>();
        expect(s.type).toBe("io.nats.micro.v1.stats_response");
        return s.endpoints.find((e) => e.name === endpoint)!;
      };
      const indexBefore = await stats("attr-rag-index", "get_stats");
      const selectorBefore = await stats("attr-rag-selector", "select");
      const reply = await nc.request("attr_rag.v1.index.get_stats", new Uint8Array(), { timeout: 5_000 });
      expect(reply.headers?.get("Nats-Service-Error-Code") ?? "").toBe("");
      const bad = await nc.request("attr_rag.v1.selector.select", new Uint8Array([0xff, 0xff, 0xff]), { timeout: 5_000 });
      expect(bad.headers?.get("Nats-Service-Error-Code")).toBe("3"); // INVALID_ARGUMENT
      const indexAfter = await stats("attr-rag-index", "get_stats");
      const selectorAfter = await stats("attr-rag-selector", "select");
      expect(indexAfter.num_requests).toBe(indexBefore.num_requests + 1);
      expect(selectorAfter.num_requests).toBe(selectorBefore.num_requests + 1);
    } finally {
      await nc.close();
    }
  });

  it("distributed - least privilege: wrong credentials are refused naming the option; a worker cannot publish on the gateway's subjects", async () => {
    const wrong = await runCli(["worker", "--nats", cluster.url, "--nats-user", "worker", "--nats-pass", "not-it", "--model", TEST_MODEL]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/refused the credentials of --nats-user\/--nats-pass/);
    const none = await runCli(["selector", "--nats", cluster.url]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/requires credentials: pass --nats-creds, --nats-nkey, --nats-token or --nats-user\/--nats-pass/);

    const violations = async (user: "worker" | "gateway") => {
      const nc = await connectNats({ url: cluster.url, name: `probe-${user}`, user, pass: PASSWORDS[user] });
      const errors: string[] = [];
      void (async () => {
        for await (const s of nc.status()) if (s.type === "error") errors.push(String((s as { error?: unknown }).error));
      })();
      nc.publish(jobSubject("occlusion", "no-such-model"), new Uint8Array([1])); // the gateway's job queue
      nc.publish("attr_rag.v1.jobs.x.cancel"); // the gateway's cancels
      await nc.flush();
      await new Promise((r) => setTimeout(r, 300));
      await nc.close();
      return errors;
    };
    const fromWorker = await violations("worker");
    expect(fromWorker.join("\n")).toMatch(/Permissions Violation for Publish to "attr_rag\.v1\.queue\.occlusion\.no-such-model"/);
    expect(await violations("gateway")).toEqual([]);
    // What the gateway queued there is not for a served model; take it off the queue again.
    const nc = await connectNats({ url: cluster.url, name: "cleanup", user: "gateway", pass: PASSWORDS.gateway });
    const jsm = await jetstreamManager(nc);
    const stray = await jsm.streams.getMessage(JOBS_STREAM, { last_by_subj: jobSubject("occlusion", "no-such-model") }).catch(() => null);
    if (stray !== null) await jsm.streams.deleteMessage(JOBS_STREAM, stray.seq);
    await nc.close();
  });

  it("distributed - a deadline reaches the worker: the client gets DEADLINE_EXCEEDED, the job is abandoned and its KV freed", async () => {
    const before = cluster.workers.map((w) => w.stderr.length);
    const r = await runCli(["ask", QUESTIONS[0]!, "--server", cluster.gatewayAddress, "--timeout", "2", "--max-tokens", "600"]);
    expect(r.stderr).toMatch(/DEADLINE_EXCEEDED/);
    await expect
      .poll(() => cluster.workers.some((w, i) => /(cancelled|deadline passed for) occlusion job \S+; KV sequences in use 0/.test(w.stderr.slice(before[i]))), { timeout: 15_000 })
      .toBe(true);
  });

  it("distributed - a worker killed with SIGKILL mid-occlusion: another worker finishes the job; every stage event arrives once, in order", async () => {
    const request = AskRequest.fromPartial({ question: QUESTIONS[0], retrieval: { k: 6 }, generation: { maxTokens: 120 } });
    const marks = cluster.workers.map((w) => w.stderr.length);
    let killed: string | undefined;
    onTestFinished(() => replaceKilled(killed));
    const outcome = await askStream(cluster.gatewayAddress, request, (e) => {
      if (killed === undefined && e.stage?.$case === "initialAnswerDelta") {
        const victim = cluster.workers.find((w, i) => /running occlusion job/.test(w.stderr.slice(marks[i])));
        if (victim !== undefined) {
          killed = victim.name;
          victim.child.kill("SIGKILL");
        }
      }
    });
    expect(killed, cluster.logs()).toBeDefined();
    expect(outcome.error, cluster.logs()).toBeUndefined();
    const { events } = outcome;
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i));
    expect(stages(events)).toEqual(["retrieved", "aligned", "reranked", "initialAnswerDelta", "occlusionProgress", "attribution", "selection", "gapFill", "finalAnswerDelta", "finalAnswer", "done"]);
    // The redelivered job streamed A_full again from the start; the client saw each piece once: the deltas
    // add up to the A_full an embedded run generates.
    const local = parse((await runCli(["ask", QUESTIONS[0]!, "--json", "--store", storeEmbedded, "--model", TEST_MODEL, ...ENGINE, "--k", "6", "--max-tokens", "120"])).stdout);
    const initial = (evs: AskEvent[]) => evs.flatMap((e) => (e.stage?.$case === "initialAnswerDelta" ? [e.stage.value.text] : [])).join("");
    expect(initial(events)).toBe(initial(local));
    expect(first(events, "selection")).toEqual(first(local, "selection"));
    const counts = events.flatMap((e) => (e.stage?.$case === "occlusionProgress" ? [e.stage.value.done] : []));
    expect(counts.slice(0, -1)).toEqual(counts.slice(0, -1).map((_, i) => i + 1));
    expect(cluster.workers.some((w, i) => /running occlusion job \S+ \(attempt 2/.test(w.stderr.slice(marks[i] ?? 0)))).toBe(true);
  });

  it("distributed - a worker killed with SIGKILL after occlusion progress began: the redelivered job never repeats or reorders a progress count", async () => {
    const request = AskRequest.fromPartial({ question: QUESTIONS[1], retrieval: { k: 6 }, generation: { maxTokens: 64 } });
    const marks = cluster.workers.map((w) => w.stderr.length);
    let killed: string | undefined;
    onTestFinished(() => replaceKilled(killed));
    let doneAtKill = 0;
    const outcome = await askStream(cluster.gatewayAddress, request, (e) => {
      if (killed === undefined && e.stage?.$case === "occlusionProgress") {
        const victim = cluster.workers.find((w, i) => /running occlusion job/.test(w.stderr.slice(marks[i])));
        if (victim !== undefined) {
          killed = victim.name;
          doneAtKill = e.stage.value.done;
          victim.child.kill("SIGKILL");
        }
      }
    });
    expect(killed, cluster.logs()).toBeDefined();
    expect(outcome.error, cluster.logs()).toBeUndefined();
    const { events } = outcome;
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i));
    const progress = events.flatMap((e) => (e.stage?.$case === "occlusionProgress" ? [e.stage.value] : []));
    // The last progress event is the run's close (pipeline.proto): done = total, with every set's outcome.
    const last = progress.at(-1)!;
    expect(last.done).toBe(last.total);
    expect(last.finished).toHaveLength(last.total);
    // Before it, the counts run 1, 2, …, total: nothing counted twice, nothing out of order, though the second
    // worker streamed the job's progress again from the start.
    const counts = progress.slice(0, -1).map((p) => p.done);
    expect(counts).toEqual(Array.from({ length: last.total }, (_, i) => i + 1));
    expect(progress.slice(0, -1).every((p) => p.finished.length === 0)).toBe(true);
    expect(last.total).toBeGreaterThan(doneAtKill);
    expect(cluster.workers.some((w) => /running occlusion job \S+ \(attempt 2/.test(w.stderr.slice(marks[cluster.workers.indexOf(w)] ?? 0)))).toBe(true);
    const local = parse((await runCli(["ask", QUESTIONS[1]!, "--json", "--store", storeEmbedded, "--model", TEST_MODEL, ...ENGINE, "--k", "6", "--max-tokens", "64"])).stdout);
    const [ta, tb] = [first(events, "attribution") as AttributionTable, first(local, "attribution") as AttributionTable];
    expect(ta.rows.map((r) => r.setId)).toEqual(tb.rows.map((r) => r.setId));
    ta.rows.forEach((row, i) => row.scores.forEach((x, k) => expect(Math.abs(x.alpha - tb.rows[i]!.scores[k]!.alpha)).toBeLessThanOrEqual(1e-9)));
    expect(first(events, "selection")).toEqual(first(local, "selection"));
  });

  it("distributed - a job that crashes its worker every time ends in the dead letters after max_deliver; the client gets INTERNAL, not a hang", async () => {
    // The harness plays the poison: every worker that starts an occlusion job dies at once (SIGKILL), and a
    // fresh worker takes its place.
    let stop = false;
    const killer = (async () => {
      const seen = new Map<string, number>();
      while (!stop) {
        for (const w of [...cluster.workers]) {
          if (w.child.exitCode !== null || w.child.signalCode !== null) continue;
          if (/running occlusion job/.test(w.stderr.slice(seen.get(w.name) ?? w.stderr.length))) {
            w.child.kill("SIGKILL");
            cluster.addWorker();
          }
          if (!seen.has(w.name)) seen.set(w.name, w.stderr.length);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    // The killer stops with the test, also when the Ask throws: later tests must keep their workers.
    onTestFinished(async () => {
      stop = true;
      await killer;
    });
    const started = performance.now();
    const outcome = await askStream(cluster.gatewayAddress, AskRequest.fromPartial({ question: QUESTIONS[1], retrieval: { k: 6 }, generation: { maxTokens: 24 } }));
    stop = true;
    await killer;
    expect(outcome.error?.code, cluster.logs()).toBe(status.INTERNAL);
    expect(outcome.error?.details).toMatch(/^occlusion job \S+ failed on all 2 of its deliveries \(the workers running it crashed or failed each time\); it was moved to the dead letters \(attr_rag\.v1\.dead\.occlusion\)$/);
    expect(outcome.endedAt - started).toBeLessThan(60_000);
    const nc = await connectNats({ url: cluster.url, name: "probe", user: "gateway", pass: PASSWORDS.gateway });
    try {
      const jsm = await jetstreamManager(nc);
      const dead = DeadLetter.decode((await jsm.streams.getMessage(DEAD_LETTER_STREAM, { last_by_subj: "attr_rag.v1.dead.occlusion" }))!.data);
      expect(dead).toMatchObject({ deliveries: 2, subject: "attr_rag.v1.queue.occlusion.stories260K" });
      expect(outcome.error?.details).toContain(dead.jobId);
      // The gateway's ClusterService (the web console's Cluster page) sees the same dead letters and the queues.
      const state = await getCluster(cluster.gatewayAddress);
      expect(state.mode).toBe("distributed");
      expect(state.deadLetters).toBe((await jsm.streams.info(DEAD_LETTER_STREAM)).state.messages);
      expect(state.deadLetters).toBeGreaterThan(0);
      expect(state.queues.map((q) => q.consumer)).toContain(workerConsumer("stories260K"));
      expect(state.workers.length).toBeGreaterThan(0);
      expect(state.workers.every((w) => w.model === "stories260K" && w.slots > 0)).toBe(true);
    } finally {
      await nc.close();
    }
    for (const w of cluster.workers.filter((p) => p.child.exitCode === null && p.child.signalCode === null)) await w.waitFor(/serving model/);
  });

  it("distributed - nats-server killed mid-Ask: the Ask ends UNAVAILABLE within 10 s; after a restart the gateway reconnects, queued jobs are still there, the next Ask succeeds", async () => {
    // A job for a model nobody serves stays queued across the restart (the stream is on disk).
    const probe = await connectNats({ url: cluster.url, name: "probe", user: "gateway", pass: PASSWORDS.gateway });
    await jetstream(probe).publish(jobSubject("generation", "unserved-model"), new Uint8Array([1, 2, 3]), { msgID: "kept-across-restart" });
    await probe.close();

    let killedAt = 0;
    const outcome = await askStream(cluster.gatewayAddress, AskRequest.fromPartial({ question: QUESTIONS[0], retrieval: { k: 6 }, generation: { maxTokens: 200 } }), (e) => {
      if (killedAt === 0 && e.stage?.$case === "initialAnswerDelta") {
        killedAt = performance.now();
        void cluster.nats.kill();
      }
    });
    expect(killedAt).toBeGreaterThan(0);
    expect(outcome.error?.code, cluster.logs()).toBe(status.UNAVAILABLE);
    expect(outcome.error?.details).toMatch(/connection to NATS was lost/);
    expect(outcome.endedAt - killedAt).toBeLessThan(10_000);

    await cluster.nats.restart();
    const nc = await connectNats({ url: cluster.url, name: "probe", user: "gateway", pass: PASSWORDS.gateway });
    try {
      const jsm = await jetstreamManager(nc);
      const kept = await jsm.streams.getMessage(JOBS_STREAM, { last_by_subj: jobSubject("generation", "unserved-model") });
      expect(kept?.header.get("Nats-Msg-Id")).toBe("kept-across-restart");
      await jsm.streams.deleteMessage(JOBS_STREAM, kept!.seq);
    } finally {
      await nc.close();
    }
    // Every role reconnects by itself; the next Ask succeeds.
    let next: Awaited<ReturnType<typeof askStream>> | undefined;
    for (let i = 0; i < 40; i++) {
      next = await askStream(cluster.gatewayAddress, AskRequest.fromPartial({ question: QUESTIONS[1], retrieval: { k: 6 }, generation: { maxTokens: 16 } }));
      if (next.error === undefined) break;
      // CI once saw INTERNAL here (an unexpected error during the reconnect): its details and the roles' logs say which.
      expect(next.error.code, `${next.error.details}\n${cluster.logs()}`).toBe(status.UNAVAILABLE);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(next?.error, cluster.logs()).toBeUndefined();
    expect(next!.events.at(-1)?.stage?.$case).toBe("done");
  });
});
