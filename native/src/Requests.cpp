#include "Requests.h"

#include <string>

namespace attr_rag {
namespace {

void checkTokens(Napi::Env env, const std::vector<llama_token>& tokens, int32_t nVocab, const char* what) {
  for (llama_token t : tokens) {
    if (t < 0 || t >= nVocab) {
      throw Napi::RangeError::New(env, std::string(what) + " contains token id " + std::to_string(t) +
                                           ", outside the model's vocabulary [0, " + std::to_string(nVocab) + ")");
    }
  }
}

int32_t intField(const Napi::Object& o, const char* key, int32_t fallback) {
  Napi::Value v = o.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().Int32Value() : fallback;
}

Napi::Int32Array tokensToJs(Napi::Env env, const std::vector<llama_token>& tokens) {
  Napi::Int32Array a = Napi::Int32Array::New(env, tokens.size());
  std::copy(tokens.begin(), tokens.end(), a.Data());
  return a;
}

Napi::Object sequenceToJs(Napi::Env env, const SequenceResult& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("tokens", tokensToJs(env, s.tokens));
  Napi::Float32Array m = Napi::Float32Array::New(env, s.margins.size());
  std::copy(s.margins.begin(), s.margins.end(), m.Data());
  o.Set("margins", m);
  o.Set("finish", s.finish == Finish::Eog ? "eog" : s.finish == Finish::Stop ? "stop" : "length");
  return o;
}

// The prompt segments every job starts from, each token checked against the vocabulary.
void readSegments(const Napi::Object& o, int32_t nVocab, std::vector<llama_token>& prefix,
                  std::vector<std::vector<llama_token>>& blocks, std::vector<llama_token>& suffix) {
  Napi::Env env = o.Env();
  prefix = readTokens(o.Get("prefix"));
  blocks = readTokenLists(o.Get("blocks"));
  suffix = readTokens(o.Get("suffix"));
  checkTokens(env, prefix, nVocab, "prefix");
  checkTokens(env, suffix, nVocab, "suffix");
  for (const auto& b : blocks) checkTokens(env, b, nVocab, "a context block");
}

}  // namespace

std::vector<llama_token> readTokens(const Napi::Value& v) {
  Napi::Int32Array a = v.As<Napi::Int32Array>();
  return std::vector<llama_token>(a.Data(), a.Data() + a.ElementLength());
}

std::vector<std::vector<llama_token>> readTokenLists(const Napi::Value& v) {
  Napi::Array arr = v.As<Napi::Array>();
  std::vector<std::vector<llama_token>> out;
  for (uint32_t i = 0; i < arr.Length(); i++) out.push_back(readTokens(arr.Get(i)));
  return out;
}

OcclusionRequest readOcclusionRequest(const Napi::Object& o, int32_t nVocab) {
  Napi::Env env = o.Env();
  OcclusionRequest r;
  readSegments(o, nVocab, r.prefix, r.blocks, r.suffix);
  for (llama_token j : readTokens(o.Get("occlude"))) {
    if (j < 0 || static_cast<size_t>(j) >= r.blocks.size()) {
      throw Napi::RangeError::New(env, "occlude lists block " + std::to_string(j) + " but there are " +
                                           std::to_string(r.blocks.size()) + " blocks");
    }
    r.occlude.push_back(j);
  }
  if (o.Get("givenFull").IsTypedArray()) {
    r.givenFull = readTokens(o.Get("givenFull"));
    checkTokens(env, r.givenFull, nVocab, "givenFull");
    r.hasGivenFull = true;
    r.givenFullEndsWithEog = o.Get("givenFullEndsWithEog").ToBoolean().Value();
  }
  r.maxTokens = intField(o, "maxTokens", 128);
  if (r.maxTokens <= 0) throw Napi::RangeError::New(env, "maxTokens must be ≥ 1");
  Napi::Value stops = o.Get("stops");
  if (stops.IsArray()) {
    Napi::Array a = stops.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) {
      std::string s = a.Get(i).As<Napi::String>().Utf8Value();
      if (!s.empty()) r.stops.push_back(s);
    }
  }
  const int32_t strategy = intField(o, "strategy", 2);
  if (strategy < 0 || strategy > 4) throw Napi::RangeError::New(env, "unknown strategy " + std::to_string(strategy));
  r.strategy = static_cast<Strategy>(strategy);
  r.gapTokens = intField(o, "gapTokens", 0);
  r.tailTokens = intField(o, "tailTokens", -1);
  if (r.gapTokens < 0) throw Napi::RangeError::New(env, "gapTokens must be ≥ 0");
  if (o.Get("forced").IsArray()) {
    r.forced = readTokenLists(o.Get("forced"));
    for (const auto& f : r.forced) checkTokens(env, f, nVocab, "forced");
    r.hasForced = true;
    r.pairExact = o.Get("pairExact").ToBoolean().Value();
    if (r.forced.size() != r.occlude.size()) throw Napi::RangeError::New(env, "forced needs one token list per occluded set");
    if (!isApproximate(r.strategy)) throw Napi::RangeError::New(env, "forced mode needs an approximate strategy");
    if (!r.hasGivenFull) throw Napi::RangeError::New(env, "forced mode needs givenFull");
    if (r.suffix.empty()) throw Napi::RangeError::New(env, "forced mode needs a non-empty suffix");
  }
  r.scoreAnswer = o.Get("scoreAnswer").ToBoolean().Value();
  if (r.scoreAnswer) {
    if (isApproximate(r.strategy)) throw Napi::RangeError::New(env, "scoreAnswer needs an exact strategy (naive, prefix-shared or speculative)");
    if (r.hasForced) throw Napi::RangeError::New(env, "scoreAnswer and forced mode do not combine");
    if (r.suffix.empty()) throw Napi::RangeError::New(env, "scoreAnswer needs a non-empty suffix (the answer header)");
    if (r.hasGivenFull && r.givenFull.size() > static_cast<size_t>(r.maxTokens)) throw Napi::RangeError::New(env, "scoreAnswer needs maxTokens ≥ the given A_full's length");
  }
  r.draftInitial = intField(o, "draftInitial", 16);
  r.draftMax = intField(o, "draftMax", 128);
  r.maxParallel = intField(o, "maxParallel", 0);
  if (r.prefix.empty() && r.blocks.empty() && r.suffix.empty()) throw Napi::RangeError::New(env, "the prompt is empty");
  return r;
}

