// A job's view of the shared context: its own sequence ids and KV operations, decoding through the scheduler,
// and cross-job prefix reuse (see DecodeScheduler.h).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "DecodeScheduler.h"

namespace attr_rag {

Lane::Lane(DecodeScheduler& owner, std::vector<llama_seq_id> ids, long long cells, const std::atomic<bool>& cancel)
    : owner_(owner), ids_(std::move(ids)), reservedCells_(cells), cancel_(cancel) {
  cells_ = owner_.kvUnified_ ? cells : static_cast<long long>(llama_n_ctx_seq(owner_.ctx_));
}

Lane::~Lane() {
  try {
    clear();
  } catch (...) {
    // Freeing cells cannot fail for a transformer cache; a destructor must not throw either way.
  }
  owner_.release(*this);
}

bool Lane::kvUnified() const { return owner_.kvUnified_; }
llama_context* Lane::ctx() const { return owner_.ctx_; }

llama_seq_id Lane::global(llama_seq_id local) const {
  if (local < 0 || local >= static_cast<llama_seq_id>(ids_.size())) {
    throw std::runtime_error("internal error: sequence " + std::to_string(local) + " outside the job's " +
                             std::to_string(ids_.size()) + " reserved sequences");
  }
  return ids_[static_cast<size_t>(local)];
}

void Lane::run(const std::vector<BatchItem>& items, const OnOutput& onOutput, BatchStats& stats) {
  if (cancel_.load()) throw Cancelled();
  if (items.empty()) return;
  for (const auto& it : items) global(it.seq);  // a bad id must fail here, not inside llama.cpp
  DecodeScheduler::Pending p;
  p.lane = this;
  p.items = &items;
  p.onOutput = &onOutput;
  p.stats = &stats;
  owner_.submit(p);
}

bool Lane::seqRm(llama_seq_id seq, llama_pos p0, llama_pos p1) {
  std::lock_guard<std::mutex> kv(owner_.kv_);
  const llama_seq_id g = global(seq);
  for (const auto& pub : owner_.published_) {
    // Cutting into a published prompt takes it off offer first.
    if (pub.lane == this && pub.seq == g && p0 < static_cast<llama_pos>(pub.tokens.size())) {
      owner_.unpublish(*this, g);
      break;
    }
  }
  return llama_memory_seq_rm(llama_get_memory(owner_.ctx_), g, p0, p1);
}

void Lane::withKv(const std::function<void(llama_context*)>& fn) {
  std::lock_guard<std::mutex> kv(owner_.kv_);
  fn(owner_.ctx_);
}

void Lane::seqCp(llama_seq_id src, llama_seq_id dst, llama_pos p0, llama_pos p1) {
  std::lock_guard<std::mutex> kv(owner_.kv_);
  llama_memory_seq_cp(llama_get_memory(owner_.ctx_), global(src), global(dst), p0, p1);
}

void Lane::seqAdd(llama_seq_id seq, llama_pos p0, llama_pos p1, llama_pos delta) {
  std::lock_guard<std::mutex> kv(owner_.kv_);
  llama_memory_seq_add(llama_get_memory(owner_.ctx_), global(seq), p0, p1, delta);
}

void Lane::clear() {
  std::lock_guard<std::mutex> kv(owner_.kv_);
  owner_.unpublish(*this, -1);
  llama_memory_t mem = llama_get_memory(owner_.ctx_);
  if (mem == nullptr) return;
  for (llama_seq_id id : ids_) llama_memory_seq_rm(mem, id, -1, -1);
}

llama_pos Lane::adoptPrefix(llama_seq_id dst, const std::vector<llama_token>& tokens) {
  std::lock_guard<std::mutex> kv(owner_.kv_);
  const llama_seq_id to = global(dst);
  size_t best = 0;
  llama_seq_id from = -1;
  for (const auto& pub : owner_.published_) {
    if (pub.lane == this) continue;
    const size_t n = std::min(pub.tokens.size(), tokens.empty() ? 0 : tokens.size() - 1);
    size_t k = 0;
    while (k < n && pub.tokens[k] == tokens[k]) k++;
    if (k > best) {
      best = k;
      from = pub.seq;
    }
  }
  if (from < 0 || best < kMinSharedPrefix) return 0;
  llama_memory_t mem = llama_get_memory(owner_.ctx_);
  const llama_pos length = static_cast<llama_pos>(best);
  if (owner_.kvUnified_) {
    llama_memory_seq_cp(mem, from, to, 0, length);
  } else {
    // A partial cross-stream copy trips a GGML_ASSERT: copy the stream, then trim it.
    llama_memory_seq_cp(mem, from, to, -1, -1);
    llama_memory_seq_rm(mem, to, length, -1);
  }
  owner_.prefixTokensShared_ += length;
  return length;
}

void Lane::publishPrefix(llama_seq_id seq, const std::vector<llama_token>& tokens) {
  if (tokens.size() < kMinSharedPrefix) return;
  std::lock_guard<std::mutex> kv(owner_.kv_);
  owner_.published_.push_back({this, global(seq), tokens});
}

}  // namespace attr_rag
