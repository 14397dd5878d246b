import type { Db } from "../sqlite/openDatabase.js";
import type { SearchFilters, SearchHit } from "../types.js";
import { InvalidQueryError } from "../errors.js";
import type { Bm25Corpus } from "./bm25Corpus.js";
import { Bm25Search } from "./bm25Search.js";
import { BM25_K1, bm25Idf, bm25TermPart, Bm25Stats, readVarint } from "./bm25Stats.js";
import { FILTER_SQL, filterParams } from "./filterSql.js";
import { ftsPhrases, phrasesMatch } from "./ftsQuery.js";
import { Fts5Tokens } from "./fts5Tokens.js";
import { ChunkTermCounts, termCountsOf } from "../sqlite/chunkTermCounts.js";
import { PostingScores } from "./postingScores.js";
import { TermPostingsReader } from "./termPostingsReader.js";

/** A phrase of the query: its one token, how many rows hold it, its IDF and the most it can add to a score. */
interface Phrase {
  readonly text: string;
  readonly token: string;
  /** The token's id in chunk_term_counts. */
  readonly id: number;
  readonly idf: number;
  readonly bound: number;
  readonly df: number;
}

interface Candidate {
  readonly rowid: number;
  readonly partial: number;
  score: number;
  /** The chunk's token count when the postings that scored it said so (else read from FTS5's docsize). */
  readonly length?: number;
}

/** Up to this many postings over all the query's phrases, every match is scored, nothing pruned. */
const SMALL_POSTINGS = 5_000;
/** Up to this many postings of its less common words, an unfiltered query scores them all (see #search). */
const OWN_SCAN = 150_000;
/** Most candidates completed together (their counts read in one statement). */
const COMPLETE_GROUP = 256;
/**
 * Completing a row (reading its token counts, ~3 µs at a million chunks) costs about as much as scoring this
 * many postings here. An unfiltered query that has completed more rows than its postings over this ratio is
 * cheaper to score outright: a question of only common words ("what is the al al be that…") would otherwise
 * complete rows by the million.
 */
const COMPLETION_POSTINGS = 150;

/** What each pass reported, for tests and benchmarks. */
export interface Bm25TopKTrace {
  /** FTS5 queries run (1 unless the first guess of which phrases to bound was too bold). */
  passes: number;
  /** Phrases left out of the FTS5 query and added from the candidates' own tokens. */
  boundedPhrases: number;
  /** Rows whose score was completed from their recorded token counts. */
  candidates: number;
  /**
   * True when every match was scored, nothing pruned: few postings in all (from term_postings, or by FTS5 with
   * filters), a phrase of more than one token (FTS5), or bounds that never held.
   */
  exhaustive: boolean;
  /** Postings of the phrases FTS5 scored in the last pass (every one of them is scored), and of all phrases. */
  postings: { scored: number; all: number };
  /** True when a pass stopped completing rows because scoring every posting was cheaper (COMPLETION_POSTINGS). */
  completionsCapped?: boolean;
}

/**
 * Exact BM25 top-k without scoring every match (MaxScore over FTS5): FTS5's bm25() scores every row that
 * holds any query word, and counts every posting of each word for its IDF, so a question's common words
 * ("the", "of", "reaction") made BM25 cost time in proportion to the corpus.
 *
 * The query's phrases are split in two. The rare ones go to FTS5 as usual ("partial" scores, ranked inside
 * FTS5, touching only their short postings). The common ones are bounded: each can add at most
 * IDF × (k1 + 1) to a row's score, so with B the sum of their bounds, a row holding none of the rare phrases
 * scores at most B, and a row ranked below the m-th partial score at most partial_m + B. The top m rows by
 * partial score get their exact score (the common phrases' counts from the token counts the store keeps per
 * chunk, IDFs from the document frequencies it keeps, both FTS5's own tokens); if the k-th best of them, θ,
 * beats both bounds strictly, no row outside can reach the top k, and the answer is exactly FTS5's: same
 * rows, same scores (up to the order of a floating-point sum), same order, ties by rowid. Otherwise a common
 * phrase moves to the FTS5 side or m grows, until the bounds hold; at worst that is FTS5's full ranking.
 */
