// Synthetic inter-document relationship sets (after the Shapley document-attribution study's RQ3 data): each
// example is a question about invented entities, two positive passages A and B that relate in one of three
// ways, negative passages on the same topic that do not answer it, and a target answer. Invented words keep
// a model's prior knowledge out: only the passages can raise the target's likelihood.
//   redundancy      A and B each state the whole answer (either alone suffices);
//   complementarity A and B each state half of it (both needed, independently);
//   synergy         A links the question to an entity that only B connects to the answer (multi-hop).
import { SeededRandom } from "@attr-rag/core";

export const RELATIONSHIP_KINDS = ["redundancy", "complementarity", "synergy"] as const;
export type RelationshipKind = (typeof RELATIONSHIP_KINDS)[number];

export interface RelationshipPassage {
  readonly id: string;
  readonly role: "positive" | "negative";
  readonly text: string;
}

export interface RelationshipExample {
  readonly id: string;
  readonly kind: RelationshipKind;
  readonly question: string;
  /** The target answer whose log-likelihood is the utility. */
  readonly answer: string;
  /** In prompt order (shuffled): A, B and the negatives. */
  readonly passages: readonly RelationshipPassage[];
}

const ONSETS = ["bl", "fl", "gr", "k", "m", "s", "t", "v", "z", "dr", "qu", "th", "l", "n", "r"];
const VOWELS = ["a", "e", "i", "o", "u", "ae", "y", "ou"];
const CODAS = ["", "n", "m", "r", "k", "th", "s", "x", "mp", "l"];

function word(r: SeededRandom, syllables: number): string {
  let w = "";
  for (let i = 0; i < syllables; i++) w += ONSETS[r.below(ONSETS.length)]! + VOWELS[r.below(VOWELS.length)]! + CODAS[r.below(CODAS.length)]!;
  return w;
}
const name = (r: SeededRandom, syllables = 2) => {
  const w = word(r, syllables);
  return w[0]!.toUpperCase() + w.slice(1);
};
const pick = <T>(r: SeededRandom, xs: readonly T[]) => xs[r.below(xs.length)]!;

interface Draft {
  question: string;
  answer: string;
  a: string;
  b: string;
  negatives: string[];
}

function redundancy(r: SeededRandom): Draft {
  const place = name(r);
  const gesture = pick(r, ["touching elbows", "tapping both shoulders", "bowing twice", "raising the left hand", "clicking the heels"]);
  const phrase = `${name(r, 1)} be with you`;
  return {
    question: `What is the traditional greeting in ${place}?`,
    answer: `The traditional greeting in ${place} is ${gesture} while saying "${phrase}".`,
    a: `The traditional greeting in ${place} involves ${gesture} while saying "${phrase}".`,
    b: `${place}ian etiquette requires ${gesture} as a greeting, together with the standard phrase "${phrase}".`,
    negatives: [
      `All ${place}ian vehicles hover at least ${2 + r.below(40)} cm above the ground.`,
      `Water in ${place} freezes at ${10 + r.below(80)} degrees because of added minerals.`,
      `The main market of ${place} opens only on ${pick(r, ["rainy", "windy", "foggy"])} days.`,
      `Children in ${place} learn to sing before they learn to read.`,
    ],
  };
}

function complementarity(r: SeededRandom): Draft {
  const object = `${name(r)} ${pick(r, ["Loom", "Lantern", "Compass", "Kettle", "Mirror"])}`;
  const first = `${pick(r, ["capture", "store", "weave"])} ${word(r, 2)}-visions into ${word(r, 1)}-silk`;
  const second = `${pick(r, ["stitch", "press", "fold"])} memories into ${word(r, 2)} fabric`;
  return {
    question: `What two functions does the ${object} perform?`,
    answer: `The ${object} can ${first} and it can ${second}.`,
    a: `The ${object} can ${first}.`,
    b: `The ${object} also has the ability to ${second}.`,
    negatives: [
      `Every ${object} is powered by ${pick(r, ["lunar", "tidal", "volcanic"])} energy.`,
      `Using the ${object} requires a deep meditative state.`,
      `The first ${object} was built ${100 + r.below(900)} years ago.`,
      `Merchants sell the ${object} only in the spring.`,
    ],
  };
}

function synergy(r: SeededRandom): Draft {
  const planet = name(r);
  const person = `${name(r)} ${name(r)}`;
  const salary = 10 + r.below(90);
  return {
    question: `What is the salary of the most popular actor on the planet ${planet}?`,
    answer: `The most popular actor on ${planet}, ${person}, earns about ${salary} million credits per project.`,
    a: `${person} is widely considered the most popular actor working on ${planet}.`,
    b: `${person} commands a salary of about ${salary} million credits per project.`,
    negatives: [
      `The entertainment industry of ${planet} is known for long historical epics.`,
      `Actors on ${planet} train for ${2 + r.below(9)} years before their first role.`,
      `${name(r)} ${name(r)} directs most of the dramas filmed on ${planet}.`,
      `Theatres on ${planet} seat at most ${50 + r.below(500)} people.`,
    ],
  };
}

const MAKERS: Record<RelationshipKind, (r: SeededRandom) => Draft> = { redundancy, complementarity, synergy };

/**
 * `count` examples of a kind ("mixed" cycles through the three), each with `negatives` (1-4) negative
 * passages, reproducible by seed.
 */
export function relationshipSets(kind: RelationshipKind | "mixed", count: number, seed: number, negatives = 4): RelationshipExample[] {
  if (!Number.isInteger(negatives) || negatives < 1 || negatives > 4) throw new RangeError(`negatives must be 1..4, got ${negatives}`);
  const r = new SeededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const k = kind === "mixed" ? RELATIONSHIP_KINDS[i % RELATIONSHIP_KINDS.length]! : kind;
    const d = MAKERS[k](r);
    const negs = r.permutation(d.negatives.length).slice(0, negatives).map((j, m) => ({ id: `N${m + 1}`, role: "negative" as const, text: d.negatives[j]! }));
    const all: RelationshipPassage[] = [{ id: "A", role: "positive", text: d.a }, { id: "B", role: "positive", text: d.b }, ...negs];
    const order = r.permutation(all.length);
    return { id: `${k}-${seed}-${i}`, kind: k, question: d.question, answer: d.answer, passages: order.map((j) => all[j]!) };
  });
}
