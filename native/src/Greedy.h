// Greedy decoding helpers over one row of logits.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

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

}  // namespace attr_rag
