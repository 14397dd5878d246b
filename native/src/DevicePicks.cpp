#include "DevicePicks.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "ggml-backend.h"
#include "ggml.h"

namespace attr_rag {

struct DevicePicks::Chain {
  DevicePicks* owner;
  llama_seq_id seq;
  std::vector<int32_t> rows;  // this sequence's output rows in the graph being built, in output order
};

namespace {

using Chain = DevicePicks::Chain;

Chain& chainOf(llama_sampler* s) { return *static_cast<Chain*>(s->ctx); }

const char* pickName(const llama_sampler*) { return "attr-rag-device-picks"; }

// Only reached if someone samples on the host with this chain: the greedy token, as the device would pick it.
void pickApply(llama_sampler*, llama_token_data_array* cur) {
  int64_t best = 0;
  for (size_t i = 1; i < cur->size; i++) {
    if (cur->data[i].logit > cur->data[best].logit) best = static_cast<int64_t>(i);
  }
  cur->selected = best;
}

void pickFree(llama_sampler* s) { delete static_cast<Chain*>(s->ctx); }

bool pickInit(llama_sampler* s, ggml_backend_buffer_type_t buft, uint32_t) { return chainOf(s).owner->init(buft); }

void pickBackendApply(llama_sampler* s, ggml_context* ctx, ggml_cgraph*, llama_sampler_data* data) {
  chainOf(s).owner->apply(chainOf(s), ctx, data);
}

void pickSetInput(llama_sampler* s) { chainOf(s).owner->setInput(chainOf(s)); }

void pickReset(llama_sampler* s) { chainOf(s).owner->reset(); }

llama_sampler_i kPickIface = {
    /* .name              = */ pickName,
    /* .accept            = */ nullptr,
    /* .apply             = */ pickApply,
    /* .reset             = */ nullptr,
    /* .clone             = */ nullptr,
    /* .free              = */ pickFree,
    /* .backend_init      = */ pickInit,
    /* .backend_accept    = */ nullptr,
    /* .backend_apply     = */ pickBackendApply,
    /* .backend_set_input = */ pickSetInput,
    /* .backend_reset     = */ pickReset,
    /* .copy_state        = */ nullptr,
};

using Built = DevicePicks::Built;

// Generic ggml ops (GPU backends): the index of a maximum, the index of the largest value once that one is
// set aside (top_k would sort whole rows on some backends), both values, the log-sum-exp and the named logit.
Built buildGeneric(ggml_context* ctx, ggml_tensor* logits, ggml_tensor* named) {
  const int64_t nVocab = logits->ne[0];
  const int64_t rows = logits->ne[1];
  auto at = [&](ggml_tensor* values, ggml_tensor* index) {
    return ggml_reshape_2d(ctx, ggml_get_rows(ctx, ggml_reshape_3d(ctx, values, 1, nVocab, rows), index), 1, rows);
  };
  ggml_tensor* greedy = ggml_argmax(ctx, logits);
  ggml_tensor* greedyCol = ggml_reshape_2d(ctx, greedy, 1, rows);
  ggml_tensor* maxv = at(logits, greedyCol);
  ggml_tensor* floorv = ggml_reshape_3d(ctx, ggml_scale_bias(ctx, maxv, 0.0f, -std::numeric_limits<float>::max()), 1, 1, rows);
  ggml_tensor* masked = ggml_set_rows(ctx, ggml_reshape_3d(ctx, ggml_dup(ctx, logits), 1, nVocab, rows), floorv, greedyCol);
  ggml_tensor* second = ggml_argmax(ctx, ggml_reshape_2d(ctx, masked, nVocab, rows));
  ggml_tensor* secondv = at(logits, ggml_reshape_2d(ctx, second, 1, rows));
  // softmax at the maximum is 1 / Σ exp(logit - max): one fused pass gives the log-sum-exp.
  ggml_tensor* lse = ggml_neg(ctx, ggml_log(ctx, at(ggml_soft_max(ctx, logits), greedyCol)));
  ggml_tensor* values = ggml_concat(ctx, ggml_concat(ctx, ggml_concat(ctx, maxv, secondv, 0), lse, 0), at(logits, named), 0);
  return {greedy, second, values, named, greedy->nb[0], second->nb[0], values->nb[1], 0};
}

// The largest value of x[from, to), skipping NaNs as the host scan's `v > best` does: 4 lanes (SSE2, the
// baseline the addon is built for) in 4 independent accumulators, so the loop runs at memory speed.
float maxOf(const float* x, int64_t from, int64_t to) {
  typedef float v4 __attribute__((vector_size(16)));
  const float lowest = -std::numeric_limits<float>::infinity();
  float best = lowest;
  int64_t i = from;
  if (to - i >= 16) {
    v4 a0 = {lowest, lowest, lowest, lowest}, a1 = a0, a2 = a0, a3 = a0;
    for (; i + 16 <= to; i += 16) {
      v4 v0, v1, v2, v3;
      std::memcpy(&v0, x + i, sizeof(v4));
      std::memcpy(&v1, x + i + 4, sizeof(v4));
      std::memcpy(&v2, x + i + 8, sizeof(v4));
      std::memcpy(&v3, x + i + 12, sizeof(v4));
      a0 = v0 > a0 ? v0 : a0;
      a1 = v1 > a1 ? v1 : a1;
      a2 = v2 > a2 ? v2 : a2;
      a3 = v3 > a3 ? v3 : a3;
    }
    a0 = a1 > a0 ? a1 : a0;
    a2 = a3 > a2 ? a3 : a2;
    a0 = a2 > a0 ? a2 : a0;
    for (int k = 0; k < 4; k++) best = a0[k] > best ? a0[k] : best;
  }
  for (; i < to; i++) best = x[i] > best ? x[i] : best;
  return best;
}

int64_t firstIndexOf(const float* x, int64_t from, int64_t to, float v) {
  for (int64_t i = from; i < to; i++) {
    if (x[i] == v) return i;
  }
  return -1;
}

// Σ exp(x[i] - m) over a row whose maximum is m: a W-lane float exp (Cody-Waite reduction, degree-6
// polynomial, about 1e-7 relative), summed in float over blocks of 256 and in double across blocks; measured
// against a double reference the log-sum-exp is within 5e-8 on the bench vocabulary.
template <int W>
struct Lanes;
template <>
struct Lanes<4> {
  typedef float vf __attribute__((vector_size(16)));
  typedef int32_t vi __attribute__((vector_size(16)));
};
template <>
struct Lanes<8> {
  typedef float vf __attribute__((vector_size(32)));
  typedef int32_t vi __attribute__((vector_size(32)));
};

template <int W>
inline __attribute__((always_inline)) double sumExpBelowW(const float* x, int64_t n, float m) {
  using vf = typename Lanes<W>::vf;
  using vi = typename Lanes<W>::vi;
  const vf zero = {};
  const vi izero = {};
  double total = 0;
  int64_t i = 0;
  while (i + W <= n) {
    vf acc = zero;
    const int64_t stop = std::max<int64_t>(i + W, std::min<int64_t>(n, i + 256) / W * W);
    for (; i + W <= stop; i += W) {
      vf v;
      std::memcpy(&v, x + i, sizeof(vf));
      v = v - m;
      v = v < -87.0f ? zero - 87.0f : v;
      const vf t = v * 1.44269504088896341f + 0.5f;
      vi k = __builtin_convertvector(t, vi);
      k = k - (__builtin_convertvector(k, vf) > t ? izero + 1 : izero);  // floor, t may be negative
      const vf kf = __builtin_convertvector(k, vf);
      const vf r = v - kf * 0.693359375f - kf * -2.12194440e-4f;
      vf y = ((((r * 1.9875691500e-4f + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r + 1.6666665459e-1f) * r +
             5.0000001201e-1f;
      y = y * (r * r) + r + 1.0f;
      const vi bits = (k + 127) << 23;
      vf scale;
      std::memcpy(&scale, &bits, sizeof(vf));
      acc += y * scale;
    }
    for (int k = 0; k < W; k++) total += static_cast<double>(acc[k]);
  }
  for (; i < n; i++) total += std::exp(static_cast<double>(x[i]) - m);
  return total;
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma"))) double sumExpBelowAvx2(const float* x, int64_t n, float m) { return sumExpBelowW<8>(x, n, m); }
#endif

double sumExpBelow(const float* x, int64_t n, float m) {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2) return sumExpBelowAvx2(x, n, m);
#endif
  return sumExpBelowW<4>(x, n, m);
}

// CPU: per row the maximum and the first index holding it (as the host scan keeps), the largest value once
// that index is set aside and an index holding it, and, only for rows that asked for a log-probability (named
// ≥ 0, or kNamedGreedyLogProb), the log-sum-exp and the named logit (NaN where not asked: the other rows skip
// the exp pass). Output row, as int32: greedy, second, then the bits of top1, top2, lse, named.
void fusedRows(ggml_tensor* dst, int ith, int nth, void*) {
  const ggml_tensor* logits = dst->src[0];
  const ggml_tensor* named = dst->src[1];
  const int64_t nVocab = logits->ne[0];
  const float none = std::numeric_limits<float>::quiet_NaN();
  for (int64_t r = ith; r < logits->ne[1]; r += nth) {
    const float* x = reinterpret_cast<const float*>(static_cast<const char*>(logits->data) + r * logits->nb[1]);
    const float t1 = maxOf(x, 0, nVocab);
    const int64_t i1 = std::max<int64_t>(0, firstIndexOf(x, 0, nVocab, t1));  // none: every logit is NaN
    const float t2 = std::max(maxOf(x, 0, i1), maxOf(x, i1 + 1, nVocab));
    int64_t i2 = firstIndexOf(x, 0, i1, t2);
    if (i2 < 0) i2 = std::max<int64_t>(0, firstIndexOf(x, i1 + 1, nVocab, t2));
    const int32_t n = *reinterpret_cast<const int32_t*>(static_cast<const char*>(named->data) + r * named->nb[1]);
    const bool wants = n >= 0 || n == kNamedGreedyLogProb;
    const float f[4] = {t1, t2, wants ? static_cast<float>(std::log(sumExpBelow(x, nVocab, t1))) : none,
                        n >= 0 && n < nVocab ? x[n] : none};
    auto* out = reinterpret_cast<int32_t*>(static_cast<char*>(dst->data) + r * dst->nb[1]);
    out[0] = static_cast<int32_t>(i1);
    out[1] = static_cast<int32_t>(i2);
    std::memcpy(out + 2, f, sizeof(f));
  }
}

Built buildFused(ggml_context* ctx, ggml_tensor* logits, ggml_tensor* named) {
  ggml_tensor* args[2] = {logits, named};
  ggml_tensor* out = ggml_custom_4d(ctx, GGML_TYPE_I32, 6, logits->ne[1], 1, 1, args, 2, fusedRows, GGML_N_TASKS_MAX, nullptr);
  return {out, out, out, named, out->nb[1], out->nb[1], out->nb[1], 2 * sizeof(int32_t)};
}

Built buildPicks(ggml_context* ctx, ggml_tensor* logits, bool fused) {
  ggml_tensor* named = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 1, logits->ne[1]);
  ggml_set_name(named, "attr_picks_named");
  ggml_set_input(named);
  return fused ? buildFused(ctx, logits, named) : buildGeneric(ctx, logits, named);
}

}  // namespace

DevicePicks::DevicePicks(int sequences) {
  for (int s = 0; s < sequences; s++) {
    llama_sampler_chain_params cp = llama_sampler_chain_default_params();
    cp.no_perf = true;
    llama_sampler* chain = llama_sampler_chain_init(cp);
    auto* member = new Chain{this, static_cast<llama_seq_id>(s), {}};
    llama_sampler_chain_add(chain, llama_sampler_init(&kPickIface, member));
    chains_.push_back(chain);
    members_.push_back(member);
    configs_.push_back({static_cast<llama_seq_id>(s), chain});
  }
  named_.assign(static_cast<size_t>(sequences), {});
  cursor_.assign(static_cast<size_t>(sequences), 0);
}

DevicePicks::~DevicePicks() {
  for (llama_sampler* c : chains_) llama_sampler_free(c);
}

bool DevicePicks::init(ggml_backend_buffer_type_t buft) {
  if (probed_) return supported_;
  probed_ = true;
  ggml_backend_dev_t dev = ggml_backend_buft_get_device(buft);
  if (dev == nullptr || ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU) {
    fused_ = true;  // the CPU backend runs custom ops: one fused pass per row
    return supported_ = true;
  }
  // Mesa's software Vulkan driver (lavapipe) aborted inside its own worker thread ("double free or
  // corruption" in libvulkan_lvp.so) while running these graphs in `bench occlusion`, reproducibly, and never
  // on the host path: a software renderer reads rows on the host.
  {
    std::string desc = std::string(ggml_backend_dev_name(dev)) + " " + ggml_backend_dev_description(dev);
    std::string lower(desc);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("llvmpipe") != std::string::npos || lower.find("lavapipe") != std::string::npos || lower.find("swiftshader") != std::string::npos) {
      supported_ = false;
      why_ = "device " + desc + " is a software Vulkan renderer, whose driver aborted on the picks graph; rows are read on the host";
      return supported_;
    }
  }
  // A sampler whose op the device lacks would run that op on the CPU, row by row; say so and use the host path.
  const size_t nodes = 64;
  ggml_init_params ip = {nodes * ggml_tensor_overhead() + ggml_graph_overhead_custom(nodes, false), nullptr, true};
  ggml_context* ctx = ggml_init(ip);
  ggml_cgraph* gf = ggml_new_graph_custom(ctx, nodes, false);
  const Built b = buildPicks(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1 << 18, 4), false);
  ggml_build_forward_expand(gf, b.greedy);
  ggml_build_forward_expand(gf, b.values);
  ggml_build_forward_expand(gf, b.second);
  for (int i = 0; i < ggml_graph_n_nodes(gf) && supported_; i++) {
    ggml_tensor* op = ggml_graph_node(gf, i);
    if (op->op == GGML_OP_NONE || op->op == GGML_OP_RESHAPE || op->op == GGML_OP_VIEW) continue;
    if (!ggml_backend_dev_supports_op(dev, op)) {
      supported_ = false;
      why_ = std::string("device ") + ggml_backend_dev_name(dev) + " has no " + ggml_op_desc(op) + " for these shapes";
    }
  }
  ggml_free(ctx);
  return supported_;
}

void DevicePicks::reset() {
  source_ = namedIn_ = nullptr;
  for (Chain* m : members_) m->rows.clear();
}

void DevicePicks::apply(Chain& chain, ggml_context* ctx, llama_sampler_data* data) {
  ggml_tensor* row = data->logits;
  // llama.cpp hands each row as a 1-D view of one padded [n_vocab, rows + 1] tensor: build over that tensor
  // once, so a graph has one set of ops whatever its row count. A plain tensor is a probe.
  ggml_tensor* source = row->view_src != nullptr && row->view_src->ne[0] == row->ne[0] && ggml_n_dims(row->view_src) <= 2
                            ? row->view_src
                            : row;
  const int32_t index = source == row ? 0 : static_cast<int32_t>(row->view_offs / source->nb[1]);
  if (source != source_) {
    ggml_tensor* logits = source == row ? ggml_reshape_2d(ctx, row, row->ne[0], 1) : source;
    // Read the rows where the model wrote them, not llama.cpp's padded copy: the pad is only there for a graph
    // without outputs (then the unpadded tensor is empty), and on the CPU its element-by-element copy cost
    // about as much per row as the whole host scan. Nothing else reads the padded copy, so it is not computed.
    ggml_tensor* unpadded = logits->op == GGML_OP_PAD ? logits->src[0] : nullptr;
    if (unpadded != nullptr && unpadded->ne[0] == logits->ne[0] && unpadded->ne[1] > 0 && ggml_is_contiguous(unpadded) &&
        unpadded->type == GGML_TYPE_F32) {
      logits = unpadded;
      padded_ = false;
    } else {
      padded_ = logits->op == GGML_OP_PAD;
    }
    rows_ = static_cast<int32_t>(logits->ne[1]);
    nVocab_ = logits->ne[0];
    built_ = buildPicks(ctx, logits, fused_);
    source_ = source;
    namedIn_ = built_.named;
  }
  // llama.cpp applies every sequence's chain to every graph, those without rows in it on a dummy row. With
  // 72 sequences that is hundreds of views the graph would carry through every step; a sequence the
  // scheduler gave no output rows in this decode gets none (the probe, a plain tensor, always does).
  const size_t s = static_cast<size_t>(chain.seq);
  if (source != row && s < named_.size() && named_[s].empty()) return;
  // Rows past the unpadded tensor are the padding row only an inactive sampler views: map it to row 0.
  const size_t r = static_cast<size_t>(index < rows_ ? index : 0);
  const Built& b = built_;
  if (fused_) {
    // One view per row: the fused op's int32 row (greedy, second, then the floats' bits), copied as it is.
    data->logits = ggml_view_1d(ctx, b.values, kFusedValues, r * b.valuesStride);
  } else {
    data->sampled = ggml_view_1d(ctx, b.greedy, 1, r * b.greedyStride);
    data->candidates = ggml_view_1d(ctx, b.second, 1, r * b.secondStride);
    data->logits = ggml_view_1d(ctx, b.values, kValues, r * b.valuesStride + b.valuesOffset);
  }
  chain.rows.push_back(index);
}

void DevicePicks::setNamed(std::vector<std::vector<llama_token>>& perSeq) {
  for (size_t s = 0; s < named_.size(); s++) {
    named_[s].clear();
    if (s < perSeq.size()) named_[s].swap(perSeq[s]);
    cursor_[s] = 0;
  }
}

void DevicePicks::setInput(Chain& chain) {
  if (namedIn_ == nullptr || namedIn_->buffer == nullptr) return;
  const size_t s = static_cast<size_t>(chain.seq);
  const int64_t rows = namedIn_->ne[1];
  // Every row this sequence outputs, and a padding row no sequence owns (it must index inside the vocabulary).
  const int32_t pad = 0;
  if (padded_) ggml_backend_tensor_set(namedIn_, &pad, static_cast<size_t>(rows - 1) * sizeof(int32_t), sizeof(int32_t));
  // One write per run of consecutive rows (a sequence's rows are usually contiguous): on a GPU each write is a
  // copy to the device.
  std::vector<int32_t>& staged = staged_;
  size_t i = 0;
  while (i < chain.rows.size()) {
    const int32_t first = chain.rows[i];
    staged.clear();
    while (i < chain.rows.size() && chain.rows[i] == first + static_cast<int32_t>(staged.size()) && chain.rows[i] < rows) {
      llama_token t = 0;
      if (s < named_.size() && cursor_[s] < named_[s].size()) t = named_[s][cursor_[s]];
      cursor_[s]++;
      // The generic ops gather at every row's index, so it must be inside the vocabulary; the fused op reads the
      // markers (no token named, the greedy token's own log-probability) as they are.
      if (!fused_ && (t < 0 || t >= nVocab_)) t = 0;
      staged.push_back(t);
      i++;
    }
    if (staged.empty()) {
      i++;  // a row past the tensor (cannot happen with llama.cpp's views): skip it
      continue;
    }
    ggml_backend_tensor_set(namedIn_, staged.data(), static_cast<size_t>(first) * sizeof(int32_t), staged.size() * sizeof(int32_t));
  }
}

bool DevicePicks::read(llama_context* ctx, int32_t i, DeviceRow& out, long long& bytes) {
  const float* v = llama_get_sampled_logits_ith(ctx, i);
  if (v == nullptr) return false;
  const uint32_t n = llama_get_sampled_logits_count_ith(ctx, i);
  if (n == kFusedValues) {
    // The fused op's row: greedy (already the first index of the maximum), second, top1, top2, lse, named.
    int32_t ids[2];
    std::memcpy(ids, v, sizeof(ids));
    out.greedy = ids[0];
    out.top1 = v[2];
    out.top2 = v[3];
    out.lse = v[4];
    out.named = v[5];
    bytes += static_cast<long long>(kFusedValues * sizeof(float));
    return true;
  }
  const llama_token t = llama_get_sampled_token_ith(ctx, i);
  const llama_token* second = llama_get_sampled_candidates_ith(ctx, i);
  if (n != kValues || t == LLAMA_TOKEN_NULL || second == nullptr || llama_get_sampled_candidates_count_ith(ctx, i) != 1) return false;
  // At an exact tie the host scan keeps the first index; backends' argmax kernels differ in which they keep.
  out.greedy = v[0] == v[1] ? std::min(t, second[0]) : t;
  out.top1 = v[0];
  out.top2 = v[1];
  out.lse = v[2];
  out.named = v[3];
  bytes += static_cast<long long>(2 * sizeof(llama_token) + kValues * sizeof(float));
  return true;
}

}  // namespace attr_rag
