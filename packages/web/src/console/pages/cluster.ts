import { describeError, unary } from "../api.js";
import { el } from "../dom.js";
import { notify, state } from "../state.js";

/** How often the page asks the gateway again while it is shown (docs/api.md says so). */
const REFRESH_MS = 2_000;

interface WorkerJson {
  workerId: string;
  model?: string;
  slots?: number;
  runningJobs?: number;
  completedJobs?: number;
  sequencesInUse?: number;
  sequences?: number;
  decodeCalls?: string | number;
  meanRowsPerCall?: number;
  waitingJobs?: number;
}
interface QueueJson {
  consumer: string;
  pending?: string | number;
  ackPending?: string | number;
  redelivered?: string | number;
}
interface ClusterJson {
  mode?: string;
  workers?: WorkerJson[];
  queues?: QueueJson[];
  deadLetters?: string | number;
  asksRunning?: number;
  asksQueued?: number;
  nats?: string;
}

const n = (v: string | number | undefined) => Number(v ?? 0);
const table = (label: string, headers: string[], rows: (string | number)[][]) =>
  el(
    "table",
    { class: "list", "aria-label": label },
    el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", {}, String(c)))))),
  );

/**
 * The Cluster page (ClusterService): the workers and what they run, their KV use and batching, the job queues
 * and the dead letters in distributed mode; the gateway's own engine embedded. Refreshes every 2 s while shown.
 */
export function clusterPage(root: HTMLElement): void {
  const body = el("div", { id: "cluster" });
  const status = el("p", { class: "status", role: "status" });
  root.replaceChildren(el("h1", {}, "Cluster"), status, body);
  const load = async () => {
    try {
      const c = await unary<ClusterJson>("attr_rag.v1.ClusterService/GetCluster", {}, state.token);
      status.textContent =
        c.mode === "distributed"
          ? `Distributed over NATS (${c.nats}): ${c.workers?.length ?? 0} workers answered. This gateway runs ${c.asksRunning ?? 0} asks, ${c.asksQueued ?? 0} queued.`
          : `Embedded: the engine runs in the gateway. ${c.asksRunning ?? 0} asks running, ${c.asksQueued ?? 0} queued.`;
      const workers = (c.workers ?? []).map((w) => [
        w.workerId,
        w.model ?? "",
        `${w.runningJobs ?? 0} / ${w.slots ?? 0}`,
        w.completedJobs ?? 0,
        `${w.sequencesInUse ?? 0} / ${w.sequences ?? 0}`,
        w.waitingJobs ?? 0,
        n(w.decodeCalls),
        (w.meanRowsPerCall ?? 0).toFixed(1),
      ]);
      const parts: Node[] = [
        el("h2", {}, "Workers"),
        table("Workers", ["Worker", "Model", "Jobs running / slots", "Jobs done", "KV sequences in use", "Jobs waiting", "Decode calls", "Rows per call"], workers),
      ];
      if (c.mode === "distributed") {
        parts.push(
          el("h2", {}, "Job queues"),
          table(
            "Job queues",
            ["Consumer (model, lane)", "Waiting", "In flight", "Redelivered"],
            (c.queues ?? []).map((q) => [q.consumer, n(q.pending), n(q.ackPending), n(q.redelivered)]),
          ),
          el("p", { id: "dead-letters" }, `Dead letters: ${n(c.deadLetters)} (jobs given up after their last delivery; \`nats stream view ATTR_RAG_DEAD_LETTERS\` shows them).`),
        );
      }
      body.replaceChildren(...parts);
    } catch (err) {
      notify(describeError(err));
      return;
    }
    setTimeout(() => {
      if (root.contains(body) && document.visibilityState === "visible") void load();
    }, REFRESH_MS);
  };
  void load();
}
