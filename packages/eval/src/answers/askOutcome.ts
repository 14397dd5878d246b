// What the harness keeps of one Ask's event stream: the final answer, the chunks it was generated from, stage
// times and warnings. The same events whether the Ask ran embedded or on a gateway.
import type { AskEvent } from "@attr-rag/contracts";

export interface AskOutcome {
  readonly answer: string;
  readonly contextIds: string[];
  /** Stage name (snake_case, ms) → time, from the done event; zeros (stages a method skips) left out. */
  readonly timings: Record<string, number>;
  readonly warnings: string[];
}

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function askOutcome(events: readonly AskEvent[]): AskOutcome {
  let answer: string | undefined;
  let contextIds: string[] = [];
  const timings: Record<string, number> = {};
  const warnings: string[] = [];
  for (const e of events) {
    const stage = e.stage;
    if (stage?.$case === "finalAnswer") {
      answer = stage.value.text;
      contextIds = [...stage.value.contextChunkIds];
    } else if (stage?.$case === "done") {
      for (const [name, ms] of Object.entries(stage.value.timings ?? {})) if (typeof ms === "number" && ms > 0) timings[snake(name)] = ms;
      warnings.push(...stage.value.warnings);
    }
  }
  if (answer === undefined) throw new Error("the Ask ended without a final answer");
  return { answer, contextIds, timings, warnings };
}
