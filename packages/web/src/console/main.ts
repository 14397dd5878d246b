import { REPORT_CSS } from "@attr-rag/gateway/report";
import { askPage } from "./pages/ask.js";
import { batchesPage } from "./pages/batches.js";
import { clusterPage } from "./pages/cluster.js";
import { resultPage } from "./pages/result.js";
import { searchPage } from "./pages/search.js";
import { notify, state } from "./state.js";

const PAGES: Record<string, (root: HTMLElement) => void> = {
  ask: (root) => askPage(root, () => undefined),
  result: resultPage,
  batches: batchesPage,
  index: searchPage,
  cluster: clusterPage,
};

function route(): void {
  const name = location.hash.replace(/^#\/?/, "") || "ask";
  const page = PAGES[name] ?? PAGES.ask!;
  for (const link of document.querySelectorAll<HTMLAnchorElement>("nav a")) {
    if (link.dataset.page === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  notify(undefined);
  const root = document.getElementById("page")!;
  page(root);
  root.focus();
}

// The standalone report's own stylesheet, scoped to the result so its page-level rules leave the console alone.
const style = document.createElement("style");
style.textContent = `@scope (.report) {\n${REPORT_CSS}\n}`;
document.head.append(style);

const token = document.getElementById("token") as HTMLInputElement;
token.value = state.token;
token.addEventListener("change", () => (state.token = token.value.trim()));
window.addEventListener("hashchange", route);
route();
