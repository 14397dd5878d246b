// Token ↔ text helpers shared by the model handle and the scheduler.
#pragma once

#include <string>
#include <vector>

#include "llama.h"

namespace attr_rag {

// The raw bytes of a token (may be a partial UTF-8 sequence); special tokens render as text.
std::string tokenPiece(const llama_vocab* vocab, llama_token token);

std::vector<llama_token> tokenize(const llama_vocab* vocab, const std::string& text, bool addSpecial, bool parseSpecial);

std::string detokenize(const llama_vocab* vocab, const std::vector<llama_token>& tokens, bool removeSpecial,
                       bool unparseSpecial);

}  // namespace attr_rag
