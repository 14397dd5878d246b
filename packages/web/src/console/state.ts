import type { AskEvent } from "@attr-rag/contracts";

/** What the pages share: the bearer token (kept in this browser) and the last Ask's question and events. */
export const state = {
  get token(): string {
    return localStorage.getItem("attr-rag.token") ?? "";
  },
  set token(value: string) {
    localStorage.setItem("attr-rag.token", value);
  },
  lastAsk: undefined as { question: string; events: AskEvent[]; finished: boolean } | undefined,
};

/** Shows (or, with undefined, hides) the page-wide message. */
export function notify(message: string | undefined): void {
  const notice = document.getElementById("notice")!;
  notice.hidden = message === undefined;
  notice.textContent = message ?? "";
}
