import { status } from "@grpc/grpc-js";
import {
  AskRequest,
  AttributeRequest,
  AttributionMethod,
  AttributionMetric,
  attributionMethodToJSON,
  type AskEventOf,
  type AttributeResponse,
  type AttrRagServiceClient,
} from "@attr-rag/contracts";
import { MAX_EXACT_SETS, MAX_SAMPLES } from "@attr-rag/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderReport, Runtime, startGatewayServer, type GatewayServerHandle } from "../src/index.js";
import { buildDemoStore, QUESTION, testConfig } from "./helpers/demoStore.js";
import { askStream, attrRagClient, stageOrder } from "./helpers/grpcClients.js";

const COALITION_ORDER = ["retrieved", "aligned", "reranked", "initialAnswerDelta", "attribution", "selection", "gapFill", "finalAnswerDelta", "finalAnswer", "done"];
const LOGLIK = AttributionMetric.ATTRIBUTION_METRIC_LOG_LIKELIHOOD;

function stage<C extends "attribution" | "selection" | "finalAnswer" | "done">(events: readonly { stage?: { $case: string; value: unknown } | undefined }[], c: C): AskEventOf<C> {
  const hit = events.find((e) => e.stage?.$case === c);
  if (hit === undefined) throw new Error(`no ${c} event`);
  return hit.stage!.value as AskEventOf<C>;
}

function attribute(client: AttrRagServiceClient, request: AttributeRequest): Promise<AttributeResponse> {
  return new Promise((resolve, reject) => client.attribute(request, (err, res) => (err ? reject(err) : resolve(res))));
}

