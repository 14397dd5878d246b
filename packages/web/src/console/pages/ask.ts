import { AskRequest, AskResponse, AttributionMethod, Baseline, EngineStrategy, type AskEvent } from "@attr-rag/contracts";
import { describeError, serverStream } from "../api.js";
import { el } from "../dom.js";
import { notify, state } from "../state.js";
import { StageList } from "./stageList.js";

const MODES = [
  ["attr-rag", "Attr-RAG (attribute, select, fill gaps)"],
  ["topk", "Baseline: top-k chunks"],
  ["rerank", "Baseline: re-ranked top-k"],
] as const;
const METHODS = [
  [AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION, "Occlusion (the paper's)"],
  [AttributionMethod.ATTRIBUTION_METHOD_LEAVE_ONE_OUT_LOGLIK, "Leave-one-out log-likelihood"],
  [AttributionMethod.ATTRIBUTION_METHOD_SHAPLEY_EXACT, "Shapley (exact)"],
  [AttributionMethod.ATTRIBUTION_METHOD_KERNEL_SHAP, "KernelSHAP (sampled)"],
  [AttributionMethod.ATTRIBUTION_METHOD_TMC_SHAPLEY, "TMC-Shapley (sampled)"],
] as const;
const STRATEGIES = [
  [EngineStrategy.ENGINE_STRATEGY_SPECULATIVE, "speculative (exact)"],
  [EngineStrategy.ENGINE_STRATEGY_PREFIX_SHARED, "prefix-shared (exact)"],
  [EngineStrategy.ENGINE_STRATEGY_NAIVE, "naive (exact)"],
  [EngineStrategy.ENGINE_STRATEGY_KV_REUSE, "kv-reuse (approximate)"],
  [EngineStrategy.ENGINE_STRATEGY_KV_MASK, "kv-mask (approximate)"],
] as const;

const options = (pairs: readonly (readonly [string | number, string])[]) => pairs.map(([value, label]) => el("option", { value }, label));

let running: AbortController | undefined;

/** The Ask page: the question and its main settings; the stages stream in below; Cancel stops the engine. */
export function askPage(root: HTMLElement, onFinished: () => void): void {
  const question = el("textarea", { id: "question", name: "question", required: true, rows: 3 });
  question.value = state.lastAsk?.question ?? "Explain all the required steps of the acetaminophen synthesis.";
  const k = el("input", { id: "k", type: "number", min: 1, max: 200, value: 6 });
  const mode = el("select", { id: "mode" }, ...options(MODES));
  const method = el("select", { id: "method" }, ...options(METHODS));
  const strategy = el("select", { id: "strategy" }, ...options(STRATEGIES));
  const maxTokens = el("input", { id: "max-tokens", type: "number", min: 1, max: 4096, value: 48 });
  // Sentence-level attribution: a set supports a sentence above this drop (nats); empty = no sentence attribution.
  const sentenceThreshold = el("input", { id: "sentence-threshold", type: "number", min: 0, max: 1000, step: 0.1, value: 1 });
  const ask = el("button", { type: "submit", id: "ask" }, "Ask");
  const cancel = el("button", { type: "button", id: "cancel", class: "secondary", disabled: true }, "Cancel");
  const status = el("p", { class: "status", id: "ask-status", role: "status" });
  const stages = new StageList();
  const openResult = el("a", { href: "#/result", class: "button secondary", id: "open-result", hidden: true }, "Open the result");
  const form = el(
    "form",
    { class: "ask card", "aria-label": "Ask a question" },
    el("label", { for: "question", class: "field" }, "Question", question),
    el(
      "div",
      { class: "settings" },
      el("label", {}, "k (chunks retrieved)", k),
      el("label", {}, "Mode", mode),
      el("label", {}, "Attribution method", method),
      el("label", {}, "Engine strategy", strategy),
      el("label", {}, "Max tokens", maxTokens),
      el("label", { title: "Nats a sentence must lose without a set for the set to support it; empty: no sentence-level attribution" }, "Sentence threshold", sentenceThreshold),
    ),
    el("div", { class: "actions" }, ask, cancel),
  );
  root.replaceChildren(el("h1", {}, "Ask"), form, el("section", { class: "card", "aria-label": "Progress" }, el("h2", {}, "Stages"), status, stages.element, openResult));

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const request = AskRequest.fromPartial({
      question: question.value.trim(),
      retrieval: { k: Number(k.value) },
      generation: { maxTokens: Number(maxTokens.value), strategy: Number(strategy.value) },
      attribution: {
        method: Number(method.value),
        ...(sentenceThreshold.value.trim() === "" ? { sentences: false } : { sentenceThreshold: Number(sentenceThreshold.value) }),
      },
      baseline: mode.value === "attr-rag" ? undefined : { baseline: mode.value === "topk" ? Baseline.BASELINE_TOPK : Baseline.BASELINE_RERANK, k: Number(k.value) },
    });
    void run(request);
  });
  cancel.addEventListener("click", () => running?.abort());

  async function run(request: AskRequest): Promise<void> {
    notify(undefined);
    running?.abort();
    const controller = new AbortController();
    running = controller;
    const events: AskEvent[] = [];
    state.lastAsk = { question: request.question, events, finished: false };
    ask.disabled = true;
    cancel.disabled = false;
    openResult.hidden = true;
    status.className = "status";
    status.textContent = "Asking…";
    try {
      for await (const message of serverStream<unknown>("attr_rag.v1.AttrRagService/Ask", AskRequest.toJSON(request), state.token, controller.signal)) {
        const event = AskResponse.fromJSON(message).event;
        if (event === undefined) continue;
        events.push(event);
        stages.add(event);
      }
      state.lastAsk.finished = true;
      status.textContent = "Finished.";
      openResult.hidden = false;
      onFinished();
    } catch (err) {
      status.className = "status error";
      status.textContent = describeError(err);
      if (!controller.signal.aborted) notify(describeError(err));
      if (events.length > 0) openResult.hidden = false;
    } finally {
      stages.stop();
      ask.disabled = false;
      cancel.disabled = true;
      if (running === controller) running = undefined;
    }
  }
}
