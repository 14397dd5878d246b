#include "TokenText.h"

#include <climits>
#include <stdexcept>

namespace attr_rag {

std::string tokenPiece(const llama_vocab* vocab, llama_token token) {
  char buf[256];
  int32_t n = llama_token_to_piece(vocab, token, buf, sizeof(buf), 0, true);
  if (n >= 0) return std::string(buf, n);
  std::string big(static_cast<size_t>(-n), '\0');
  n = llama_token_to_piece(vocab, token, big.data(), static_cast<int32_t>(big.size()), 0, true);
  if (n < 0) throw std::runtime_error("could not render token " + std::to_string(token));
  big.resize(n);
  return big;
}

std::vector<llama_token> tokenize(const llama_vocab* vocab, const std::string& text, bool addSpecial, bool parseSpecial) {
  if (text.size() > static_cast<size_t>(INT32_MAX / 2)) throw std::runtime_error("text too long to tokenize");
  std::vector<llama_token> tokens(text.size() + 8);
  int32_t n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                             static_cast<int32_t>(tokens.size()), addSpecial, parseSpecial);
  if (n == INT32_MIN) throw std::runtime_error("tokenization overflowed");
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                       static_cast<int32_t>(tokens.size()), addSpecial, parseSpecial);
    if (n < 0) throw std::runtime_error("tokenization failed");
  }
  tokens.resize(static_cast<size_t>(n));
  return tokens;
}

std::string detokenize(const llama_vocab* vocab, const std::vector<llama_token>& tokens, bool removeSpecial,
                       bool unparseSpecial) {
  std::string text(tokens.size() * 8 + 16, '\0');
  int32_t n = llama_detokenize(vocab, tokens.data(), static_cast<int32_t>(tokens.size()), text.data(),
                               static_cast<int32_t>(text.size()), removeSpecial, unparseSpecial);
  if (n < 0) {
    text.resize(static_cast<size_t>(-n));
    n = llama_detokenize(vocab, tokens.data(), static_cast<int32_t>(tokens.size()), text.data(),
                         static_cast<int32_t>(text.size()), removeSpecial, unparseSpecial);
    if (n < 0) throw std::runtime_error("detokenization failed");
  }
  text.resize(static_cast<size_t>(n));
  return text;
}

}  // namespace attr_rag
