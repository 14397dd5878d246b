// Forced mode of the approximate strategies: instead of decoding, every occluded sequence (its cache built
// as kv-reuse or kv-mask would) is teacher-forced along given tokens. Used two ways:
//   screening   forced = A_full for every set: log P(A_full | prompt without S_j) for all j in one pass;
//   fidelity    forced = each exact occluded answer, pairExact: an exact sequence is forced alongside and the
//               two caches' next-token distributions are compared at every step (KL, top-1 agreement).
// Rows of the exact and approximate sequence for the same step are queued next to each other, so at most one
// exact distribution per sequence is held while waiting for its partner.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "DecodeScheduler.h"
#include "Greedy.h"
#include "KvReuse.h"
#include "Occlusion.h"
#include "SharedPrefix.h"

namespace attr_rag {
namespace {

void logSoftmax(const float* logits, int32_t n, std::vector<double>& out) {
  out.resize(static_cast<size_t>(n));
  float maxv = -std::numeric_limits<float>::infinity();
  for (int32_t i = 0; i < n; i++) maxv = std::max(maxv, logits[i]);
  double sum = 0;
  for (int32_t i = 0; i < n; i++) sum += std::exp(static_cast<double>(logits[i]) - maxv);
  const double lse = maxv + std::log(sum);
  for (int32_t i = 0; i < n; i++) out[i] = static_cast<double>(logits[i]) - lse;
}

size_t argmax(const std::vector<double>& v) { return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin()); }

struct ForcedSeq {
  size_t k = 0;                 // index into request.occlude
  llama_seq_id approx = 0, exact = -1;
  ReusePlan plan;
  std::vector<llama_token> exactFeed;  // prompt after the shared prefix (pairExact)
};

// Prompt items of one sequence, all without output except the last (its row predicts forced[0]).
void addPrompt(std::vector<BatchItem>& items, const std::vector<llama_token>& feed, llama_pos pos, llama_seq_id seq, int32_t tag,
               int32_t kind, bool lastOutputs) {
  for (size_t i = 0; i < feed.size(); i++) {
    const bool out = lastOutputs && i + 1 == feed.size();
    items.push_back({feed[i], pos + static_cast<llama_pos>(i), seq, out, tag, out ? kind : -1});
  }
}

}  // namespace

int forcedSequencesPerSet(const OcclusionRequest& req) { return req.pairExact ? 2 : 1; }

long long forcedCellsNeeded(const OcclusionRequest& req, int parallel) {
  long long L = static_cast<long long>(req.prefix.size() + req.suffix.size());
  for (const auto& b : req.blocks) L += static_cast<long long>(b.size());
  const long long seq0 = L + std::max<long long>(0, static_cast<long long>(req.givenFull.size()) - 1);
  size_t longest = 0;
  for (const auto& f : req.forced) longest = std::max(longest, f.size());
  const long long perSeq = L + static_cast<long long>(longest);
  if (!req.kvUnified) return std::max(seq0, perSeq);
  return seq0 + static_cast<long long>(parallel) * forcedSequencesPerSet(req) * perSeq;
}