export class Bm25TopK {
  readonly #stats: Bm25Stats;
  readonly #tokens: Fts5Tokens;
  readonly #exhaustive: Bm25Search;
  readonly #partial;
  readonly #row;
  readonly #docsize;
  readonly #counts: ChunkTermCounts;
  readonly #postings: TermPostingsReader;
  /** Scores of postings read here (term_postings), and the token counts of the rows they touched last. */
  readonly #scores = new PostingScores();
  /** Scratch for termCountsOf. */
  readonly #tf: number[] = [];
  readonly #read: (run: () => SearchHit[]) => SearchHit[];
  /** The last search's trace. */
  lastTrace: Bm25TopKTrace = { passes: 0, boundedPhrases: 0, candidates: 0, exhaustive: false, postings: { scored: 0, all: 0 } };

  /** See OWN_SCAN; tests set 0 to take the pruning path on small corpora (and never fall back, see COMPLETION_POSTINGS). */
  readonly #ownScan: number;

  constructor(db: Db, exhaustive: Bm25Search, options: { ownScan?: number } = {}) {
    this.#ownScan = options.ownScan ?? OWN_SCAN;
    this.#stats = new Bm25Stats(db);
    this.#tokens = new Fts5Tokens(db);
    this.#exhaustive = exhaustive;
    // Only rowid and score while FTS5 ranks: loading every match's text before the LIMIT is what the sort costs.
    this.#partial = db.prepare<{ match: string; docIds: string | null; sources: string | null }, { rowid: number; partial: number }>(`
      SELECT c.rowid AS rowid, -chunks_fts.rank AS partial
      FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid
      WHERE chunks_fts MATCH @match AND ${FILTER_SQL}
      ORDER BY chunks_fts.rank, c.rowid`);
    this.#row = db.prepare<[number], Omit<SearchHit, "score">>(`SELECT id AS chunkId, doc_id AS docId, ordinal, start, "end", text FROM chunks WHERE rowid = ?`);
    this.#counts = new ChunkTermCounts(db);
    this.#postings = new TermPostingsReader(db);
    this.#docsize = db.prepare<[number], { sz: Buffer }>("SELECT sz FROM chunks_fts_docsize WHERE id = ?");
    this.#allowedRows = db.prepare<{ docIds: string | null; sources: string | null }, number>(`SELECT c.rowid FROM chunks c WHERE ${FILTER_SQL}`).pluck();
    // One read transaction: the counts, the FTS5 ranking and the rows all come from one snapshot of the store.
    this.#read = db.transaction((run: () => SearchHit[]) => run());
  }

  /**
   * Which rows a search may return: all live ones, or (filters with a given corpus) those the filters allow.
   * `own` is whether postings are scored here (term_postings) rather than ranked by FTS5: always without
   * filters, and with them when the corpus figures come from outside (FTS5 would use the store's own).
   */
  #scope: { own: boolean; allowed?: Set<number> } = { own: true };
  readonly #allowedRows;

  /**
   * Best first, exactly as Bm25Search ranks; empty when the query has no searchable words. With `corpus` (a
   * shard of a sharded index), IDFs and the average length are the corpus's, so the scores are those one store
   * holding every shard's rows would give.
   */
  search(query: string, k: number, filters: SearchFilters, corpus?: Bm25Corpus): SearchHit[] {
    const texts = ftsPhrases(query);
    if (texts.length === 0) return [];
    const tokens = this.#tokens.tokens(texts);
    if (corpus !== undefined) {
      const phrases = texts.filter((_, i) => tokens[i]!.length !== 1);
      if (phrases.length > 0) throw multiTokenPhraseError(phrases);
      return this.#read(() => this.#search(texts.map((text, i) => ({ text, token: tokens[i]![0]! })), k, filters, corpus));
    }
    // A word run FTS5 splits into several tokens is a phrase (tokens in sequence): left to FTS5 itself.
    if (tokens.some((t) => t.length !== 1)) {
      // Postings unknown here (a multi-token phrase's are not any one token's): reported as none.
      this.lastTrace = { passes: 1, boundedPhrases: 0, candidates: 0, exhaustive: true, postings: { scored: 0, all: 0 } };
      return this.#exhaustive.search(query, k, filters);
    }
    return this.#read(() => this.#search(texts.map((text, i) => ({ text, token: tokens[i]![0]! })), k, filters));
  }

  /**
   * What this searcher holds between searches, for tests and reports: the score accumulator's bytes, the
   * deleted chunks it skips and the unbatched chunks it keeps (see PostingScores and TermPostingsReader).
   */
  held(): { accumulatorBytes: number; deadRows: number; tailChunks: number } {
    return { accumulatorBytes: this.#scores.bytes, ...this.#postings.held };
  }

  #search(words: readonly { text: string; token: string }[], k: number, filters: SearchFilters, corpus?: Bm25Corpus): SearchHit[] {
    const local = this.#stats.totals();
    if (local.rows === 0) return [];
    const { rows, tokens } = corpus ?? local;
    this.#postings.refresh();
    const avgdl = tokens / rows;
    // `df` (this store's) sizes the work; the IDF is the corpus's.
    const phrases: Phrase[] = words.map(({ text, token }) => {
      const { id, df } = this.#stats.term(token);
      const idf = bm25Idf(rows, corpus === undefined ? df : (corpus.df[token] ?? 0));
      return { text, token, id, df, idf, bound: idf * (BM25_K1 + 1) };
    });
    const all = phrases.reduce((n, p) => n + p.df, 0);
    const params = filterParams(filters);
    const filtered = params.docIds !== null || params.sources !== null;
    this.#scope = !filtered ? { own: true } : corpus === undefined ? { own: false } : { own: true, allowed: new Set(this.#allowedRows.all(params)) };
    const own = this.#scope.own;
    // Few postings in all: every match scored, as FTS5 ranks them, with nothing to prune. Without filters from
    // term_postings here; with them by FTS5, joined to the filtered chunks.
    if (all <= SMALL_POSTINGS) {
      this.lastTrace = { passes: 1, boundedPhrases: 0, candidates: 0, exhaustive: true, postings: { scored: all, all } };
      if (own) return this.#scoredTopK(phrases, k, avgdl);
      // The phrases joined by spaces give toFtsMatch the same phrases back.
      return this.#exhaustive.search(words.map((w) => w.text).join(" "), k, filters);
    }
    // Bounded phrases are taken from the low-bound end; the FTS5 side always keeps at least one phrase.
    const byBound = phrases.map((p, i) => ({ p, i })).sort((a, b) => a.p.bound - b.p.bound || a.i - b.i);
    const boundOf = (n: number) => byBound.slice(0, n).reduce((sum, x) => sum + x.p.bound, 0);
    // A probe first: FTS5 ranks the rows of the rarest phrases only (short postings), and the best k of them
    // get their exact scores. θ is at least the k-th of those (L). Phrases are bounded while their bounds add
    // up to less than half of L: a row holding none of the rest then cannot reach the top k, and the rows that
    // need completing are those whose partial score is within the bound of θ, a short stretch of the ranking.
    // Phrases FTS5 gives an IDF of 1e-6 (in more than half the rows: "the", "of") are bounded whatever L is.
    // Without filters the postings are scored here, at tens of nanoseconds each: up to OWN_SCAN postings of
    // the words that are not in most rows are cheaper to score outright than to prune (the rows completed
    // near θ cost microseconds each), so only the IDF-1e-6 words are bounded and no probe is needed.
    const unfiltered = own;
    const scan = phrases.reduce((n, p) => n + (p.idf <= 1e-6 ? 0 : p.df), 0);
    const floorOfProbe = unfiltered && scan <= this.#ownScan ? -Infinity : this.#probe(byBound, k, params, avgdl);
    let bounded = 0;
    while (bounded < phrases.length - 1 && (byBound[bounded]!.p.idf <= 1e-6 || boundOf(bounded + 1) < floorOfProbe / 2)) bounded++;
    let completed = k;
    for (let passes = 2; ; passes++) {
      const common = byBound.slice(0, bounded).map((x) => x.p);
      // The FTS5 side in the query's own phrase order, as the exhaustive query lists them.
      const rare = byBound.slice(bounded).sort((a, b) => a.i - b.i);
      const commonBound = boundOf(bounded);
      // FTS5 scores every row of the rare phrases and sorts them once; rows are read best first and completed
      // until a row's partial score plus the bound falls below the k-th best exact score so far.
      const top: Candidate[] = [];
      let theta = -Infinity;
      // Completed in groups (one read of their counts each): k at first, doubling to COMPLETE_GROUP, so a query
      // that stops early completes few more rows than it needs. θ from the groups done so far is a lower bound
      // on the final one, so stopping on it is safe.
      const pending: Candidate[] = [];
      let group = k;
      const completePending = () => {
        if (common.length > 0) this.#complete(pending, common, avgdl);
        for (const c of pending) insertRanked(top, c, k);
        completed += pending.length;
        pending.length = 0;
        group = Math.min(COMPLETE_GROUP, group * 2);
        if (top.length >= k) theta = top[k - 1]!.score;
      };
      let scoreAll = false;
      for (const r of this.#ranked(rare.map((x) => x.p), params, avgdl, k, commonBound)) {
        if (top.length >= k && r.partial + commonBound < theta) break;
        if (!this.#live(r.rowid)) continue;
        pending.push(unfiltered ? { rowid: r.rowid, partial: r.partial, score: r.partial, length: this.#scores.lengthOf(r.rowid) } : { rowid: r.rowid, partial: r.partial, score: r.partial });
        if (pending.length >= group) {
          if (unfiltered && this.#ownScan > 0 && (completed + pending.length) * COMPLETION_POSTINGS > all) {
            scoreAll = true;
            break;
          }
          completePending();
        }
      }
      if (scoreAll) {
        this.lastTrace = { passes, boundedPhrases: 0, candidates: completed, exhaustive: true, postings: { scored: all, all }, completionsCapped: true };
        return this.#scoredTopK(phrases, k, avgdl);
      }
      completePending();
      if (common.length === 0 || commonBound < theta) {
        const scored = rare.reduce((n, x) => n + x.p.df, 0);
        this.lastTrace = { passes, boundedPhrases: common.length, candidates: completed, exhaustive: false, postings: { scored, all } };
        return top.map((c) => ({ ...this.#row.get(c.rowid)!, score: c.score }));
      }
      // A row holding only bounded phrases could still reach the top k: bound fewer, below the θ found.
      do bounded--;
      while (bounded > 0 && boundOf(bounded) >= theta);
      // None bounded is FTS5's own ranking of every match: asked of FTS5 directly, it costs no probe or pass.
      if (bounded === 0) {
        this.lastTrace = { passes: passes + 1, boundedPhrases: 0, candidates: completed, exhaustive: true, postings: { scored: all, all } };
        if (own) return this.#scoredTopK(phrases, k, avgdl);
        return this.#exhaustive.search(words.map((w) => w.text).join(" "), k, filters);
      }
    }
  }

  /**
   * The rows holding any of `phrases`, best partial score first (ties by rowid), as FTS5's `ORDER BY rank,
   * rowid` gives them. Without filters the postings are scored here, from term_postings: the same sum in the
   * same phrase order as FTS5's bm25(), at a fraction of its cost per posting; they may name chunks deleted
   * since (see #live), and rows that cannot reach the top k even with `slack` added are left out (see
   * PostingScores.ranked). With filters FTS5 ranks them all, joined to the filtered chunks.
   */
  #ranked(phrases: readonly Phrase[], params: ReturnType<typeof filterParams>, avgdl: number, k: number, slack: number): Iterable<{ rowid: number; partial: number }> {
    if (this.#scope.own) return this.#scored(phrases, avgdl, k, slack);
    return this.#partial.iterate({ match: phrasesMatch(phrases.map((p) => p.text)), ...params });
  }

  #scored(phrases: readonly Phrase[], avgdl: number, k: number, slack: number): Iterable<{ rowid: number; partial: number }> {
    const scores = this.#scores;
    for (const p of phrases) {
      for (const [last, blob] of this.#postings.batches(p.id)) scores.addBlob(blob, last, p.idf, avgdl);
      scores.addTriples(this.#postings.tail(p.id), p.idf, avgdl);
    }
    return scores.ranked(k, slack, (rowid) => this.#liveHere(rowid));
  }

  /** Every match scored from term_postings, nothing pruned: the best k live rows. */
  #scoredTopK(phrases: readonly Phrase[], k: number, avgdl: number): SearchHit[] {
    const top: { rowid: number; partial: number }[] = [];
    for (const r of this.#scored(phrases, avgdl, k, 0)) {
      if (top.length === k) break;
      if (this.#liveHere(r.rowid)) top.push(r);
    }
    return top.map((r) => ({ ...this.#row.get(r.rowid)!, score: r.partial }));
  }

  /** Postings scored here can name chunks deleted after their batch was written: those are not results. */
  #live(rowid: number): boolean {
    return !this.#scope.own || this.#liveHere(rowid);
  }

  /** A row scored here from term_postings that may be returned: not deleted since, and allowed by the filters. */
  #liveHere(rowid: number): boolean {
    return !this.#postings.deleted(rowid) && (this.#scope.allowed?.has(rowid) ?? true);
  }

  /**
   * The k-th best exact score among the rows FTS5 ranks best on the rarest phrases alone (enough of them to
   * hold about 4k rows), or −∞ when they hold fewer than k rows: a lower bound on θ.
   */
  #probe(byBound: readonly { p: Phrase; i: number }[], k: number, params: ReturnType<typeof filterParams>, avgdl: number): number {
    const rarest: { p: Phrase; i: number }[] = [];
    let postings = 0;
    for (let j = byBound.length - 1; j >= 0 && postings < 4 * k; j--) {
      rarest.push(byBound[j]!);
      postings += byBound[j]!.p.df;
    }
    if (postings < k) return -Infinity;
    const inProbe = new Set(rarest.map((x) => x.i));
    const rest = byBound.filter((x) => !inProbe.has(x.i)).map((x) => x.p);
    const ranked: { rowid: number; partial: number }[] = [];
    for (const r of this.#ranked(rarest.sort((a, b) => a.i - b.i).map((x) => x.p), params, avgdl, k, 0)) {
      if (!this.#live(r.rowid)) continue;
      ranked.push(r);
      if (ranked.length === k) break;
    }
    if (ranked.length < k) return -Infinity;
    const candidates: Candidate[] = ranked.map((r) => ({ rowid: r.rowid, partial: r.partial, score: r.partial }));
    if (rest.length > 0) this.#complete(candidates, rest, avgdl);
    return Math.min(...candidates.map((c) => c.score));
  }

  /** Adds the bounded phrases' exact shares to each candidate's partial score, from the chunk's recorded token counts. */
  #complete(candidates: Candidate[], common: readonly Phrase[], avgdl: number): number {
    // The counts blob lists term ids ascending: looked up in that order, added in `common`'s (as before).
    // Two words of one stem are two phrases of one id: each reads that id's count.
    const ids = [...new Set(common.map((p) => p.id))].sort((a, b) => a - b);
    const slot = common.map((p) => ids.indexOf(p.id));
    const tf = this.#tf;
    const blobs = this.#counts.blobs(candidates.map((c) => c.rowid).sort((a, b) => a - b));
    for (const c of candidates) {
      const blob = blobs.get(c.rowid);
      let score = c.partial;
      if (blob !== undefined) {
        termCountsOf(blob, ids, tf);
        let docTokens = c.length;
        for (let j = 0; j < common.length; j++) {
          const n = tf[slot[j]!]!;
          if (n === 0) continue;
          if (docTokens === undefined) {
            const size = this.#docsize.get(c.rowid);
            docTokens = size === undefined ? 0 : readVarint(size.sz, 0).value;
          }
          score += common[j]!.idf * bm25TermPart(n, docTokens, avgdl);
        }
      }
      c.score = score;
    }
    return candidates.length;
  }
}

/** Inserts c into `top` (best first, ties by rowid), keeping at most k. */
function insertRanked(top: Candidate[], c: Candidate, k: number): void {
  let at = top.length;
  while (at > 0 && (top[at - 1]!.score < c.score || (top[at - 1]!.score === c.score && top[at - 1]!.rowid > c.rowid))) at--;
  if (at >= k) return;
  top.splice(at, 0, c);
  if (top.length > k) top.pop();
}

/** A sharded index ranks single tokens only: a phrase's frequency is not a sum of its tokens'. */
export function multiTokenPhraseError(phrases: readonly string[]): InvalidQueryError {
  const list = phrases.map((p) => JSON.stringify(p)).join(", ");
  return new InvalidQueryError(
    `the query's word run${phrases.length > 1 ? "s" : ""} ${list} ${phrases.length > 1 ? "are" : "is"} several tokens to the full-text index, ranked as a phrase, which a sharded index cannot score exactly across shards; separate the parts with spaces`,
  );
}
