#include "Occlusion.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>

#include "DecodeScheduler.h"
#include "Draft.h"
#include "Greedy.h"
#include "KvReuse.h"
#include "SharedPrefix.h"
#include "TokenText.h"

namespace attr_rag {
namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Seq {
  llama_seq_id id = 0;
  int index = -1;  // -1 = A_full, else index into request.occlude
  SequenceResult* out = nullptr;
  std::vector<llama_token> feed;  // tokens not yet in the KV cache
  bool feedIsPrompt = true;
  llama_pos nPast = 0;
  bool done = false;
  std::string text;  // detokenized answer so far, for stop strings
  DraftState draft;
  // scoreAnswer: once its own answer is done (and A_full is known), the sequence teacher-forces A_full from
  // forceFrom on: forceLead first (its last row predicts A_full[0]), then A_full's tokens, each row scored.
  // An occluded sequence's lead is its last prompt token, so its prompt cells are reused, not prefilled again.
  bool forcePending = false;
  std::vector<llama_token> forceLead;
  llama_pos forceFrom = 0;
  std::vector<float>* forceOut = nullptr;
  // Speculative: this step's draft is all of A_full from its first token, so its rows are the forced ones.
  bool forceInDraft = false;
};

bool finished(const Seq& s) { return s.done && !s.forcePending; }

// Output rows that score A_full carry tag2 = kForceTag + the index of the A_full token they predict.
constexpr int32_t kForceTag = 1 << 30;

class Scheduler {
 public:
  Scheduler(Lane& lane, const OcclusionRequest& req, const OcclusionProgress& progress)
      : lane_(lane),
        vocab_(llama_model_get_vocab(llama_get_model(lane.ctx()))),
        nVocab_(llama_vocab_n_tokens(vocab_)),
        req_(req),
        progress_(progress),
        score_(req.scoreAnswer) {}

  OcclusionResult run() {
    const auto t0 = Clock::now();
    OcclusionResult result;
    result.occluded.resize(req_.occlude.size());
    counters_ = &result.counters;
    fullTokens_ = &result.full.tokens;
    if (score_) {
      result.hasScores = true;
      scores_ = &result.scores;
      scores_->occluded.resize(req_.occlude.size());
    }
    lane_.clear();
    try {
      const std::vector<llama_token> full = fullPromptOf(req_);
      counters_->promptTokens = static_cast<long long>(full.size());
      for (int32_t j : req_.occlude) counters_->promptTokens += static_cast<long long>(full.size() - req_.blocks[j].size());
      if (req_.strategy == Strategy::Naive) {
        runNaive(full, result);
      } else {
        runShared(full, result);
      }
    } catch (...) {
      lane_.clear();
      throw;
    }
    lane_.clear();
    counters_->tokensEvaluated = stats_.tokensEvaluated;
    counters_->totalMs = msSince(t0);
    return result;
  }

 private:
  void runNaive(const std::vector<llama_token>& full, OcclusionResult& result) {
    auto t = Clock::now();
    if (req_.hasGivenFull) {
      useGivenFull(result.full);
      if (score_) forceAlone(full, 0, &scores_->full);
    } else {
      generateAlone(0, -1, full, result.full, nullptr);
    }
    counters_->fullMs = msSince(t);
    t = Clock::now();
    for (size_t k = 0; k < req_.occlude.size(); k++) {
      lane_.clear();
      const int32_t j = req_.occlude[k];
      std::vector<llama_token> prompt(full.begin(), full.begin() + blockStartOf(req_, j));
      const auto rest = occludedSuffixOf(req_, j);
      prompt.insert(prompt.end(), rest.begin(), rest.end());
      generateAlone(0, static_cast<int>(k), prompt, result.occluded[k], score_ ? &scores_->occluded[k] : nullptr);
      progress_(1, static_cast<int>(k), 0);
    }
    if (score_) forceEmpty();
    counters_->occludedMs = msSince(t);
    counters_->waves = static_cast<long long>(req_.occlude.size());
  }

  // forceOut: also teacher-force A_full after the prompt once the answer is done (scoreAnswer).
  void generateAlone(llama_seq_id id, int index, const std::vector<llama_token>& prompt, SequenceResult& out, std::vector<float>* forceOut) {
    Seq s;
    s.id = id;
    s.index = index;
    s.out = &out;
    s.feed = prompt;
    if (forceOut != nullptr) armForce(s, static_cast<llama_pos>(prompt.size()), forceOut);
    std::vector<Seq*> active{&s};
    while (!finished(s)) step(active);
  }