OcclusionResult runForced(Lane& lane, const OcclusionRequest& req) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!isApproximate(req.strategy)) throw std::runtime_error("forced mode needs an approximate strategy");
  if (!req.hasGivenFull) throw std::runtime_error("forced mode needs givenFull (A_full)");
  if (req.forced.size() != req.occlude.size()) throw std::runtime_error("forced mode needs one token list per occluded set");
  const int32_t nVocab = llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(lane.ctx())));
  const bool shift = req.strategy == Strategy::KvReuse;
  const std::vector<llama_token> full = fullPromptOf(req);

  OcclusionResult result;
  result.forced.resize(req.occlude.size());
  result.full.tokens = req.givenFull;
  BatchStats stats;
  std::vector<double> row;
  // Exact rows waiting for their approximate partner, per sequence of the wave.
  std::vector<std::vector<double>> pending;

  lane.clear();
  try {
    // The full prompt, with A_full teacher-forced after it (its log-probability is the screening baseline).
    std::vector<BatchItem> items;
    std::vector<llama_token> seq0(full);
    if (!req.givenFull.empty()) seq0.insert(seq0.end(), req.givenFull.begin(), req.givenFull.end() - 1);
    for (size_t i = 0; i < seq0.size(); i++) {
      const bool out = !req.givenFull.empty() && i + 1 >= full.size();
      items.push_back({seq0[i], static_cast<llama_pos>(i), 0, out, 0, out ? static_cast<int32_t>(i + 1 - full.size()) : 0,
                       out ? req.givenFull[i + 1 - full.size()] : -1});
    }
    lane.run(items, [&](const OutputRow& row, const BatchItem& item) {
      result.fullLogProb += row.logProb(req.givenFull[item.tag2]);
    }, stats);
    result.counters.prefillCalls = stats.decodeCalls;

    // The job's reservation, not the whole context: other jobs hold the rest.
    const int perSet = forcedSequencesPerSet(req);
    int parallel = std::max(1, (lane.sequences() - 1) / perSet);
    if (req.maxParallel > 0) parallel = std::min(parallel, req.maxParallel);
    size_t longest = 0;
    for (const auto& f : req.forced) longest = std::max(longest, f.size());
    while (parallel > 1 && forcedCellsNeeded(req, parallel) > lane.cells()) parallel--;
    if (!req.occlude.empty() && (forcedCellsNeeded(req, 1) > lane.cells() || lane.sequences() < 1 + perSet)) {
      throw std::runtime_error("the KV cache cannot hold the forced sequences (" + std::to_string(forcedCellsNeeded(req, 1)) +
                               " cells needed, the job holds " + std::to_string(lane.cells()) + "); use a larger contextSize");
    }

    for (size_t start = 0; start < req.occlude.size(); start += parallel) {
      const size_t end = std::min(req.occlude.size(), start + parallel);
      std::vector<ForcedSeq> wave;
      llama_seq_id next = 1;
      for (size_t k = start; k < end; k++) {
        if (req.forced[k].empty()) continue;  // nothing to score: the answer was empty
        ForcedSeq f;
        f.k = k;
        const int32_t j = req.occlude[k];
        f.plan = reusePlan(req, full, j);
        f.approx = next++;
        beginReuse(lane, shift, f.approx, f.plan);
        if (req.pairExact) {
          f.exact = next++;
          sharePrefix(lane, f.exact, blockStartOf(req, j));
          f.exactFeed = occludedSuffixOf(req, j);
        }
        wave.push_back(std::move(f));
      }
      items.clear();
      for (const auto& f : wave) {
        for (size_t i = 0; i < f.plan.gapFeed.size(); i++) {
          items.push_back({f.plan.gapFeed[i], f.plan.setStart + static_cast<llama_pos>(i), f.approx, false, 0, 0});
        }
      }
      if (!items.empty()) lane.run(items, [](const OutputRow&, const BatchItem&) {}, stats);
      for (const auto& f : wave) finishReuse(lane, f.approx, f.plan);

      // Prompts (all but their last token), then per step the exact row followed by the approximate row.
      items.clear();
      std::vector<llama_pos> exactPos(wave.size()), approxPos(wave.size());
      for (size_t w = 0; w < wave.size(); w++) {
        const auto& f = wave[w];
        const int32_t tag = static_cast<int32_t>(w);
        if (req.pairExact) {
          const llama_pos p0 = blockStartOf(req, req.occlude[f.k]);
          addPrompt(items, std::vector<llama_token>(f.exactFeed.begin(), f.exactFeed.end() - 1), p0, f.exact, tag, 0, false);
          exactPos[w] = p0 + static_cast<llama_pos>(f.exactFeed.size()) - 1;
        }
        addPrompt(items, std::vector<llama_token>(f.plan.tailFeed.begin(), f.plan.tailFeed.end() - 1), f.plan.tailPos, f.approx, tag, 1,
                  false);
        approxPos[w] = f.plan.tailPos + static_cast<llama_pos>(f.plan.tailFeed.size()) - 1;
      }
      for (size_t t = 0; t < longest; t++) {
        for (size_t w = 0; w < wave.size(); w++) {
          const auto& f = wave[w];
          const auto& forced = req.forced[f.k];
          if (t >= forced.size()) continue;
          const int32_t tag = static_cast<int32_t>(w);
          const llama_token exactTok = t == 0 ? f.exactFeed.empty() ? 0 : f.exactFeed.back() : forced[t - 1];
          const llama_token approxTok = t == 0 ? f.plan.tailFeed.back() : forced[t - 1];
          if (req.pairExact) items.push_back({exactTok, exactPos[w]++, f.exact, true, tag, static_cast<int32_t>(2 * t), forced[t]});
          items.push_back({approxTok, approxPos[w]++, f.approx, true, tag, static_cast<int32_t>(2 * t + 1), forced[t]});
        }
      }
      pending.assign(wave.size(), {});
      lane.run(items, [&](const OutputRow& out, const BatchItem& item) {
        const auto& f = wave[item.tag];
        ForcedStats& st = result.forced[f.k];
        const size_t t = static_cast<size_t>(item.tag2 / 2);
        const llama_token target = req.forced[f.k][t];
        if (item.tag2 % 2 == 0) {
          logSoftmax(out.full(), nVocab, pending[item.tag]);
          st.exactLogProb += pending[item.tag][target];
          return;
        }
        st.steps++;
        if (!req.pairExact) {
          st.logProb += out.logProb(target);
          return;
        }
        logSoftmax(out.full(), nVocab, row);
        st.logProb += row[target];
        if (!req.pairExact) return;
        const auto& ref = pending[item.tag];
        double kl = 0;
        for (int32_t i = 0; i < nVocab; i++) kl += std::exp(ref[i]) * (ref[i] - row[i]);
        st.kl += std::max(0.0, kl);
        if (argmax(ref) == argmax(row)) st.top1Agree++;
      }, stats);
      for (const auto& f : wave) {
        lane.seqRm(f.approx, -1, -1);
        if (f.exact >= 0) lane.seqRm(f.exact, -1, -1);
        result.counters.tokensReused += f.plan.reused;
      }
      result.counters.waves++;
    }
  } catch (...) {
    lane.clear();
    throw;
  }
  lane.clear();
  result.counters.tokensEvaluated = stats.tokensEvaluated;
  result.counters.totalMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace attr_rag
