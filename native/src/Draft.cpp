#include "Draft.h"

#include <algorithm>

namespace attr_rag {
namespace {
constexpr int kRealignTokens = 3;  // tail length that must match A_full to draft from it again
}  // namespace

void startDraft(DraftState& d, int initialWindow) {
  d.enabled = true;
  d.alignAt = 0;
  d.window = std::max(kMinDraftWindow, initialWindow);
}

void proposeDraft(DraftState& d, const std::vector<llama_token>& source, int room) {
  d.tokens.clear();
  if (d.cooldown > 0) {
    d.cooldown--;
    return;
  }
  if (!d.enabled || d.alignAt < 0) return;
  const int available = static_cast<int>(source.size()) - d.alignAt;
  const int w = std::max(0, std::min({d.window, room, available}));
  d.tokens.assign(source.begin() + d.alignAt, source.begin() + d.alignAt + w);
}

void recordDraftOutcome(DraftState& d, size_t accepted) {
  if (!d.tokens.empty() && accepted == 0) {
    d.misses = std::min(d.misses + 1, 6);
    d.cooldown = (1 << d.misses) - 1;
  } else if (accepted > 0) {
    d.misses = 0;
  }
}

void followAnswer(DraftState& d, const std::vector<llama_token>& source, const std::vector<llama_token>& emitted,
                  const std::vector<llama_token>& answer, bool wholeDraftAccepted, int draftMax) {
  for (llama_token t : emitted) {
    if (d.alignAt >= 0 && d.alignAt < static_cast<int>(source.size()) && source[d.alignAt] == t) {
      d.alignAt++;
    } else {
      d.alignAt = -1;
    }
  }
  if (d.alignAt >= 0) {
    if (wholeDraftAccepted) d.window = std::min(std::max(d.window * 2, kMinDraftWindow), std::max(draftMax, kMinDraftWindow));
    return;
  }
  d.window = kMinDraftWindow;
  if (static_cast<int>(answer.size()) < kRealignTokens) return;
  const int n = static_cast<int>(source.size());
  for (int q = kRealignTokens; q < n; q++) {
    bool match = true;
    for (int i = 0; i < kRealignTokens && match; i++) {
      match = source[q - kRealignTokens + i] == answer[answer.size() - kRealignTokens + i];
    }
    if (match) {
      d.alignAt = q;
      return;
    }
  }
}

}  // namespace attr_rag
