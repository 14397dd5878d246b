// KV cells an occlusion request needs: the context sizes a job's reservation and Occlusion.cpp its waves
// through this.
#include <algorithm>
#include <vector>

#include "KvReuse.h"
#include "Occlusion.h"

namespace attr_rag {

long long occlusionCellsNeeded(const OcclusionRequest& req, int parallel) {
  long long full = static_cast<long long>(req.prefix.size() + req.suffix.size());
  for (const auto& b : req.blocks) full += static_cast<long long>(b.size());
  const long long answer = req.maxTokens + 1;
  if (req.strategy == Strategy::Naive) return full + answer;
  const bool drafts = req.strategy == Strategy::Speculative || isApproximate(req.strategy);
  const long long draft = drafts ? std::max(req.draftMax, 4) : 0;
  // Per-sequence streams: each holds its whole prompt (the copied prefix included) and its answer.
  if (!req.kvUnified) return full + answer + draft;
  std::vector<long long> suffixes;
  const std::vector<llama_token> prompt = isApproximate(req.strategy) ? fullPromptOf(req) : std::vector<llama_token>();
  for (int32_t j : req.occlude) {
    if (isApproximate(req.strategy)) {
      suffixes.push_back(reuseCells(reusePlan(req, prompt, j), true, full) + answer + draft);
      continue;
    }
    long long s = static_cast<long long>(req.suffix.size());
    for (size_t i = j + 1; i < req.blocks.size(); i++) s += static_cast<long long>(req.blocks[i].size());
    suffixes.push_back(s + answer + draft);
  }
  std::sort(suffixes.rbegin(), suffixes.rend());
  long long cells = full + answer;
  for (int k = 0; k < parallel && k < static_cast<int>(suffixes.size()); k++) cells += suffixes[k];
  return cells;
}

}  // namespace attr_rag
