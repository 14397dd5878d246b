// The occlusion scheduler: A_full and one greedy answer per occluded chunk set, with three strategies that
// must give the same tokens (up to llama.cpp's floating-point differences between batch shapes):
//   naive          each prompt alone on a cleared KV cache;
//   prefix-shared  the full prompt once, each occluded prompt gets the shared prefix by llama_memory_seq_cp,
//                  all suffixes prefilled in one multi-sequence batch, then one batched decode per step;
//   speculative    as prefix-shared, plus A_full's tokens as a draft verified in the same batches.
// and two APPROXIMATE strategies (opt-in, measured against exact, see KvReuse.h), which reuse the full
// prompt's KV cells after the occluded set instead of recomputing them and decode with A_full as the draft:
//   kv-reuse       the kept cells are shifted back over the gap (llama.cpp's RoPE shift);
//   kv-mask        the kept cells keep their positions (no shift).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "DecodeScheduler.h"
#include "KvReuse.h"
#include "llama.h"

namespace attr_rag {

enum class Strategy { Naive = 0, PrefixShared = 1, Speculative = 2, KvReuse = 3, KvMask = 4 };

inline bool isApproximate(Strategy s) { return s == Strategy::KvReuse || s == Strategy::KvMask; }
enum class Finish { Eog = 0, Stop = 1, Length = 2 };

struct OcclusionRequest {
  std::vector<llama_token> prefix;                // template head, system, question (BOS included)
  std::vector<std::vector<llama_token>> blocks;   // one per chunk set, in prompt order
  std::vector<llama_token> suffix;                // instruction, template tail
  std::vector<int32_t> occlude;                   // block indices to occlude
  std::vector<llama_token> givenFull;             // A_full supplied by the caller (skips generating it)
  bool hasGivenFull = false;
  bool givenFullEndsWithEog = false;
  int32_t maxTokens = 128;
  std::vector<std::string> stops;
  Strategy strategy = Strategy::Speculative;
  int32_t draftInitial = 16;
  int32_t draftMax = 128;
  int32_t maxParallel = 0;                        // occluded sequences per wave; 0 = as many as fit
  int32_t gapTokens = 0;                          // approximate strategies: recomputed right after the set
  int32_t tailTokens = -1;                        // ... and at the end of the prompt; < 0 = the suffix
  bool kvUnified = true;                          // set by the context: how its KV cache is laid out
  // Forced mode (approximate strategies, givenFull required): no decoding; each occluded sequence is
  // teacher-forced along forced[k] (see Forced.cpp).
  std::vector<std::vector<llama_token>> forced;
  bool hasForced = false;
  bool pairExact = false;
  // Exact strategies: also teacher-force A_full after every occluded prompt (reusing its KV cells once its own
  // answer is done), after the full prompt and after the prompt with no sets: per-token log-probabilities for
  // sentence-level attribution (see AnswerScores).
  bool scoreAnswer = false;
};

// log P(A_full[i] | prompt) for every token of A_full, under the full prompt, each occluded prompt (parallel
// to request.occlude) and the prompt without any set.
struct AnswerScores {
  std::vector<float> full;
  std::vector<std::vector<float>> occluded;
  std::vector<float> empty;
};

// A teacher-forced occluded sequence (forced mode): how the approximate cache scores the forced tokens, and,
// with pairExact, how its next-token distributions compare with the exact cache's along them.
struct ForcedStats {
  int32_t steps = 0;
  double logProb = 0;       // Σ log P(forced token) under the approximate cache
  double exactLogProb = 0;  // the same under the exact cache (pairExact)
  double kl = 0;            // Σ KL(exact || approximate) over steps (pairExact)
  int32_t top1Agree = 0;    // steps where both caches' greedy tokens are the same (pairExact)
};

struct SequenceResult {
  std::vector<llama_token> tokens;
  std::vector<float> margins;  // top-1 minus top-2 logit at each generated token
  Finish finish = Finish::Length;
};

struct OcclusionCounters {
  long long promptTokens = 0;     // Σ over the n+1 prompts of their length
  long long tokensEvaluated = 0;  // tokens submitted to llama_decode (drafts and retries included)
  long long tokensReused = 0;     // prompt tokens taken from a shared prefix (or reused cells) instead of recomputed
  long long prefixFromOtherJobs = 0;  // of those, full-prompt positions copied from another running job's prompt
  long long draftProposed = 0;
  long long draftAccepted = 0;
  long long decodeSteps = 0;      // llama_decode calls that extend answers (sequential steps)
  long long prefillCalls = 0;     // llama_decode calls that only prefill prompts
  long long waves = 0;
  long long forcedRows = 0;       // scoreAnswer: rows that teacher-force A_full (not counted as answer tokens)
  long long forcedCalls = 0;      // scoreAnswer: llama_decode calls that carried only such rows
  double prefillMs = 0, fullMs = 0, occludedMs = 0, totalMs = 0;
};

struct OcclusionResult {
  SequenceResult full;
  std::vector<ForcedStats> forced;  // forced mode: parallel to request.occlude
  double fullLogProb = 0;           // forced mode: Σ log P(givenFull | full prompt)
  std::vector<SequenceResult> occluded;  // parallel to request.occlude
  OcclusionCounters counters;
  bool hasScores = false;            // scoreAnswer
  AnswerScores scores;
};

// Progress: (kind, index, token) with kind 0 = A_full token, 1 = occluded sequence `index` finished.
using OcclusionProgress = std::function<void(int kind, int index, llama_token token)>;

// KV cells a request needs at peak with `parallel` occluded sequences per wave: in the unified cache in
// total, in a per-sequence cache (kvUnified = false) per sequence (see Occlusion.cpp).
long long occlusionCellsNeeded(const OcclusionRequest& req, int parallel);

std::vector<llama_token> fullPromptOf(const OcclusionRequest& req);
llama_pos blockStartOf(const OcclusionRequest& req, int32_t j);
// Tokens of the prompt without block j after the prefix it shares with the full prompt.
std::vector<llama_token> occludedSuffixOf(const OcclusionRequest& req, int32_t j);

// The approximate strategies' plan for occluding block j of the request's full prompt `full`.
ReusePlan reusePlan(const OcclusionRequest& req, const std::vector<llama_token>& full, int32_t j);

// Forced mode: KV cells a request needs with `parallel` occluded sets per wave (unified: in total; per-sequence
// streams: per sequence), and the sequences one set uses (2 with pairExact).
long long forcedCellsNeeded(const OcclusionRequest& req, int parallel);
int forcedSequencesPerSet(const OcclusionRequest& req);

// Both run on the job's lane: its sequences (0 = the full prompt) and its share of the KV cache.
OcclusionResult runForced(Lane& lane, const OcclusionRequest& req);

OcclusionResult runOcclusion(Lane& lane, const OcclusionRequest& req, const OcclusionProgress& progress);

}  // namespace attr_rag
