// Teacher-forced scoring: log P(continuation | question, coalition of chunk sets) for many coalitions in
// batched passes. Coalitions are taken in trie order (lexicographic over their sets in prompt order); each
// copies the longest prefix it shares with the all-sets prompt (up to its first missing set) or with an
// earlier coalition of its wave, so leave-one-out costs about what occlusion's prefill costs and sampled
// coalitions decode each shared run of sets once per wave.
#pragma once

#include <atomic>
#include <vector>

#include "DecodeScheduler.h"
#include "llama.h"

namespace attr_rag {

struct ScoreRequest {
  std::vector<llama_token> prefix;
  std::vector<std::vector<llama_token>> blocks;
  std::vector<llama_token> suffix;
  std::vector<llama_token> continuation;
  std::vector<std::vector<int32_t>> coalitions;  // included block indices, ascending
  int32_t maxParallel = 0;
  bool kvUnified = true;  // set by the context
};

struct ScoreCounters {
  long long tokensEvaluated = 0;
  long long tokensReused = 0;
  long long decodeCalls = 0;
  long long waves = 0;
  double totalMs = 0;
};

struct ScoreResult {
  std::vector<std::vector<float>> logProbs;  // per coalition, per continuation token
  std::vector<double> totals;                // per coalition, Σ log-probs
  ScoreCounters counters;
};

long long scoreCellsNeeded(const ScoreRequest& req, int parallel);

// Runs on the job's lane: its sequences and its share of the KV cache.
ScoreResult runScoring(Lane& lane, const ScoreRequest& req);

}  // namespace attr_rag
