#include "SharedPrefix.h"

namespace attr_rag {

void sharePrefix(Lane& lane, llama_seq_id dst, llama_pos length) { sharePrefixFrom(lane, 0, dst, length); }

void sharePrefixFrom(Lane& lane, llama_seq_id src, llama_seq_id dst, llama_pos length) {
  if (length <= 0) return;
  if (lane.kvUnified()) {
    lane.seqCp(src, dst, 0, length);
  } else {
    lane.seqCp(src, dst, -1, -1);
    lane.seqRm(dst, length, -1);
  }
}

}  // namespace attr_rag
