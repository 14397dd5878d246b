// Pooled embeddings (mean / CLS / last pooling) and reranker scores (rank pooling) for many sequences,
// packed into multi-sequence batches. Each sequence must fit in one ubatch (non-causal models see it whole).
#pragma once

#include <atomic>
#include <vector>

#include "llama.h"

namespace attr_rag {

struct EmbedResult {
  std::vector<std::vector<float>> vectors;  // per sequence: n_embd floats, or n_cls_out scores with rank pooling
  long long tokensEvaluated = 0;
  long long decodeCalls = 0;
};

class Lane;

// The lane must hold every sequence of its context: each pass clears the whole cache.
EmbedResult runEmbedding(Lane& lane, const std::vector<std::vector<llama_token>>& sequences, const std::atomic<bool>& cancel);

}  // namespace attr_rag
