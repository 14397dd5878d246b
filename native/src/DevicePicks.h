// Picks on the device: a llama.cpp backend sampler that computes, inside the decode graph, the few numbers
// attribution needs per output row (the greedy token, the two largest logits, the log-sum-exp and the logit
// of a token the caller names) so that only those (24 bytes) cross to the host instead of the whole logits row.
//
// One sampler chain per sequence id, all sharing one DevicePicks: the first chain applied in a graph builds
// the ops once over every output row (argmax, top-2, log-sum-exp, a gather of the named tokens), and each
// chain's rows are views into those results. The named tokens are a graph input, filled per micro-batch in
// each sequence's output order from what the scheduler set before llama_decode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llama.h"

struct ggml_tensor;

namespace attr_rag {

// BatchItem::named for a row that names no token but wants its greedy token's log-probability (A_full scored
// for sentence attribution). -1: greedy token and margin only.
constexpr llama_token kNamedGreedyLogProb = -2;

// What one output row holds when picked on the device.
struct DeviceRow {
  llama_token greedy;
  float top1, top2;  // the largest logit and the runner-up (equal at an exact tie)
  float lse;         // log Σ exp(logit - max); NaN where the row asked for no log-probability (CPU fused op)
  float named;       // the logit of the row's named token (NaN or arbitrary when none was named)
};

class DevicePicks {
 public:
  // Values per row beside the two token ids (top1, top2, lse, named).
  static constexpr int kValues = 4;
  // The fused CPU op's row, one view: greedy and second (int32), then top1, top2, lse, named (float).
  static constexpr int kFusedValues = 6;

  explicit DevicePicks(int sequences);
  ~DevicePicks();
  DevicePicks(const DevicePicks&) = delete;
  DevicePicks& operator=(const DevicePicks&) = delete;

  // The chains to pass in llama_context_params.samplers (they stay owned here, and must outlive the context).
  std::vector<llama_sampler_seq_config>& configs() { return configs_; }
  // After context creation: whether the device the logits live on runs every op (else the reason).
  bool supported() const { return supported_; }
  const std::string& unsupportedWhy() const { return why_; }

  // Before llama_decode: per global sequence id, the named token of each of its output rows in batch order.
  void setNamed(std::vector<std::vector<llama_token>>& perSeq);
  // After llama_decode: output row i (llama_get_*_ith index). Returns false when llama.cpp has no picks for it.
  static bool read(llama_context* ctx, int32_t i, DeviceRow& out, long long& bytes);

  // Graph building, called from the sampler callbacks.
  struct Chain;
  // What one graph's picks are built of: per row, views at these byte strides into the result tensors.
  struct Built {
    ggml_tensor* greedy;
    ggml_tensor* second;
    ggml_tensor* values;
    ggml_tensor* named;
    size_t greedyStride, secondStride, valuesStride, valuesOffset;
  };
  void reset();
  void apply(Chain& chain, struct ggml_context* ctx, struct llama_sampler_data* data);
  void setInput(Chain& chain);
  bool init(ggml_backend_buffer_type_t buft);

 private:
  std::vector<llama_sampler*> chains_;
  std::vector<Chain*> members_;
  std::vector<llama_sampler_seq_config> configs_;
  bool supported_ = true;
  bool probed_ = false;
  std::string why_;
  // The graph being built: the padded logits every row views, and what was built over it.
  ggml_tensor* source_ = nullptr;
  ggml_tensor* namedIn_ = nullptr;
  Built built_{};
  bool fused_ = false;
  int32_t rows_ = 0;      // rows of the tensor the picks are built over
  bool padded_ = false;   // that tensor is llama.cpp's padded copy (its last row belongs to no sequence)
  int64_t nVocab_ = 0;  // CPU backend: one custom op per graph instead of generic ops
  std::vector<std::vector<llama_token>> named_;
  std::vector<size_t> cursor_;
  std::vector<int32_t> staged_;  // setInput's named tokens for one run of rows
};

}  // namespace attr_rag
