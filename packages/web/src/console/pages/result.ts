import { AskResponse } from "@attr-rag/contracts";
import { collectReportData, renderHeader, renderReport, renderReportSections } from "@attr-rag/gateway/report";
import { download, el } from "../dom.js";
import { state } from "../state.js";

/**
 * The Result page: the report's own sections (the same renderer as the downloadable HTML report, so the
 * data and wording match), with citations that highlight their chunks on hover, focus or click.
 */
export function resultPage(root: HTMLElement): void {
  const last = state.lastAsk;
  if (last === undefined || last.events.length === 0) {
    root.replaceChildren(el("h1", {}, "Result"), el("p", { class: "card" }, "Nothing asked yet: ask a question on the ", el("a", { href: "#/ask" }, "Ask page"), "."));
    return;
  }
  const data = collectReportData(last.events);
  const report = el("div", { class: "result report", id: "result" });
  // Every value in these sections is escaped by the renderer (it also writes the standalone report).
  report.innerHTML = renderHeader(last.question, data) + renderReportSections(data);
  for (const mark of report.querySelectorAll<HTMLElement>("mark.cite")) {
    mark.tabIndex = 0;
    mark.setAttribute("role", "button");
    mark.setAttribute("aria-label", `citation of ${mark.dataset.chunks ?? ""}: show the chunk`);
  }
  const downloads = el(
    "div",
    { class: "actions" },
    el("button", { type: "button", id: "download-html", class: "secondary" }, "Download the HTML report"),
    el("button", { type: "button", id: "download-json", class: "secondary" }, "Download the JSON"),
  );
  downloads.querySelector("#download-html")!.addEventListener("click", () => download("attr-rag-report.html", "text/html", renderReport({ question: last.question, events: last.events })));
  downloads.querySelector("#download-json")!.addEventListener("click", () =>
    download("attr-rag-ask.json", "application/json", JSON.stringify(last.events.map((event) => AskResponse.toJSON({ event })), null, 2)),
  );
  const note = last.finished ? null : el("p", { class: "status error" }, "This Ask did not finish: what arrived before it stopped is shown.");
  root.replaceChildren(el("h1", {}, "Result"), downloads, note ?? "", report);

  const highlight = (mark: HTMLElement | null, on: boolean) => {
    if (mark === null) return;
    mark.classList.toggle("active", on);
    for (const id of (mark.dataset.chunks ?? "").split(" ")) {
      for (const chunk of report.querySelectorAll<HTMLElement>(`.chunk[data-chunk="${CSS.escape(id)}"]`)) chunk.classList.toggle("highlight", on);
    }
  };
  const markOf = (e: Event) => (e.target as HTMLElement).closest<HTMLElement>("mark.cite");
  report.addEventListener("mouseover", (e) => highlight(markOf(e), true));
  report.addEventListener("mouseout", (e) => highlight(markOf(e), false));
  report.addEventListener("focusin", (e) => highlight(markOf(e), true));
  report.addEventListener("focusout", (e) => highlight(markOf(e), false));
  const reveal = (e: Event) => {
    const mark = markOf(e);
    if (mark === null) return;
    const first = (mark.dataset.chunks ?? "").split(" ")[0] ?? "";
    report.querySelector<HTMLElement>(`.chunk[data-chunk="${CSS.escape(first)}"]`)?.scrollIntoView({ block: "center", behavior: "smooth" });
  };
  report.addEventListener("click", reveal);
  report.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") reveal(e);
  });
}