describe("coalition attribution over gRPC", () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  let runtime: Runtime;
  let server: GatewayServerHandle;
  let client: AttrRagServiceClient;

  beforeAll(async () => {
    store = await buildDemoStore();
    runtime = await Runtime.open(testConfig(store.dir, { k: 4, maxTokens: 16 }));
    server = await startGatewayServer({ runtime, log: () => {} });
    client = attrRagClient(server.address);
  });

  afterAll(async () => {
    client?.close();
    await server?.close();
    store?.remove();
  });

  const methods: [string, AttributionMethod][] = [
    ["leave-one-out", AttributionMethod.ATTRIBUTION_METHOD_LEAVE_ONE_OUT_LOGLIK],
    ["exact Shapley", AttributionMethod.ATTRIBUTION_METHOD_SHAPLEY_EXACT],
    ["Kernel SHAP", AttributionMethod.ATTRIBUTION_METHOD_KERNEL_SHAP],
    ["TMC-Shapley", AttributionMethod.ATTRIBUTION_METHOD_TMC_SHAPLEY],
    ["Beta-Shapley", AttributionMethod.ATTRIBUTION_METHOD_BETA_SHAPLEY],
    ["ContextCite", AttributionMethod.ATTRIBUTION_METHOD_CONTEXTCITE],
  ];
  for (const [name, method] of methods) {
    it(`coalition methods - Ask with ${name} streams a log-likelihood table from that method, a selection and an answer`, async () => {
      const { events, error } = await askStream(client, AskRequest.fromPartial({ question: QUESTION, attribution: { method, samples: 12, seed: 5 } }));
      expect(error).toBeUndefined();
      expect(stageOrder(events)).toEqual(COALITION_ORDER);
      const table = stage(events, "attribution");
      const n = table.rows.length;
      expect(n).toBeGreaterThan(1);
      expect(table.method).toBe(method);
      expect(table.metrics).toEqual([LOGLIK]);
      for (const row of table.rows) expect(Number.isFinite(row.scores[0]!.alpha)).toBe(true);
      const alphas = table.rows.map((r) => r.scores[0]!.alpha);
      if (method === AttributionMethod.ATTRIBUTION_METHOD_LEAVE_ONE_OUT_LOGLIK) {
        expect(table.evaluations).toBe(n + 1);
        table.rows.forEach((r) => expect(r.scores[0]!.alpha).toBeCloseTo(table.loglikFull! - r.loglikWithout!, 9));
      }
      if (method === AttributionMethod.ATTRIBUTION_METHOD_SHAPLEY_EXACT) {
        expect(table.evaluations).toBe(2 ** n);
        // Efficiency: the values share out exactly what all the sets together add to A_full's log-likelihood.
        expect(Math.abs(alphas.reduce((a, b) => a + b, 0) - (table.loglikFull! - table.loglikEmpty!))).toBeLessThan(1e-6);
      }
      if (method === AttributionMethod.ATTRIBUTION_METHOD_TMC_SHAPLEY || method === AttributionMethod.ATTRIBUTION_METHOD_BETA_SHAPLEY) {
        for (const row of table.rows) expect(row.scores[0]!.stdError).toBeGreaterThanOrEqual(0);
      }
      const selection = stage(events, "selection");
      expect(selection.selectedSetIds.length).toBeGreaterThanOrEqual(1);
      expect(stage(events, "finalAnswer").text.length).toBeGreaterThan(0);
      expect(stage(events, "done").counters!.tokensEvaluated).toBeGreaterThan(0);
      // The report: a bar per set on the log-likelihood axis, and the method named.
      const html = renderReport({ question: QUESTION, events });
      const bars = [...html.matchAll(/<rect class="bar" data-set="([^"]+)" data-metric="log-likelihood" data-alpha="([^"]+)"/g)];
      expect(bars.map((b) => b[1])).toEqual(table.rows.map((r) => r.setId));
      bars.forEach((b, j) => expect(Number(b[2])).toBe(alphas[j]));
      expect(html).toContain(attributionMethodToJSON(method).replace("ATTRIBUTION_METHOD_", "").toLowerCase().replace(/_/g, " "));
    });
  }

  it("coalition methods - a sampling method is reproducible by seed; Attribute runs it on given sets", async () => {
    const sets = [
      { setId: "a", text: "Lily had a red ball and a small dog named Max." },
      { setId: "b", text: "One day the sun was very hot and the birds were quiet." },
      { setId: "c", text: "Tom found a big box under the old tree in the park." },
    ];
    const request = AttributeRequest.fromPartial({ question: QUESTION, sets, attribution: { method: AttributionMethod.ATTRIBUTION_METHOD_KERNEL_SHAP, samples: 6, seed: 3 } });
    const [first, second] = [await attribute(client, request), await attribute(client, request)];
    expect(first.attribution!.method).toBe(AttributionMethod.ATTRIBUTION_METHOD_KERNEL_SHAP);
    expect(first.attribution!.rows.map((r) => r.setId)).toEqual(["a", "b", "c"]);
    expect(second.attribution!.rows.map((r) => r.scores[0]!.alpha)).toEqual(first.attribution!.rows.map((r) => r.scores[0]!.alpha));
    expect(first.occluded).toEqual([]);
    // 6 samples ≥ 2^3 − 2 proper coalitions: Kernel SHAP is exact, so it equals exact Shapley on the same answer.
    const exact = await attribute(client, AttributeRequest.fromPartial({ question: QUESTION, sets, initialAnswer: first.initialAnswer, attribution: { method: AttributionMethod.ATTRIBUTION_METHOD_SHAPLEY_EXACT } }));
    const kernel = await attribute(client, AttributeRequest.fromPartial({ question: QUESTION, sets, initialAnswer: first.initialAnswer, attribution: { method: AttributionMethod.ATTRIBUTION_METHOD_KERNEL_SHAP, samples: 6 } }));
    kernel.attribution!.rows.forEach((r, j) => expect(Math.abs(r.scores[0]!.alpha - exact.attribution!.rows[j]!.scores[0]!.alpha)).toBeLessThan(1e-6));
  });

  it("coalition methods - log-likelihood beside the six text metrics: occlusion with LOG_LIKELIHOOD votes with leave-one-out on v", async () => {
    const metrics = [AttributionMetric.ATTRIBUTION_METRIC_ROUGE1, AttributionMetric.ATTRIBUTION_METRIC_JACCARD, LOGLIK];
    const { events, error } = await askStream(client, AskRequest.fromPartial({ question: QUESTION, selection: { metrics, minVotes: 2 } }));
    expect(error).toBeUndefined();
    const table = stage(events, "attribution");
    expect(table.method).toBe(AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION);
    expect(table.metrics).toEqual(metrics);
    for (const row of table.rows) {
      expect(row.scores[2]!.metric).toBe(LOGLIK);
      expect(row.scores[2]!.alpha).toBeCloseTo(table.loglikFull! - row.loglikWithout!, 9);
      expect(row.scores[0]!.alpha).toBeGreaterThanOrEqual(0);
    }
    expect(stage(events, "selection").sets.every((s) => s.metricVotes.length <= 3)).toBe(true);
  });

  it("coalition methods - bad parameters are INVALID_ARGUMENT naming the limit, before any work", async () => {
    const ask = async (attribution: object, extra: object = {}) => (await askStream(client, AskRequest.fromPartial({ question: QUESTION, attribution, ...extra }))).error!;
    const kernel = AttributionMethod.ATTRIBUTION_METHOD_KERNEL_SHAP;
    const cases: [object, RegExp, object?][] = [
      [{ method: kernel, samples: 0 }, /samples must be an integer in \[1, 65536\], got 0/],
      [{ method: kernel, samples: MAX_SAMPLES + 1 }, /samples must be an integer in \[1, 65536\]/],
      [{ method: AttributionMethod.ATTRIBUTION_METHOD_BETA_SHAPLEY, betaAlpha: 0 }, /beta alpha must be a number in \(0, 1e6\], got 0/],
      [{ method: AttributionMethod.ATTRIBUTION_METHOD_BETA_SHAPLEY, betaBeta: -2 }, /beta beta/],
      [{ method: kernel }, /scores the log-likelihood utility only; use LOG_LIKELIHOOD/, { selection: { metrics: [AttributionMetric.ATTRIBUTION_METRIC_ROUGE1] } }],
      [{ method: kernel }, /token_budget needs the sets' token counts/, { selection: { metrics: [], tokenBudget: 500 } }],
    ];
    for (const [attribution, message, extra] of cases) {
      const error = await ask(attribution, extra);
      expect(error.code, JSON.stringify(attribution)).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toMatch(message);
    }
    const many = Array.from({ length: MAX_EXACT_SETS + 1 }, (_, i) => ({ setId: `s${i}`, text: `Set number ${i} says something small.` }));
    await expect(attribute(client, AttributeRequest.fromPartial({ question: QUESTION, sets: many, attribution: { method: AttributionMethod.ATTRIBUTION_METHOD_SHAPLEY_EXACT } }))).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringMatching(/at most 12 chunk sets, got 13; use kernel-shap/),
    });
    expect(runtime.generator.sequencesInUse()).toBe(0);
  });
});