  // After its answer, `s` recomputes its last prompt token (at promptEnd - 1) and forces A_full after it.
  void armForce(Seq& s, llama_pos promptEnd, std::vector<float>* out) {
    s.forcePending = true;
    s.forceFrom = promptEnd - 1;
    s.forceLead.assign(1, s.feed.back());
    s.forceOut = out;
  }

  // Teacher-forces A_full after `prompt` on sequence 0 from position `from` (its cells before `from` already
  // hold prompt[0, from)): one batch, no answer generated.
  void forceAlone(const std::vector<llama_token>& prompt, llama_pos from, std::vector<float>* out) {
    Seq f;
    f.id = 0;
    f.done = true;
    f.forcePending = true;
    f.forceFrom = from;
    f.forceLead.assign(prompt.begin() + from, prompt.end());
    f.forceOut = out;
    std::vector<Seq*> alone{&f};
    while (!finished(f)) step(alone);
  }

  // log P(A_full | prompt without any set): sequence 0 keeps the prefix every prompt starts with.
  void forceEmpty() {
    std::vector<llama_token> prompt(req_.prefix);
    prompt.insert(prompt.end(), req_.suffix.begin(), req_.suffix.end());
    forceAlone(prompt, static_cast<llama_pos>(req_.prefix.size()), &scores_->empty);
    lane_.seqRm(0, -1, -1);
  }

  void useGivenFull(SequenceResult& out) {
    out.tokens = req_.givenFull;
    out.margins.assign(out.tokens.size(), 0.0f);
    out.finish = req_.givenFullEndsWithEog ? Finish::Eog : Finish::Length;
    fullKnown_ = true;
    draftSource_ = req_.givenFull;
    if (req_.givenFullEndsWithEog) draftSource_.push_back(llama_vocab_eos(vocab_));
  }

  void runShared(const std::vector<llama_token>& full, OcclusionResult& result) {
    const bool approximate = isApproximate(req_.strategy);
    const bool speculative = req_.strategy == Strategy::Speculative || approximate;
    auto t = Clock::now();
    Seq s0;
    s0.id = 0;
    s0.out = &result.full;
    // Another running job may hold this prompt (or its head): copy it instead of decoding it again.
    const llama_pos adopted = lane_.adoptPrefix(0, full);
    counters_->prefixFromOtherJobs = adopted;
    counters_->tokensReused += adopted;
    s0.nPast = adopted;
    s0.feed.assign(full.begin() + adopted, full.end());
    if (req_.hasGivenFull) {
      useGivenFull(result.full);
      s0.done = true;
      if (score_) {
        // The prefill also scores A_full under the full prompt; its cells are dropped before the prompt is shared.
        forceAlone(full, adopted, &scores_->full);
        lane_.seqRm(0, static_cast<llama_pos>(full.size()), -1);
        lane_.publishPrefix(0, full);
        counters_->prefillMs = msSince(t);
        return runWaves(full, result, s0, Clock::now(), approximate, speculative);
      }
      // Only the prompt goes into the cache; the occluded sequences copy their prefix from it.
      std::vector<BatchItem> items;
      for (size_t i = static_cast<size_t>(adopted); i < full.size(); i++) items.push_back({full[i], static_cast<llama_pos>(i), 0, false, 0, 0});
      const long long before = stats_.decodeCalls;
      lane_.run(items, [](const OutputRow&, const BatchItem&) {}, stats_);
      counters_->prefillCalls += stats_.decodeCalls - before;
      lane_.publishPrefix(0, full);
    } else {
      std::vector<Seq*> alone{&s0};
      // Offered before the first answer token reaches JS: a caller that submits another job on that token
      // must find the prompt (it raced the publish under load before).
      step(alone, [&] { lane_.publishPrefix(0, full); });  // prefill (and the first answer token)
    }
    counters_->prefillMs = msSince(t);

    t = Clock::now();
    if (speculative && !s0.done) {
      std::vector<Seq*> alone{&s0};
      while (!s0.done) step(alone);
      draftSource_ = result.full.tokens;
      if (result.full.finish == Finish::Eog) draftSource_.push_back(fullEog_);
    }
    runWaves(full, result, s0, t, approximate, speculative);
  }

