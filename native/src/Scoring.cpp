#include "Scoring.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "DecodeScheduler.h"
#include "Greedy.h"
#include "SharedPrefix.h"

namespace attr_rag {
namespace {

// First block index a coalition leaves out (blocks.size() when it has them all).
size_t firstMissing(const std::vector<int32_t>& coalition, size_t nBlocks) {
  size_t f = 0;
  for (int32_t b : coalition) {
    if (static_cast<size_t>(b) != f) break;
    f++;
  }
  return std::min(f, nBlocks);
}

// What a coalition feeds after the prefix it shares with the all-sets prompt: its remaining blocks, the
// suffix, and the continuation without its last token (which predicts nothing we score).
std::vector<llama_token> tailAfter(const ScoreRequest& req, const std::vector<int32_t>& coalition, size_t from) {
  std::vector<llama_token> t;
  for (int32_t b : coalition) {
    if (static_cast<size_t>(b) >= from) t.insert(t.end(), req.blocks[b].begin(), req.blocks[b].end());
  }
  t.insert(t.end(), req.suffix.begin(), req.suffix.end());
  if (!req.continuation.empty()) t.insert(t.end(), req.continuation.begin(), req.continuation.end() - 1);
  return t;
}

std::vector<int32_t> allBlocks(size_t n) {
  std::vector<int32_t> all(n);
  for (size_t i = 0; i < n; i++) all[i] = static_cast<int32_t>(i);
  return all;
}

// Items for `tokens` on sequence `seq` from `pos`; the last T items carry outputs tagged 0..T-1.
void addScored(std::vector<BatchItem>& items, const std::vector<llama_token>& tokens, llama_pos pos, llama_seq_id seq,
               int32_t tag, const std::vector<llama_token>& continuation) {
  const size_t T = continuation.size();
  const size_t firstOut = tokens.size() - T;
  for (size_t i = 0; i < tokens.size(); i++) {
    const bool out = i >= firstOut;
    items.push_back({tokens[i], pos + static_cast<llama_pos>(i), seq, out, tag, out ? static_cast<int32_t>(i - firstOut) : 0,
                     out ? continuation[i - firstOut] : -1});
  }
}

// Tokens a coalition's prompt has before its tail when it shares its first `sharedBlocks` sets.
llama_pos sharedLength(const ScoreRequest& req, const std::vector<int32_t>& coalition, size_t sharedBlocks) {
  size_t n = req.prefix.size();
  for (size_t i = 0; i < sharedBlocks; i++) n += req.blocks[coalition[i]].size();
  return static_cast<llama_pos>(n);
}

struct WavePlan {
  size_t index;            // coalition index in the request
  llama_seq_id seq;        // its sequence in this wave
  llama_seq_id source;     // where its shared prefix is copied from (0: the full prompt)
  llama_pos shared;        // positions copied
  size_t fromBlock;        // first block index of its tail
  int round;               // decode round: after its source's
};

// For each coalition of pending[start, end): the sequence holding the longest prefix it shares, among the
// full prompt and the wave's earlier coalitions (a trie: every shared set is decoded once per wave).
std::vector<WavePlan> planWave(const ScoreRequest& req, const std::vector<size_t>& pending, size_t start, size_t end) {
  std::vector<WavePlan> plans;
  for (size_t k = start; k < end; k++) {
    const auto& c = req.coalitions[pending[k]];
    size_t sharedBlocks = firstMissing(c, req.blocks.size());
    WavePlan p{pending[k], static_cast<llama_seq_id>(1 + (k - start)), 0, sharedLength(req, c, sharedBlocks), 0, 0};
    for (const auto& earlier : plans) {
      const auto& e = req.coalitions[earlier.index];
      size_t common = 0;
      while (common < c.size() && common < e.size() && c[common] == e[common]) common++;
      const llama_pos length = sharedLength(req, c, common);
      if (length > p.shared) {
        p.shared = length;
        p.source = earlier.seq;
        p.round = earlier.round + 1;
        sharedBlocks = common;
      }
    }
    p.fromBlock = sharedBlocks < c.size() ? static_cast<size_t>(c[sharedBlocks]) : req.blocks.size();
    plans.push_back(p);
  }
  return plans;
}

}  // namespace

long long scoreCellsNeeded(const ScoreRequest& req, int parallel) {
  const auto all = allBlocks(req.blocks.size());
  const long long full = static_cast<long long>(req.prefix.size() + tailAfter(req, all, 0).size());
  if (!req.kvUnified) return full;  // per-sequence streams: no coalition is longer than the full prompt
  std::vector<long long> tails;
  for (const auto& c : req.coalitions) {
    tails.push_back(static_cast<long long>(tailAfter(req, c, firstMissing(c, req.blocks.size())).size()));
  }
  std::sort(tails.rbegin(), tails.rend());
  long long cells = full;
  for (int k = 0; k < parallel && k < static_cast<int>(tails.size()); k++) cells += tails[k];
  return cells;
}

ScoreResult runScoring(Lane& lane, const ScoreRequest& req) {
  const auto t0 = std::chrono::steady_clock::now();
  if (req.suffix.empty()) throw std::runtime_error("scoring needs a non-empty suffix before the continuation");
  const size_t T = req.continuation.size();
  const auto all = allBlocks(req.blocks.size());

  ScoreResult result;
  result.logProbs.assign(req.coalitions.size(), std::vector<float>(T, 0.0f));
  result.totals.assign(req.coalitions.size(), 0.0);
  std::vector<float> fullLogProbs(T, 0.0f);
  BatchStats stats;
  auto onOutput = [&](const OutputRow& row, const BatchItem& item) {
    const float lp = static_cast<float>(row.logProb(req.continuation[item.tag2]));
    (item.tag < 0 ? fullLogProbs : result.logProbs[item.tag])[item.tag2] = lp;
  };

  lane.clear();
  try {
    std::vector<BatchItem> items;
    std::vector<llama_token> full(req.prefix);
    const auto fullTail = tailAfter(req, all, 0);
    full.insert(full.end(), fullTail.begin(), fullTail.end());
    addScored(items, full, 0, 0, -1, req.continuation);
    lane.run(items, onOutput, stats);

    std::vector<size_t> pending;
    for (size_t c = 0; c < req.coalitions.size(); c++) {
      if (req.coalitions[c] == all) {
        result.logProbs[c] = fullLogProbs;
      } else {
        pending.push_back(c);
      }
    }
    // The job's reservation, not the whole context: other jobs hold the rest.
    const long long cells = lane.cells();
    int parallel = static_cast<int>(std::min<size_t>(pending.size(), static_cast<size_t>(std::max(1, lane.sequences() - 1))));
    if (req.maxParallel > 0) parallel = std::min(parallel, req.maxParallel);
    while (parallel > 1 && scoreCellsNeeded(req, parallel) > cells) parallel--;
    if (!pending.empty() && scoreCellsNeeded(req, 1) > cells) {
      throw std::runtime_error("the KV cache cannot hold the scoring prompts (" + std::to_string(scoreCellsNeeded(req, 1)) +
                               " cells needed, context has " + std::to_string(cells) + "); use a larger contextSize");
    }
    // Coalitions in trie order (lexicographic over their set indices in prompt order): those sharing leading
    // sets land in the same wave, where each copies its deepest shared prefix instead of decoding it again.
    std::stable_sort(pending.begin(), pending.end(), [&](size_t a, size_t b) {
      const auto& x = req.coalitions[a];
      const auto& y = req.coalitions[b];
      return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
    });
    for (size_t start = 0; start < pending.size(); start += parallel) {
      const size_t end = std::min(pending.size(), start + parallel);
      const auto plans = planWave(req, pending, start, end);
      int rounds = 0;
      for (const auto& p : plans) rounds = std::max(rounds, p.round + 1);
      // A round decodes every coalition whose source finished in an earlier round (the full prompt is round -1).
      for (int round = 0; round < rounds; round++) {
        items.clear();
        for (const auto& p : plans) {
          if (p.round != round) continue;
          const auto& coalition = req.coalitions[p.index];
          sharePrefixFrom(lane, p.source, p.seq, p.shared);
          result.counters.tokensReused += p.shared;
          addScored(items, tailAfter(req, coalition, p.fromBlock), p.shared, p.seq, static_cast<int32_t>(p.index), req.continuation);
        }
        lane.run(items, onOutput, stats);
      }
      for (const auto& p : plans) lane.seqRm(p.seq, -1, -1);
      result.counters.waves++;
    }
  } catch (...) {
    lane.clear();
    throw;
  }
  lane.clear();
  for (size_t c = 0; c < req.coalitions.size(); c++) {
    double total = 0;
    for (float lp : result.logProbs[c]) total += lp;
    result.totals[c] = total;
  }
  result.counters.tokensEvaluated = stats.tokensEvaluated;
  result.counters.decodeCalls = stats.decodeCalls;
  result.counters.totalMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace attr_rag
