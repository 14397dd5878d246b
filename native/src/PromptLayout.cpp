// Where each part of an occlusion request's prompt lies (prefix, blocks, suffix), shared by the scheduler,
// the approximate strategies' plans and forced mode.
#include "KvReuse.h"
#include "Occlusion.h"

namespace attr_rag {

std::vector<llama_token> fullPromptOf(const OcclusionRequest& req) {
  std::vector<llama_token> p(req.prefix);
  for (const auto& b : req.blocks) p.insert(p.end(), b.begin(), b.end());
  p.insert(p.end(), req.suffix.begin(), req.suffix.end());
  return p;
}

llama_pos blockStartOf(const OcclusionRequest& req, int32_t j) {
  llama_pos start = static_cast<llama_pos>(req.prefix.size());
  for (int32_t i = 0; i < j; i++) start += static_cast<llama_pos>(req.blocks[i].size());
  return start;
}

std::vector<llama_token> occludedSuffixOf(const OcclusionRequest& req, int32_t j) {
  std::vector<llama_token> s;
  for (size_t i = j + 1; i < req.blocks.size(); i++) s.insert(s.end(), req.blocks[i].begin(), req.blocks[i].end());
  s.insert(s.end(), req.suffix.begin(), req.suffix.end());
  return s;
}

ReusePlan reusePlan(const OcclusionRequest& req, const std::vector<llama_token>& full, int32_t j) {
  const llama_pos start = blockStartOf(req, j);
  const int32_t tail = req.tailTokens < 0 ? static_cast<int32_t>(req.suffix.size()) : req.tailTokens;
  return planReuse(full, start, start + static_cast<llama_pos>(req.blocks[j].size()), req.strategy == Strategy::KvReuse,
                   req.kvUnified, req.gapTokens, tail);
}

}  // namespace attr_rag
