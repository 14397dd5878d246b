import { BatchState, type Batch } from "@attr-rag/contracts";
import { describeError, serverStream, unary } from "../api.js";
import { download, el } from "../dom.js";
import { notify, state } from "../state.js";

const STATE_LABELS: Record<number, string> = {
  [BatchState.BATCH_STATE_RUNNING]: "running",
  [BatchState.BATCH_STATE_CANCELLING]: "cancelling",
  [BatchState.BATCH_STATE_COMPLETED]: "completed",
  [BatchState.BATCH_STATE_CANCELLED]: "cancelled",
};

interface BatchJson {
  batchId: string;
  state?: string;
  totalItems?: number;
  counts?: Record<string, number>;
  itemsPerMinute?: number;
  etaSeconds?: number;
  label?: string;
  webhook?: { state?: string; attempts?: number; lastError?: string };
}

/** "waiting", "sending", "delivered", "gave up". */
function webhookState(b: BatchJson): string | undefined {
  return b.webhook?.state?.replace(/^WEBHOOK_DELIVERY_STATE_/, "").replace("_", " ").toLowerCase();
}

/** "webhook delivered · 3 attempts", "webhook sending · 2 attempts · HTTP 503". */
function webhookText(b: BatchJson): string {
  const attempts = b.webhook?.attempts ?? 0;
  return ["webhook " + webhookState(b), attempts > 0 ? `${attempts} attempt${attempts === 1 ? "" : "s"}` : "", b.webhook?.lastError ?? ""].filter((p) => p !== "").join(" · ");
}

function stateLabel(b: BatchJson): string {
  const value = BatchState[b.state as keyof typeof BatchState] as Batch["state"] | undefined;
  return STATE_LABELS[value ?? 0] ?? "unknown";
}

function eta(b: BatchJson): string {
  if (b.etaSeconds === undefined) return "—";
  const s = Math.round(b.etaSeconds);
  return s < 90 ? `${s} s` : s < 5400 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
}

/** The Batches page: every batch with its progress and ETA; per-item states; results as JSON Lines. */
export function batchesPage(root: HTMLElement): void {
  const body = el("tbody");
  const refresh = el("button", { type: "button", class: "secondary" }, "Refresh");
  const status = el("p", { class: "status", role: "status" });
  root.replaceChildren(
    el("h1", {}, "Batches"),
    el("div", { class: "actions" }, refresh),
    status,
    el(
      "table",
      { class: "list", "aria-label": "Batches" },
      el("thead", {}, el("tr", {}, ...["Batch", "State", "Progress", "Items/min", "ETA", "Counts", ""].map((h) => el("th", { scope: "col" }, h)))),
      body,
    ),
  );
  const load = async () => {
    status.textContent = "Loading…";
    try {
      const reply = await unary<{ batches?: BatchJson[] }>("attr_rag.v1.BatchService/ListBatches", { pageSize: 100 }, state.token);
      const batches = reply.batches ?? [];
      body.replaceChildren(...batches.map(row));
      status.textContent =
        batches.length === 0 ? "No batches yet (submit one with `attr-rag batch submit` or CreateBatch)." : `${batches.length} batch${batches.length === 1 ? "" : "es"}.`;
      // While a batch runs, follow it: refresh every 3 s for as long as this page is the one shown.
      // A webhook still to be delivered is followed too, until it is delivered or given up.
      if (batches.some((b) => stateLabel(b) === "running" || stateLabel(b) === "cancelling" || webhookState(b) === "waiting" || webhookState(b) === "sending")) {
        setTimeout(() => {
          if (root.contains(body) && document.visibilityState === "visible") void load();
        }, 3_000);
      }
    } catch (err) {
      status.textContent = "";
      notify(describeError(err));
    }
  };
  refresh.addEventListener("click", () => void load());
  void load();
}

function row(b: BatchJson): HTMLTableRowElement {
  const counts = b.counts ?? {};
  const finished = (counts.succeeded ?? 0) + (counts.failed ?? 0) + (counts.cancelled ?? 0);
  const total = b.totalItems ?? 0;
  const results = el("button", { type: "button", class: "secondary" }, "Download results");
  results.addEventListener("click", () => void downloadResults(b.batchId));
  const items = el("button", { type: "button", class: "secondary", "aria-expanded": "false" }, "Items");
  items.addEventListener("click", () => void showItems(b.batchId, items));
  return el(
    "tr",
    {},
    el("td", {}, el("code", {}, b.batchId), b.label ? el("div", { class: "muted" }, b.label) : null),
    el("td", {}, stateLabel(b), b.webhook ? el("div", { class: "muted", title: b.webhook.lastError || "" }, webhookText(b)) : null),
    el("td", {}, el("progress", { max: Math.max(1, total), value: finished, "aria-label": `${finished} of ${total} items finished` }), `${finished} / ${total}`),
    el("td", {}, (b.itemsPerMinute ?? 0).toFixed(1)),
    el("td", {}, eta(b)),
    el("td", { class: "muted" }, Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(", ")),
    el("td", {}, el("div", { class: "actions" }, items, results)),
  );
}

interface ResultJson {
  result?: { itemId?: string; index?: number; state?: string; statusCode?: number; statusMessage?: string; finalAnswer?: { text?: string } };
}

/** The finished items of a batch (in the order they finished), each with its state and status, under its row. */
async function showItems(batchId: string, button: HTMLButtonElement): Promise<void> {
  const row = button.closest("tr")!;
  const open = row.nextElementSibling?.classList.contains("items") ? row.nextElementSibling : null;
  if (open) {
    open.remove();
    button.setAttribute("aria-expanded", "false");
    return;
  }
  const rows: HTMLTableRowElement[] = [];
  try {
    for await (const message of serverStream<ResultJson>("attr_rag.v1.BatchService/ListBatchResults", { batchId }, state.token, new AbortController().signal)) {
      const r = message.result ?? {};
      const stateName = (r.state ?? "").replace(/^BATCH_ITEM_STATE_/, "").toLowerCase();
      rows.push(el("tr", {}, el("td", {}, String(r.index ?? 0)), el("td", {}, el("code", {}, r.itemId ?? "")), el("td", {}, stateName), el("td", { class: "muted" }, r.statusMessage || (r.finalAnswer?.text ?? "").slice(0, 160))));
    }
  } catch (err) {
    notify(describeError(err));
    return;
  }
  const table = el(
    "table",
    { class: "list", "aria-label": `Items of ${batchId}` },
    el("thead", {}, el("tr", {}, ...["#", "Item", "State", "Status or answer"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...rows),
  );
  const note = rows.length === 0 ? el("p", { class: "muted" }, "No item has finished yet.") : "";
  row.after(el("tr", { class: "items" }, el("td", { colspan: 7 }, note, table)));
  button.setAttribute("aria-expanded", "true");
}

async function downloadResults(batchId: string): Promise<void> {
  const lines: string[] = [];
  try {
    for await (const message of serverStream<unknown>("attr_rag.v1.BatchService/ListBatchResults", { batchId }, state.token, new AbortController().signal)) lines.push(JSON.stringify(message));
    download(`${batchId}.results.jsonl`, "application/x-ndjson", lines.join("\n") + "\n");
  } catch (err) {
    notify(describeError(err));
  }
}
