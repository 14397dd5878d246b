#include "Embedding.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "DecodeScheduler.h"

namespace attr_rag {

EmbedResult runEmbedding(Lane& lane, const std::vector<std::vector<llama_token>>& sequences, const std::atomic<bool>& cancel) {
  llama_context* ctx = lane.ctx();
  const llama_model* model = llama_get_model(ctx);
  const enum llama_pooling_type pooling = llama_pooling_type(ctx);
  if (pooling == LLAMA_POOLING_TYPE_NONE) throw std::runtime_error("embedding needs a context with pooling");
  const size_t width = pooling == LLAMA_POOLING_TYPE_RANK ? std::max<uint32_t>(1, llama_model_n_cls_out(model))
                                                          : static_cast<size_t>(llama_model_n_embd_out(model));
  const bool encoderOnly = llama_model_has_encoder(model) && !llama_model_has_decoder(model);
  const size_t maxTokens = std::min(llama_n_batch(ctx), llama_n_ubatch(ctx));
  const size_t maxSeqs = llama_n_seq_max(ctx);
  llama_memory_t mem = llama_get_memory(ctx);

  EmbedResult result;
  result.vectors.resize(sequences.size());
  llama_batch batch = llama_batch_init(static_cast<int32_t>(maxTokens), 0, 1);
  // Every change to the cells, and the decode, under the scheduler's KV lock (stats read the cells under it).
  auto clearCache = [&] {
    if (mem != nullptr) lane.withKv([&](llama_context*) { llama_memory_clear(mem, true); });
  };
  auto flush = [&](size_t first, size_t last) {
    if (cancel.load()) throw Cancelled();
    lane.withKv([&](llama_context*) {
      if (mem != nullptr) llama_memory_clear(mem, true);
      const int32_t rc = encoderOnly ? llama_encode(ctx, batch) : llama_decode(ctx, batch);
      result.decodeCalls++;
      result.tokensEvaluated += batch.n_tokens;
      if (rc != 0) throw std::runtime_error("embedding pass failed with code " + std::to_string(rc));
      for (size_t s = first; s < last; s++) {
        const float* v = llama_get_embeddings_seq(ctx, static_cast<llama_seq_id>(s - first));
        if (v == nullptr) throw std::runtime_error("llama.cpp returned no pooled embedding");
        result.vectors[s].assign(v, v + width);
      }
    });
    batch.n_tokens = 0;
  };
  try {
    batch.n_tokens = 0;
    size_t first = 0;
    for (size_t s = 0; s < sequences.size(); s++) {
      const auto& tokens = sequences[s];
      if (tokens.empty() || tokens.size() > maxTokens) {
        throw std::runtime_error("sequence " + std::to_string(s) + " has " + std::to_string(tokens.size()) +
                                 " tokens; embeddings need 1.." + std::to_string(maxTokens));
      }
      if (batch.n_tokens + tokens.size() > maxTokens || s - first >= maxSeqs) {
        flush(first, s);
        first = s;
      }
      for (size_t i = 0; i < tokens.size(); i++) {
        const int32_t k = batch.n_tokens++;
        batch.token[k] = tokens[i];
        batch.pos[k] = static_cast<llama_pos>(i);
        batch.n_seq_id[k] = 1;
        batch.seq_id[k][0] = static_cast<llama_seq_id>(s - first);
        batch.logits[k] = 1;
      }
    }
    if (batch.n_tokens > 0) flush(first, sequences.size());
  } catch (...) {
    llama_batch_free(batch);
    clearCache();
    throw;
  }
  llama_batch_free(batch);
  clearCache();
  return result;
}

}  // namespace attr_rag
