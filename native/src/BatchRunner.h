// Submits token items for many sequences to llama_decode in chunks that respect n_batch, and hands each
// requested output row to a callback before the next chunk overwrites the logits buffer.
#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include "llama.h"

namespace attr_rag {

struct BatchItem {
  llama_token token;
  llama_pos pos;
  llama_seq_id seq;
  bool output;
  // Caller's tag for the output row (e.g. sequence index and draft offset), passed back to onOutput.
  int32_t tag;
  int32_t tag2;
};

struct BatchStats {
  long long tokensEvaluated = 0;
  long long decodeCalls = 0;
};

class Cancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "cancelled"; }
};

class BatchRunner {
 public:
  BatchRunner(llama_context* ctx, const std::atomic<bool>* cancel);
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  // Decodes all items in order. Items of one sequence must be in position order; items of different
  // sequences may interleave. onOutput(row, item) is called for every item with output = true, where
  // row points at n_vocab logits (or n_embd embeddings in embedding mode). Throws on failure.
  void run(const std::vector<BatchItem>& items, const std::function<void(const float*, const BatchItem&)>& onOutput,
           BatchStats& stats, bool embeddings = false);

 private:
  void decodeChunk(const BatchItem* items, int32_t n, const std::function<void(const float*, const BatchItem&)>& onOutput,
                   BatchStats& stats, bool embeddings);

  llama_context* ctx_;
  const std::atomic<bool>* cancel_;
  llama_batch batch_;
  int32_t capacity_;
};

}  // namespace attr_rag