  void runWaves(const std::vector<llama_token>& full, OcclusionResult& result, Seq& s0, Clock::time_point t, bool approximate, bool speculative) {
    counters_->fullMs = msSince(t);
    t = Clock::now();
    const int parallel = chooseParallel();
    std::vector<Seq> seqs(req_.occlude.size());
    std::vector<ReusePlan> plans(static_cast<size_t>(parallel));
    for (size_t start = 0; start < req_.occlude.size(); start += parallel) {
      const size_t end = std::min(req_.occlude.size(), start + parallel);
      std::vector<Seq*> active;
      if (!s0.done) active.push_back(&s0);
      for (size_t k = start; k < end; k++) {
        const int32_t j = req_.occlude[k];
        Seq& s = seqs[k];
        s.id = static_cast<llama_seq_id>(1 + (k - start));
        s.index = static_cast<int>(k);
        s.out = &result.occluded[k];
        if (approximate) {
          plans[k - start] = reusePlan(req_, full, j);
          beginReuse(lane_, req_.strategy == Strategy::KvReuse, s.id, plans[k - start]);
        } else {
          s.nPast = blockStartOf(req_, j);
          sharePrefix(lane_, s.id, s.nPast);
          counters_->tokensReused += s.nPast;
          s.feed = occludedSuffixOf(req_, j);
          if (score_) armForce(s, s.nPast + static_cast<llama_pos>(s.feed.size()), &scores_->occluded[k]);
        }
        if (speculative) startDraft(s.draft, req_.draftInitial);
        active.push_back(&s);
      }
      if (approximate) attachReused(seqs, start, end, plans);
      counters_->waves++;
      while (std::any_of(active.begin(), active.end(), [](const Seq* s) { return !finished(*s); })) step(active);
      for (size_t k = start; k < end; k++) {
        lane_.seqRm(seqs[k].id, -1, -1);
        progress_(1, static_cast<int>(k), 0);
      }
    }
    std::vector<Seq*> alone{&s0};
    while (!s0.done) step(alone);
    if (score_) forceEmpty();
    counters_->occludedMs = msSince(t);
  }

  // Decodes every sequence's gap tokens in one prompt-only pass, then attaches its reused cells and leaves the
  // prompt's tail as its feed.
  void attachReused(std::vector<Seq>& seqs, size_t start, size_t end, const std::vector<ReusePlan>& plans) {
    std::vector<BatchItem> items;
    for (size_t k = start; k < end; k++) {
      const ReusePlan& p = plans[k - start];
      for (size_t i = 0; i < p.gapFeed.size(); i++) {
        items.push_back({p.gapFeed[i], p.setStart + static_cast<llama_pos>(i), seqs[k].id, false, 0, 0});
      }
    }
    if (!items.empty()) {
      const long long before = stats_.decodeCalls;
      lane_.run(items, [](const OutputRow&, const BatchItem&) {}, stats_);
      counters_->prefillCalls += stats_.decodeCalls - before;
    }
    for (size_t k = start; k < end; k++) {
      const ReusePlan& p = plans[k - start];
      finishReuse(lane_, seqs[k].id, p);
      seqs[k].nPast = p.tailPos;
      seqs[k].feed = p.tailFeed;
      counters_->tokensReused += p.reused;
    }
  }

  int chooseParallel() const {
    if (req_.occlude.empty()) return 1;
    // The job's reservation, not the whole context: other jobs hold the rest.
    const long long cells = lane_.cells();
    int limit = static_cast<int>(std::min<size_t>(req_.occlude.size(), static_cast<size_t>(std::max(1, lane_.sequences() - 1))));
    if (req_.maxParallel > 0) limit = std::min(limit, req_.maxParallel);
    for (int g = limit; g >= 1; g--) {
      if (occlusionCellsNeeded(req_, g) <= cells) return g;
    }
    throw std::runtime_error("the KV cache cannot hold the full prompt plus one occluded continuation (" +
                             std::to_string(occlusionCellsNeeded(req_, 1)) + " cells needed, context has " +
                             std::to_string(cells) + "); use a larger contextSize or a shorter prompt");
  }

