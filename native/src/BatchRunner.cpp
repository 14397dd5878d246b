#include "BatchRunner.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attr_rag {

BatchRunner::BatchRunner(llama_context* ctx, const std::atomic<bool>* cancel)
    : ctx_(ctx), cancel_(cancel), capacity_(static_cast<int32_t>(llama_n_batch(ctx))) {
  batch_ = llama_batch_init(capacity_, 0, 1);
}

BatchRunner::~BatchRunner() { llama_batch_free(batch_); }

void BatchRunner::run(const std::vector<BatchItem>& items,
                      const std::function<void(const float*, const BatchItem&)>& onOutput, BatchStats& stats,
                      bool embeddings) {
  // A batch larger than min(n_batch, n_ctx) trips a GGML_ASSERT inside llama.cpp, so never submit one.
  const int32_t limit = std::min<int32_t>(capacity_, static_cast<int32_t>(llama_n_ctx(ctx_)));
  size_t offset = 0;
  int32_t chunk = limit;
  while (offset < items.size()) {
    if (cancel_ != nullptr && cancel_->load()) throw Cancelled();
    const int32_t n = static_cast<int32_t>(std::min<size_t>(chunk, items.size() - offset));
    try {
      decodeChunk(items.data() + offset, n, onOutput, stats, embeddings);
      offset += n;
    } catch (const std::length_error&) {
      // No KV slot for this chunk: retry in halves (fragmented cache); give up at one token.
      if (chunk <= 1) {
        throw std::runtime_error(
            "the KV cache is full: the prompt, every occluded continuation and the answers do not fit in the "
            "context; use a larger contextSize, fewer or shorter chunk sets, or fewer max tokens");
      }
      chunk = std::max(1, n / 2);
    }
  }
}

void BatchRunner::decodeChunk(const BatchItem* items, int32_t n,
                              const std::function<void(const float*, const BatchItem&)>& onOutput, BatchStats& stats,
                              bool embeddings) {
  batch_.n_tokens = n;
  for (int32_t i = 0; i < n; i++) {
    batch_.token[i] = items[i].token;
    batch_.pos[i] = items[i].pos;
    batch_.n_seq_id[i] = 1;
    batch_.seq_id[i][0] = items[i].seq;
    batch_.logits[i] = items[i].output ? 1 : 0;
  }
  const int32_t rc = llama_decode(ctx_, batch_);
  stats.decodeCalls++;
  stats.tokensEvaluated += n;
  if (rc == 1) throw std::length_error("no KV slot");
  if (rc == 2) throw Cancelled();
  if (rc != 0) throw std::runtime_error("llama_decode failed with code " + std::to_string(rc));
  for (int32_t i = 0; i < n; i++) {
    if (!items[i].output) continue;
    const float* row = embeddings ? llama_get_embeddings_ith(ctx_, i) : llama_get_logits_ith(ctx_, i);
    if (row == nullptr) throw std::runtime_error("llama.cpp returned no output row for a requested position");
    onOutput(row, items[i]);
  }
}

}  // namespace attr_rag
