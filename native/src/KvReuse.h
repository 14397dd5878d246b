// Approximate occlusion: an occluded prompt's KV cache assembled from the full prompt's instead of being
// recomputed. The cells after the occluded set keep the values they got while the set was present; only
// `gap` tokens right after the set and the last `tail` tokens of the prompt are recomputed.
//
// llama.cpp only accepts new tokens of a sequence at its last cached position + 1, and in a unified cache
// the cells a sequence shares with the full prompt have one position for all owners. So:
//   per-sequence streams  the sequence gets a copy of the full prompt's stream, loses the set's cells and
//                         the tail, and (kv-reuse) the kept cells are shifted back over the gap; no tokens
//                         can be recomputed right after the gap (gap must be 0);
//   unified cache         the sequence shares the prefix, recomputes `gap` tokens right after it, then shares
//                         the kept cells at their own positions (kv-mask only: shifting shared cells would
//                         move them for the full prompt too).
// When gap + tail cover everything after the set, the whole suffix is recomputed: the result is exact.
#pragma once

#include <string>
#include <vector>

#include "DecodeScheduler.h"
#include "llama.h"

namespace attr_rag {

struct ReusePlan {
  bool exact = false;                 // gap + tail cover the suffix: prefix-shared, nothing reused after it
  llama_pos setStart = 0, setEnd = 0; // the occluded set's positions in the full prompt
  llama_pos keptStart = 0, keptEnd = 0;  // full-prompt positions whose cells are reused after the gap
  std::vector<llama_token> gapFeed;   // recomputed right after the prefix (unified cache only)
  std::vector<llama_token> tailFeed;  // recomputed at the end of the prompt (the whole suffix when exact)
  llama_pos tailPos = 0;              // position of tailFeed[0] in the occluded sequence
  long long reused = 0;               // prompt tokens taken from the full prompt's cache
};

// Why a plan cannot be carried out on this cache layout (empty when it can).
std::string reuseUnsupported(bool shift, bool kvUnified, int32_t gap);

// Pure planning: which tokens are recomputed and where, for occluding [setStart, setEnd) of `full`.
ReusePlan planReuse(const std::vector<llama_token>& full, llama_pos setStart, llama_pos setEnd, bool shift, bool kvUnified,
                    int32_t gap, int32_t tail);

// Puts the reused cells into `dst` before gapFeed is decoded (source: sequence 0 holds the full prompt).
void beginReuse(Lane& lane, bool shift, llama_seq_id dst, const ReusePlan& plan);
// After gapFeed has been decoded: attaches the kept cells (unified cache; a no-op otherwise).
void finishReuse(Lane& lane, llama_seq_id dst, const ReusePlan& plan);

// KV cells one occluded sequence adds at peak (excluding the full prompt), for sizing waves.
long long reuseCells(const ReusePlan& plan, bool kvUnified, long long fullLength);

}  // namespace attr_rag
