import { AskEvent, CitationKind, type AskEventOf, type Citation } from "@attr-rag/contracts";
import { isApproximateProto, strategyNameOf } from "@attr-rag/worker";
import { attributionText } from "./attributionText.js";
import { sentenceTable } from "./sentenceTable.js";

interface Streams {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

/**
 * Shows an Ask stream to a person: one progress line per stage on stderr, the final answer streamed to
 * stdout, then its citations, a compact α table and why each set was kept or dropped. With `json`, every
 * event is one JSON line on stdout instead (the proto3 JSON of AskEvent) and nothing else is printed.
 */
export class AskPrinter {
  readonly events: AskEvent[] = [];
  #answerStarted = false;
  #initialTokens = 0;

  constructor(
    readonly json: boolean,
    readonly streams: Streams = { out: process.stdout, err: process.stderr },
  ) {}

  onEvent = (event: AskEvent): void => {
    this.events.push(event);
    if (this.json) {
      this.streams.out.write(`${JSON.stringify(AskEvent.toJSON(event))}\n`);
      return;
    }
    const stage = event.stage;
    if (stage === undefined) return;
    const at = `${(event.elapsedMs / 1000).toFixed(1)}s`;
    const note = (text: string): void => {
      this.streams.err.write(`[${at}] ${text}\n`);
    };
    switch (stage.$case) {
      case "retrieved":
        return note(`retrieved ${stage.value.chunks.length} chunks`);
      case "aligned":
        return note(`aligned into ${stage.value.sets.length} chunk sets`);
      case "reranked":
        return note(`re-ranked ${stage.value.sets.length} by ${stage.value.reranker}${stage.value.fallback ? " (no cross-encoder configured)" : ""}`);
      case "initialAnswerDelta":
        if (this.#initialTokens++ === 0) note("generating the initial answer A_full");
        return;
      case "occlusionProgress":
        if (stage.value.finished.some((f) => f.tokenCount > 0) || stage.value.done === 0) return;
        return note(`occluded ${stage.value.done}/${stage.value.total} sets`);
      case "attribution":
        return note(`attributed ${stage.value.rows.length} sets with ${stage.value.metrics.length} metrics (${stage.value.evaluations} evaluations)`);
      case "selection":
        return note(`selected: ${stage.value.summary}`);
      case "gapFill":
        return note(`gap fill added ${stage.value.addedChunks.length} chunks`);
      case "finalAnswerDelta":
        if (!this.#answerStarted) {
          this.#answerStarted = true;
          this.streams.out.write("Answer:\n");
        }
        this.streams.out.write(stage.value.text);
        return;
      case "finalAnswer":
        if (this.#answerStarted) this.streams.out.write("\n");
        return this.#printFinal(stage.value);
      case "done":
        return this.#printDone(stage.value);
    }
  };

  #printFinal(final: AskEventOf<"finalAnswer">): void {
    const out = this.streams.out;
    if (!this.#answerStarted) out.write(`Answer:\n${final.text}\n`);
    out.write("\nCitations:\n");
    if (final.citations.length === 0) out.write("  (none: no sentence cited a passage or was close enough to one)\n");
    for (const c of final.citations) {
      out.write(`  "${clip(final.text.slice(c.start, c.end), 60)}" → ${c.chunkIds.join(", ")} (${citationHow(c)})\n`);
    }
    out.write(`Context: ${final.contextChunkIds.join(", ")}\n`);
    if (final.sentences !== undefined && final.sentences.sentences.length > 0) {
      out.write(`\n${sentenceTable(final.text, final.sentences, "Which context block shaped which sentence")}`);
    }
    const attribution = this.#last("attribution");
    const selection = this.#last("selection");
    if (attribution !== undefined && selection !== undefined) out.write(`\n${attributionText(attribution, selection)}`);
  }

  #printDone(done: AskEventOf<"done">): void {
    const out = this.streams.out;
    for (const w of done.warnings) out.write(`warning: ${w}\n`);
    const c = done.counters;
    const o = done.occlusionCounters;
    if (o && isApproximateProto(o.strategy)) {
      out.write(`note: occluded answers came from the APPROXIMATE ${strategyNameOf(o.strategy)} strategy (check it with \`attr-rag eval occlusion\`)\n`);
    }
    out.write(
      `\nDone in ${((done.timings?.totalMs ?? 0) / 1000).toFixed(1)} s` +
        (c ? ` (engine: ${c.tokensEvaluated} tokens evaluated, ${c.tokensReused} reused, ${c.decodeSteps} decode steps)` : "") +
        "\n",
    );
  }

  #last<C extends "attribution" | "selection">(which: C): AskEventOf<C> | undefined {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const stage = this.events[i]!.stage;
      if (stage?.$case === which) return stage.value as never;
    }
    return undefined;
  }
}

function citationHow(c: Citation): string {
  if (c.kind === CitationKind.CITATION_KIND_ATTRIBUTION) return `attribution: ${c.score?.toFixed(2)} nats lost without it`;
  if (c.kind === CitationKind.CITATION_KIND_SIMILARITY) return `similarity: cosine ${c.score?.toFixed(2)}`;
  return "marker";
}

function clip(text: string, n: number): string {
  const flat = text.replace(/\s+/g, " ");
  return flat.length <= n ? flat : `${flat.slice(0, n - 1)}…`;
}
