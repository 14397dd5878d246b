// Table II's LLM judge: the paper's six criteria, 0–5 each, total /30. The prompt asks for one strict JSON
// object; the parser never invents a score: anything it cannot read is recorded as missing, not as 0.
import type { ChatMessage } from "../prompt/buildPromptSegments.js";

export const JUDGE_CRITERIA = ["relevance", "correctness", "completeness", "coherence", "clarity", "missing_steps"] as const;
export type JudgeCriterion = (typeof JUDGE_CRITERIA)[number];
export const JUDGE_MAX_PER_CRITERION = 5;

/** What each criterion asks (the paper's definitions, section IV). */
export const JUDGE_CRITERION_TEXT: Record<JudgeCriterion, string> = {
  relevance: "Does the answer keep the experimental intent, focus and components of the reference and stay within the scope of the question?",
  correctness: "Are the procedures, facts, measurements and terms scientifically accurate and consistent with the reference?",
  completeness: "Does the answer cover all critical steps included in the reference?",
  coherence: "Is the answer logically structured and organised step by step?",
  clarity: "Are chemical concepts, terms and instructions stated clearly and precisely, with the rigour of the reference?",
  missing_steps: "Missing-step penalty: are key steps, safety measures or components omitted? 5 = nothing omitted, 0 = most omitted.",
};

export interface JudgeVerdict {
  /** Criteria the judge scored validly (a number from 0 to 5). */
  readonly scores: Partial<Record<JudgeCriterion, number>>;
  /** Criteria without a valid score: absent, not a number, out of range, or the reply was not JSON. */
  readonly missing: JudgeCriterion[];
  /** Sum of the six scores; null unless all six are present. */
  readonly total: number | null;
  /** Why the reply (or part of it) could not be used; absent when all six were read. */
  readonly problem?: string;
}

/** The judge's chat: a system message with the rubric and the output contract, a user message with the texts. */
export function judgeMessages(question: string, reference: string, answer: string): ChatMessage[] {
  const rubric = JUDGE_CRITERIA.map((c) => `- "${c}": ${JUDGE_CRITERION_TEXT[c]}`).join("\n");
  return [
    {
      role: "system",
      content: [
        "You are a strict evaluator of answers to scientific laboratory questions.",
        "Compare the generated answer with the reference answer and score each criterion with an integer from 0 (worst) to 5 (best):",
        rubric,
        `Reply with exactly one JSON object and nothing else, with these ${JUDGE_CRITERIA.length} keys and integer values, for example:`,
        JSON.stringify(Object.fromEntries(JUDGE_CRITERIA.map((c) => [c, 3]))),
      ].join("\n"),
    },
    { role: "user", content: `Question:\n${question}\n\nReference answer:\n${reference}\n\nGenerated answer:\n${answer}` },
  ];
}

/** The reminder sent once when a reply could not be read in full. */
export const JUDGE_RETRY_MESSAGE = `Your reply was not one JSON object with all ${JUDGE_CRITERIA.length} keys (${JUDGE_CRITERIA.join(", ")}), each an integer from 0 to 5. Reply with that JSON object only.`;

/** The JSON text of a reply: the whole reply, or the body of one fenced block (chat models often fence JSON). */
function jsonText(reply: string): string {
  const trimmed = reply.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(trimmed);
  return fenced ? fenced[1]!.trim() : trimmed;
}

/** Reads a judge reply. Never throws: what cannot be read is listed in `missing` with the reason in `problem`. */
export function parseJudgeReply(reply: string): JudgeVerdict {
  let value: unknown;
  try {
    value = JSON.parse(jsonText(reply));
  } catch (err) {
    return { scores: {}, missing: [...JUDGE_CRITERIA], total: null, problem: `not JSON (${(err as Error).message})` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { scores: {}, missing: [...JUDGE_CRITERIA], total: null, problem: "not a JSON object" };
  }
  const obj = value as Record<string, unknown>;
  const scores: Partial<Record<JudgeCriterion, number>> = {};
  const missing: JudgeCriterion[] = [];
  const bad: string[] = [];
  for (const c of JUDGE_CRITERIA) {
    const v = obj[c];
    if (typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= JUDGE_MAX_PER_CRITERION) scores[c] = v;
    else {
      missing.push(c);
      bad.push(v === undefined ? `${c} absent` : `${c} = ${JSON.stringify(v)} is not a number from 0 to ${JUDGE_MAX_PER_CRITERION}`);
    }
  }
  const total = missing.length === 0 ? JUDGE_CRITERIA.reduce((s, c) => s + scores[c]!, 0) : null;
  return { scores, missing, total, ...(bad.length > 0 ? { problem: bad.join("; ") } : {}) };
}

/** Of two attempts, the one with more criteria read (the later one on a tie: it answered the reminder). */
export function betterVerdict(first: JudgeVerdict, second: JudgeVerdict): JudgeVerdict {
  return Object.keys(second.scores).length >= Object.keys(first.scores).length ? second : first;
}
