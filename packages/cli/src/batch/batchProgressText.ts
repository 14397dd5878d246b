import { batchStateToJSON, webhookDeliveryStateToJSON, type Batch, type WebhookDelivery } from "@attr-rag/contracts";

/** "4m10s", "55s", "2h03m". */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

export function stateName(b: Batch): string {
  return batchStateToJSON(b.state).replace("BATCH_STATE_", "").toLowerCase();
}

/** The detail after a progress bar: outcomes, rate, ETA. */
export function progressDetail(b: Batch): string {
  const c = b.counts!;
  const parts = [`${c.running} running`, `${c.succeeded} ok`];
  if (c.failed > 0) parts.push(`${c.failed} failed`);
  if (c.cancelled > 0) parts.push(`${c.cancelled} cancelled`);
  if (b.itemsPerMinute > 0) parts.push(`${b.itemsPerMinute.toFixed(1)}/min`);
  if (b.etaSeconds !== undefined) parts.push(`ETA ${duration(b.etaSeconds)}`);
  return parts.join(" · ");
}

/** "waiting", "sending", "delivered", "gave_up". */
export function webhookStateName(w: WebhookDelivery): string {
  return webhookDeliveryStateToJSON(w.state).replace("WEBHOOK_DELIVERY_STATE_", "").toLowerCase();
}

/** "webhook delivered (3 attempts)", "webhook sending (2 attempts, last: HTTP 503)". */
export function webhookText(w: WebhookDelivery): string {
  const attempts = w.attempts > 0 ? `${w.attempts} attempt${w.attempts === 1 ? "" : "s"}` : "";
  const detail = [attempts, w.lastError !== "" ? `last: ${w.lastError}` : ""].filter((p) => p !== "").join(", ");
  return `webhook ${webhookStateName(w).replace("_", " ")}${detail !== "" ? ` (${detail})` : ""}`;
}

/** One line per batch, as `batch status` and `batch list` print it. */
export function batchLine(b: Batch): string {
  const c = b.counts!;
  const finished = c.succeeded + c.failed + c.cancelled;
  return `${b.batchId}  ${stateName(b)}  ${finished}/${b.totalItems} done (${progressDetail(b)})  created ${new Date(Number(b.createdUnixMs)).toISOString()}${b.label !== "" ? `  "${b.label}"` : ""}${b.webhook !== undefined ? `  ${webhookText(b.webhook)}` : ""}`;
}

export function finishedOf(b: Batch): number {
  const c = b.counts!;
  return c.succeeded + c.failed + c.cancelled;
}
