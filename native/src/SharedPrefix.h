// How one sequence of a job gets the prompt prefix it shares with another: the KV-cell operation that
// occlusion (exact and approximate) and scoring all build on. Kept apart from Occlusion.h so the approximate
// plans (KvReuse) can use it without depending on the occlusion scheduler that depends on them.
#pragma once

#include "DecodeScheduler.h"
#include "llama.h"

namespace attr_rag {

// Gives sequence `dst` the first `length` positions of sequence 0's cache. A unified cache shares the cells;
// a per-sequence cache can only copy a whole stream (a partial cross-stream copy trips a GGML_ASSERT), so the
// stream is copied and the tail trimmed.
void sharePrefix(Lane& lane, llama_seq_id dst, llama_pos length);
// The same from any source sequence that holds at least `length` positions.
void sharePrefixFrom(Lane& lane, llama_seq_id src, llama_seq_id dst, llama_pos length);

}  // namespace attr_rag