  // One batched llama_decode pass over every unfinished sequence: its pending tokens plus its draft.
  void step(std::vector<Seq*>& active, const std::function<void()>& decoded = {}) {
    std::vector<BatchItem> items;
    bool promptOnly = true;
    bool generating = false;
    std::vector<Seq*> forcing;
    for (size_t si = 0; si < active.size(); si++) {
      Seq& s = *active[si];
      if (s.done) {
        if (s.forcePending && fullKnown_) {
          addForceRows(s, static_cast<int32_t>(si), items);
          forcing.push_back(&s);
        }
        continue;
      }
      generating = true;
      proposeDraft(s.draft, draftSource_, req_.maxTokens - static_cast<int>(s.out->tokens.size()));
      const size_t w = std::min(draftSource_.size(), static_cast<size_t>(req_.maxTokens));
      if (s.forcePending && fullKnown_ && s.draft.enabled && s.out->tokens.empty() && w + 1 >= fullTokens_->size()) {
        // Teacher forcing for free: the first draft (verified as usual) is the whole of A_full.
        s.draft.tokens.assign(draftSource_.begin(), draftSource_.begin() + static_cast<std::ptrdiff_t>(w));
        s.forceOut->assign(fullTokens_->size(), 0.0f);
        s.forceInDraft = true;
      }
      const std::vector<llama_token>& draft = s.draft.tokens;
      if (!s.feedIsPrompt || !draft.empty()) promptOnly = false;
      llama_pos pos = s.nPast;
      // Rows that also teacher-force A_full (forceInDraft) name its token at their offset.
      // A_full's own rows, when it is scored, want their greedy token's log-probability.
      const llama_token own = score_ && s.index < 0 ? kNamedGreedyLogProb : -1;
      auto named = [&](size_t offset) { return s.forceInDraft && offset < fullTokens_->size() ? (*fullTokens_)[offset] : own; };
      for (size_t i = 0; i < s.feed.size(); i++) {
        items.push_back({s.feed[i], pos++, s.id, i + 1 == s.feed.size(), static_cast<int32_t>(si), 0, i + 1 == s.feed.size() ? named(0) : llama_token{-1}});
      }
      for (size_t i = 0; i < draft.size(); i++) {
        items.push_back({draft[i], pos++, s.id, true, static_cast<int32_t>(si), static_cast<int32_t>(i + 1), named(i + 1)});
      }
      counters_->draftProposed += static_cast<long long>(draft.size());
    }
    if (items.empty()) {
      for (Seq* s : forcing) s->forcePending = false;  // an empty A_full: nothing to score
      if (forcing.empty() && std::any_of(active.begin(), active.end(), [](const Seq* s) { return !finished(*s); })) {
        throw std::logic_error("occlusion made no progress: a sequence waits to score A_full that is not generated");
      }
      return;
    }

    std::vector<std::vector<GreedyPick>> picks(active.size());
    for (size_t si = 0; si < active.size(); si++) {
      if (!active[si]->done) picks[si].resize(active[si]->draft.tokens.size() + 1);
    }
    const long long before = stats_.decodeCalls;
    lane_.run(items, [&](const OutputRow& row, const BatchItem& item) {
      if (item.tag2 >= kForceTag) {
        const size_t i = static_cast<size_t>(item.tag2 - kForceTag);
        (*active[item.tag]->forceOut)[i] = static_cast<float>(row.logProb((*fullTokens_)[i]));
        return;
      }
      GreedyPick p = row.pick();
      const Seq& s = *active[item.tag];
      if (score_ && s.index < 0) p.logProb = row.logProb(p.token);
      if (s.forceInDraft && static_cast<size_t>(item.tag2) < fullTokens_->size()) {
        (*s.forceOut)[item.tag2] = static_cast<float>(row.logProb((*fullTokens_)[item.tag2]));
      }
      picks[item.tag][item.tag2] = p;
    }, stats_);
    const long long calls = stats_.decodeCalls - before;
    if (!generating) {
      counters_->forcedCalls += calls;
    } else {
      (promptOnly ? counters_->prefillCalls : counters_->decodeSteps) += calls;
    }
    for (Seq* s : forcing) s->forcePending = false;
    for (Seq* s : active) {
      if (!s->forceInDraft) continue;
      s->forceInDraft = false;
      s->forcePending = false;
    }
    if (decoded) decoded();

    for (size_t si = 0; si < active.size(); si++) {
      Seq& s = *active[si];
      if (s.done) continue;
      accept(s, picks[si]);
    }
  }