ScoreRequest readScoreRequest(const Napi::Object& o, int32_t nVocab) {
  Napi::Env env = o.Env();
  ScoreRequest r;
  readSegments(o, nVocab, r.prefix, r.blocks, r.suffix);
  r.continuation = readTokens(o.Get("continuation"));
  checkTokens(env, r.continuation, nVocab, "continuation");
  if (r.suffix.empty()) throw Napi::RangeError::New(env, "scoring needs a non-empty suffix");
  if (r.continuation.empty()) throw Napi::RangeError::New(env, "the continuation to score is empty");
  for (const auto& c : readTokenLists(o.Get("coalitions"))) {
    for (size_t i = 0; i < c.size(); i++) {
      if (c[i] < 0 || static_cast<size_t>(c[i]) >= r.blocks.size() || (i > 0 && c[i] <= c[i - 1])) {
        throw Napi::RangeError::New(env, "a coalition must list block indices in ascending order, each in [0, " +
                                             std::to_string(r.blocks.size()) + ")");
      }
    }
    r.coalitions.push_back(c);
  }
  r.maxParallel = intField(o, "maxParallel", 0);
  return r;
}

Napi::Object occlusionResultToJs(Napi::Env env, const OcclusionResult& r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("full", sequenceToJs(env, r.full));
  Napi::Array occ = Napi::Array::New(env, r.occluded.size());
  for (size_t i = 0; i < r.occluded.size(); i++) occ.Set(static_cast<uint32_t>(i), sequenceToJs(env, r.occluded[i]));
  o.Set("occluded", occ);
  const OcclusionCounters& c = r.counters;
  Napi::Object k = Napi::Object::New(env);
  k.Set("promptTokens", static_cast<double>(c.promptTokens));
  k.Set("tokensEvaluated", static_cast<double>(c.tokensEvaluated));
  k.Set("tokensReused", static_cast<double>(c.tokensReused));
  k.Set("prefixFromOtherJobs", static_cast<double>(c.prefixFromOtherJobs));
  k.Set("draftProposed", static_cast<double>(c.draftProposed));
  k.Set("draftAccepted", static_cast<double>(c.draftAccepted));
  k.Set("decodeSteps", static_cast<double>(c.decodeSteps));
  k.Set("prefillCalls", static_cast<double>(c.prefillCalls));
  k.Set("waves", static_cast<double>(c.waves));
  k.Set("forcedRows", static_cast<double>(c.forcedRows));
  k.Set("forcedCalls", static_cast<double>(c.forcedCalls));
  k.Set("prefillMs", c.prefillMs);
  k.Set("fullMs", c.fullMs);
  k.Set("occludedMs", c.occludedMs);
  k.Set("totalMs", c.totalMs);
  o.Set("counters", k);
  if (r.hasScores) {
    const auto floats = [&](const std::vector<float>& v) {
      Napi::Float32Array a = Napi::Float32Array::New(env, v.size());
      std::copy(v.begin(), v.end(), a.Data());
      return a;
    };
    Napi::Object sc = Napi::Object::New(env);
    sc.Set("full", floats(r.scores.full));
    sc.Set("empty", floats(r.scores.empty));
    Napi::Array occ2 = Napi::Array::New(env, r.scores.occluded.size());
    for (size_t i = 0; i < r.scores.occluded.size(); i++) occ2.Set(static_cast<uint32_t>(i), floats(r.scores.occluded[i]));
    sc.Set("occluded", occ2);
    o.Set("scores", sc);
  }
  if (!r.forced.empty()) {
    Napi::Array forced = Napi::Array::New(env, r.forced.size());
    for (size_t i = 0; i < r.forced.size(); i++) {
      const ForcedStats& f = r.forced[i];
      Napi::Object x = Napi::Object::New(env);
      x.Set("steps", f.steps);
      x.Set("logProb", f.logProb);
      x.Set("exactLogProb", f.exactLogProb);
      x.Set("kl", f.kl);
      x.Set("top1Agree", f.top1Agree);
      forced.Set(static_cast<uint32_t>(i), x);
    }
    o.Set("forced", forced);
    o.Set("fullLogProb", r.fullLogProb);
  }
  return o;
}

