#include "KvReuse.h"

#include <algorithm>
#include <stdexcept>

#include "SharedPrefix.h"

namespace attr_rag {
namespace {

void removeCells(Lane& lane, llama_seq_id seq, llama_pos p0, llama_pos p1) {
  if (p0 == p1) return;
  if (!lane.seqRm(seq, p0, p1)) {
    throw std::runtime_error("the model's memory cannot drop cells from the middle of a sequence (recurrent or hybrid "
                             "model); use an exact strategy");
  }
}

}  // namespace

std::string reuseUnsupported(bool shift, bool kvUnified, int32_t gap) {
  if (shift && kvUnified) {
    return "kv-reuse shifts the kept cells' positions, which a unified KV cache shares with the full prompt; use a "
           "context with per-sequence KV streams (kvUnified: false, the default) or kv-mask";
  }
  if (gap > 0 && !kvUnified) {
    return "recomputing tokens right after the occluded set needs a unified KV cache (llama.cpp only accepts a "
           "sequence's new tokens after its last cached position); use gap 0 or a context with kvUnified: true and kv-mask";
  }
  return "";
}

ReusePlan planReuse(const std::vector<llama_token>& full, llama_pos setStart, llama_pos setEnd, bool shift, bool kvUnified,
                    int32_t gap, int32_t tail) {
  const std::string why = reuseUnsupported(shift, kvUnified, gap);
  if (!why.empty()) throw std::runtime_error(why);
  ReusePlan p;
  const llama_pos L = static_cast<llama_pos>(full.size());
  p.setStart = setStart;
  p.setEnd = setEnd;
  const llama_pos after = L - setEnd;
  // At least one token is recomputed: the last prompt token's logits start the answer.
  const llama_pos m = std::clamp<llama_pos>(tail, 1, std::max<llama_pos>(after, 1));
  const llama_pos r = std::clamp<llama_pos>(gap, 0, after - m);
  if (after <= 0 || r + m >= after) {
    p.exact = true;
    p.tailFeed.assign(full.begin() + setEnd, full.end());
    p.tailPos = setStart;
    p.reused = setStart;
    return p;
  }
  p.gapFeed.assign(full.begin() + setEnd, full.begin() + setEnd + r);
  p.keptStart = setEnd + r;
  p.keptEnd = L - m;
  p.tailFeed.assign(full.begin() + (L - m), full.end());
  p.tailPos = shift ? L - m - (setEnd - setStart) : L - m;
  p.reused = static_cast<long long>(setStart) + (p.keptEnd - p.keptStart);
  return p;
}

void beginReuse(Lane& lane, bool shift, llama_seq_id dst, const ReusePlan& plan) {
  if (plan.exact) {
    sharePrefix(lane, dst, plan.setStart);
    return;
  }
  if (lane.kvUnified()) {
    // Shared cells keep their positions; the gap tokens are decoded next, then the kept cells attached.
    if (plan.setStart > 0) lane.seqCp(0, dst, 0, plan.setStart);
    return;
  }
  // Per-sequence streams: a whole-stream copy (a partial cross-stream copy trips a GGML_ASSERT), then trim.
  lane.seqCp(0, dst, -1, -1);
  removeCells(lane, dst, plan.keptEnd, -1);
  removeCells(lane, dst, plan.setStart, plan.setEnd);
  if (shift) lane.seqAdd(dst, plan.keptStart, plan.keptEnd, -(plan.setEnd - plan.setStart));
}

void finishReuse(Lane& lane, llama_seq_id dst, const ReusePlan& plan) {
  if (plan.exact || !lane.kvUnified()) return;
  lane.seqCp(0, dst, plan.keptStart, plan.keptEnd);
}

long long reuseCells(const ReusePlan& plan, bool kvUnified, long long fullLength) {
  if (!kvUnified) return fullLength;  // a stream holds at most the full prompt's length before trimming
  if (plan.exact) return static_cast<long long>(plan.tailFeed.size());
  return static_cast<long long>(plan.gapFeed.size() + plan.tailFeed.size());
}

}  // namespace attr_rag
