// Greedy decoding helpers over one row of logits.
#pragma once

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "DevicePicks.h"

namespace attr_rag {

struct GreedyPick {
  int32_t token;
  // top-1 minus top-2 logit: how close this step was to a tie (reported where runs diverge).
  float margin;
  // log softmax at `token`: filled only where a caller asks for it (scoreAnswer's A_full).
  double logProb = 0;
};

inline GreedyPick pickGreedy(const float* logits, int32_t nVocab) {
  int32_t best = 0;
  float top1 = -std::numeric_limits<float>::infinity();
  float top2 = -std::numeric_limits<float>::infinity();
  for (int32_t i = 0; i < nVocab; i++) {
    const float v = logits[i];
    if (v > top1) {
      top2 = top1;
      top1 = v;
      best = i;
    } else if (v > top2) {
      top2 = v;
    }
  }
  return {best, top1 - top2};
}

// log softmax(logits)[token], computed stably in double.
inline double logProbOf(const float* logits, int32_t nVocab, int32_t token) {
  float maxv = -std::numeric_limits<float>::infinity();
  for (int32_t i = 0; i < nVocab; i++) maxv = logits[i] > maxv ? logits[i] : maxv;
  double sum = 0.0;
  for (int32_t i = 0; i < nVocab; i++) sum += std::exp(static_cast<double>(logits[i]) - maxv);
  return static_cast<double>(logits[token]) - maxv - std::log(sum);
}

// One output row as a job sees it: the whole logits row (host path) or the picks the device made for it.
// Both answer the same questions with the same numbers, up to the device's float log-sum-exp.
struct OutputRow {
  const float* logits = nullptr;  // host path
  int32_t nVocab = 0;
  const DeviceRow* device = nullptr;  // device path
  llama_token named = -1;             // the token the row was asked about (BatchItem::named)

  GreedyPick pick() const {
    if (logits != nullptr) return pickGreedy(logits, nVocab);
    return {device->greedy, device->top1 - device->top2};
  }
  // log softmax at `token`: on the device path only the greedy token and the named one are known.
  double logProb(llama_token token) const {
    if (logits != nullptr) return logProbOf(logits, nVocab, token);
    const double maxv = device->top1;
    if (std::isnan(device->lse)) throw std::logic_error("internal error: a log-probability of a row that did not ask for one");
    if (token >= 0 && token == named) return static_cast<double>(device->named) - maxv - static_cast<double>(device->lse);
    if (token == device->greedy) return -static_cast<double>(device->lse);
    throw std::logic_error("internal error: the log-probability of a token the row was not asked about needs the host path");
  }
  // The whole row, for callers that asked for full logits (the context's sampling option).
  const float* full() const {
    if (logits == nullptr) throw std::logic_error("this needs full logits rows: create the context with sampling: 'host'");
    return logits;
  }
};

}  // namespace attr_rag
