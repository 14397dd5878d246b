// Types for working with the AskEvent oneof (ts-proto `oneof=unions-value`: `{ $case, value }`).
import type { AskEvent } from "./gen/attr_rag/v1/pipeline.js";

/** The set stage of an event: a discriminated union on `$case`. */
export type AskEventStage = NonNullable<AskEvent["stage"]>;

/** Names of the stages: "retrieved" | "aligned" | ... | "done". */
export type AskEventCase = AskEventStage["$case"];

/** The payload type of one stage, e.g. `AskEventOf<"done">` is `Done`. */
export type AskEventOf<C extends AskEventCase> = Extract<AskEventStage, { $case: C }>["value"];
