import { describeError, unary } from "../api.js";
import { el } from "../dom.js";
import { notify, state } from "../state.js";

interface ChunkJson {
  id: string;
  docId: string;
  ordinal?: number;
  text: string;
  docTitle?: string;
}

/** The Index page: search the store (IndexService.Search) and open a document's chunks (GetChunks). */
export function searchPage(root: HTMLElement): void {
  const query = el("input", { id: "search-query", type: "search", required: true, placeholder: "e.g. acetic anhydride", size: 40 });
  const k = el("input", { id: "search-k", type: "number", min: 1, max: 200, value: 8 });
  const form = el("form", { class: "card settings", role: "search" }, el("label", {}, "Search the index", query), el("label", {}, "Results", k), el("div", { class: "actions" }, el("button", { type: "submit" }, "Search")));
  const hits = el("ol", { class: "hits", "aria-label": "Search results" });
  const doc = el("section", { class: "card", "aria-label": "Document", hidden: true });
  const stats = el("p", { class: "muted" });
  root.replaceChildren(el("h1", {}, "Index"), stats, form, hits, doc);
  unary<{ documents?: number; chunks?: number }>("attr_rag.v1.IndexService/GetStats", {}, state.token)
    .then((s) => (stats.textContent = `${s.documents ?? 0} documents, ${s.chunks ?? 0} chunks in the store.`))
    .catch((err: unknown) => (stats.textContent = describeError(err)));

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    notify(undefined);
    unary<{ chunks?: { chunk: ChunkJson; score: number }[] }>("attr_rag.v1.IndexService/Search", { query: query.value, options: { k: Number(k.value) } }, state.token)
      .then((reply) => {
        hits.replaceChildren(
          ...(reply.chunks ?? []).map(({ chunk, score }) => {
            const open = el("button", { type: "button", class: "secondary" }, "Open document");
            open.addEventListener("click", () => void openDocument(chunk.docId, doc));
            return el("li", {}, el("div", {}, el("code", {}, chunk.id), ` · ${chunk.docTitle || chunk.docId} · score ${score.toFixed(3)} `, open), el("div", {}, chunk.text));
          }),
        );
        if ((reply.chunks ?? []).length === 0) hits.replaceChildren(el("li", { class: "muted" }, "No chunks matched."));
      })
      .catch((err: unknown) => notify(describeError(err)));
  });
}

async function openDocument(docId: string, into: HTMLElement): Promise<void> {
  try {
    const reply = await unary<{ chunks?: ChunkJson[] }>("attr_rag.v1.IndexService/GetChunks", { ranges: [{ docId, firstOrdinal: 0, lastOrdinal: 100_000 }] }, state.token);
    const chunks = reply.chunks ?? [];
    into.hidden = false;
    into.replaceChildren(
      el("h2", {}, chunks[0]?.docTitle || docId),
      ...chunks.map((c) => el("div", { class: "chunk" }, el("div", { class: "muted" }, el("code", {}, c.id), ` · ordinal ${c.ordinal ?? 0}`), el("div", {}, c.text))),
    );
    into.scrollIntoView({ block: "start" });
  } catch (err) {
    notify(describeError(err));
  }
}