Napi::Object scoreResultToJs(Napi::Env env, const ScoreResult& r) {
  Napi::Object o = Napi::Object::New(env);
  Napi::Array lps = Napi::Array::New(env, r.logProbs.size());
  for (size_t i = 0; i < r.logProbs.size(); i++) {
    Napi::Float32Array a = Napi::Float32Array::New(env, r.logProbs[i].size());
    std::copy(r.logProbs[i].begin(), r.logProbs[i].end(), a.Data());
    lps.Set(static_cast<uint32_t>(i), a);
  }
  o.Set("logProbs", lps);
  Napi::Float64Array totals = Napi::Float64Array::New(env, r.totals.size());
  std::copy(r.totals.begin(), r.totals.end(), totals.Data());
  o.Set("totals", totals);
  Napi::Object k = Napi::Object::New(env);
  k.Set("tokensEvaluated", static_cast<double>(r.counters.tokensEvaluated));
  k.Set("tokensReused", static_cast<double>(r.counters.tokensReused));
  k.Set("decodeCalls", static_cast<double>(r.counters.decodeCalls));
  k.Set("waves", static_cast<double>(r.counters.waves));
  k.Set("totalMs", r.counters.totalMs);
  o.Set("counters", k);
  return o;
}

Napi::Object schedulerStatsToJs(Napi::Env env, const SchedulerStats& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("decodeCalls", static_cast<double>(s.decodeCalls));
  o.Set("rows", static_cast<double>(s.rows));
  o.Set("decodeMs", s.decodeMs);
  o.Set("outputRows", static_cast<double>(s.outputRows));
  o.Set("bytesToHost", static_cast<double>(s.bytesToHost));
  o.Set("hostRowMs", s.hostRowMs);
  o.Set("multiJobCalls", static_cast<double>(s.multiJobCalls));
  o.Set("jobsAdmitted", static_cast<double>(s.jobsAdmitted));
  o.Set("jobsWaited", static_cast<double>(s.jobsWaited));
  o.Set("prefixTokensShared", static_cast<double>(s.prefixTokensShared));
  o.Set("activeJobs", s.activeJobs);
  o.Set("waitingJobs", s.waitingJobs);
  o.Set("sequencesReserved", s.sequencesReserved);
  o.Set("cellsReserved", static_cast<double>(s.cellsReserved));
  o.Set("strayCellSequences", s.strayCellSequences);
  o.Set("sequences", s.sequences);
  o.Set("cells", static_cast<double>(s.cells));
  return o;
}

}  // namespace attr_rag
