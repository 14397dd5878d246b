// Reading job requests from JS objects (on the JS thread, before a job copies them off it), and results back.
#pragma once

#include <napi.h>

#include <vector>

#include "DecodeScheduler.h"
#include "Occlusion.h"
#include "Scoring.h"
#include "llama.h"

namespace attr_rag {

std::vector<llama_token> readTokens(const Napi::Value& v);
std::vector<std::vector<llama_token>> readTokenLists(const Napi::Value& v);

// Throws a JS error naming the problem when a token id is outside [0, nVocab).
OcclusionRequest readOcclusionRequest(const Napi::Object& o, int32_t nVocab);
ScoreRequest readScoreRequest(const Napi::Object& o, int32_t nVocab);

Napi::Object occlusionResultToJs(Napi::Env env, const OcclusionResult& r);
Napi::Object scoreResultToJs(Napi::Env env, const ScoreResult& r);
Napi::Object schedulerStatsToJs(Napi::Env env, const SchedulerStats& s);

}  // namespace attr_rag
