// Speculative drafting from A_full (speculative and approximate strategies): an occluded answer usually
// repeats long runs of A_full, so each step proposes A_full's next tokens as a draft that the same batched
// llama_decode verifies. Only accepted tokens are kept, so the answer is the one greedy decoding gives.
#pragma once

#include <cstddef>
#include <vector>

#include "llama.h"

namespace attr_rag {

constexpr int kMinDraftWindow = 4;

struct DraftState {
  bool enabled = false;
  int alignAt = -1;  // index in the draft source of the next expected token; -1 = not aligned
  int window = kMinDraftWindow;
  // Drafts rejected outright back off exponentially, so an answer that has left A_full for good stops
  // paying for drafts that never match.
  int misses = 0;
  int cooldown = 0;
  std::vector<llama_token> tokens;  // this step's draft
};

// Aligned at A_full's first token, with the request's initial window.
void startDraft(DraftState& d, int initialWindow);

// Chooses this step's draft: up to `window` source tokens from alignAt, at most `room`; none while cooling down.
void proposeDraft(DraftState& d, const std::vector<llama_token>& source, int room);

// After the step verified the draft: `accepted` of its tokens were the greedy ones (backoff bookkeeping).
void recordDraftOutcome(DraftState& d, size_t accepted);

// Follows the answer through the source after the step emitted `emitted`; when it has left the source,
// looks for its last few tokens in the source to draft from there again.
void followAnswer(DraftState& d, const std::vector<llama_token>& source, const std::vector<llama_token>& emitted,
                  const std::vector<llama_token>& answer, bool wholeDraftAccepted, int draftMax);

}  // namespace attr_rag