  void accept(Seq& s, const std::vector<GreedyPick>& picks) {
    const std::vector<llama_token>& draft = s.draft.tokens;
    const size_t w = draft.size();
    size_t accepted = 0;
    std::vector<llama_token> emitted;
    llama_token pending = -1;
    for (size_t k = 0; k <= w; k++) {
      const GreedyPick& p = picks[k];
      const bool alive = emit(s, p);
      emitted.push_back(p.token);
      if (!alive) break;
      if (k < w && p.token == draft[k]) {
        accepted++;
        continue;
      }
      pending = p.token;
      break;
    }
    counters_->draftAccepted += static_cast<long long>(accepted);
    recordDraftOutcome(s.draft, accepted);
    const llama_pos fed = static_cast<llama_pos>(s.feed.size());
    s.nPast += fed + static_cast<llama_pos>(accepted);
    if (s.done) return;
    if (accepted < w) lane_.seqRm(s.id, s.nPast, -1);
    s.feed.assign(1, pending);
    s.feedIsPrompt = false;
    if (s.draft.enabled) followAnswer(s.draft, draftSource_, emitted, s.out->tokens, w > 0 && accepted == w, req_.draftMax);
  }


  // Appends one greedy token to a sequence's answer; returns false once the sequence has finished.
  bool emit(Seq& s, const GreedyPick& p) {
    SequenceResult& out = *s.out;
    out.margins.push_back(p.margin);
    if (llama_vocab_is_eog(vocab_, p.token)) {
      if (s.index < 0) fullEog_ = p.token;
      out.finish = Finish::Eog;
      finish(s);
      return false;
    }
    out.tokens.push_back(p.token);
    if (s.index < 0 && score_) scores_->full.push_back(static_cast<float>(p.logProb));
    if (s.index < 0) progress_(0, -1, p.token);
    if (!req_.stops.empty()) {
      const size_t before = s.text.size();
      s.text += tokenPiece(vocab_, p.token);
      for (const auto& stop : req_.stops) {
        const size_t from = before >= stop.size() ? before - stop.size() + 1 : 0;
        if (s.text.find(stop, from) != std::string::npos) {
          out.finish = Finish::Stop;
          finish(s);
          return false;
        }
      }
    }
    if (static_cast<int>(out.tokens.size()) >= req_.maxTokens) {
      out.finish = Finish::Length;
      finish(s);
      return false;
    }
    return true;
  }

  void finish(Seq& s) {
    s.done = true;
    if (s.index < 0) fullKnown_ = true;
  }

  // Rows that teacher-force A_full on a sequence whose own answer is done (see Seq::forcePending).
  void addForceRows(Seq& s, int32_t si, std::vector<BatchItem>& items) {
    const std::vector<llama_token>& a = *fullTokens_;
    s.forceOut->assign(a.size(), 0.0f);
    if (a.empty()) return;
    lane_.seqRm(s.id, s.forceFrom, -1);
    llama_pos pos = s.forceFrom;
    for (size_t i = 0; i < s.forceLead.size(); i++) {
      items.push_back({s.forceLead[i], pos++, s.id, i + 1 == s.forceLead.size(), si, kForceTag, i + 1 == s.forceLead.size() ? a[0] : -1});
    }
    for (size_t i = 0; i + 1 < a.size(); i++) {
      items.push_back({a[i], pos++, s.id, true, si, kForceTag + static_cast<int32_t>(i + 1), a[i + 1]});
    }
    counters_->forcedRows += static_cast<long long>(a.size());
  }

  Lane& lane_;
  const llama_vocab* vocab_;
  int32_t nVocab_;
  const OcclusionRequest& req_;
  const OcclusionProgress& progress_;
  BatchStats stats_;
  OcclusionCounters* counters_ = nullptr;
  std::vector<llama_token> draftSource_;
  llama_token fullEog_ = -1;
  const bool score_;
  AnswerScores* scores_ = nullptr;
  const std::vector<llama_token>* fullTokens_ = nullptr;
  bool fullKnown_ = false;  // A_full is complete (given, or its sequence finished)
};

}  // namespace

OcclusionResult runOcclusion(Lane& lane, const OcclusionRequest& req, const OcclusionProgress& progress) {
  if (req.hasForced) return runForced(lane, req);
  Scheduler scheduler(lane, req, progress);
  return scheduler.run();
}

}  // namespace attr_rag
