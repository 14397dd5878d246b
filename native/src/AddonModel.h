// The native model handle: load (async), tokenizer, chat template, facts about the model, dispose.
#pragma once

#include <napi.h>

#include <atomic>
#include <mutex>

#include "llama.h"

namespace attr_rag {

class AddonModel : public Napi::ObjectWrap<AddonModel> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit AddonModel(const Napi::CallbackInfo& info);
  ~AddonModel() override;

  // For contexts: the loaded model or a JS error if it is not loaded / disposed.
  llama_model* require(Napi::Env env) const;
  void retainContext() { contexts_++; }
  void releaseContext() { contexts_--; }

 private:
  friend class LoadModelWorker;
  Napi::Value Load(const Napi::CallbackInfo& info);
  Napi::Value Tokenize(const Napi::CallbackInfo& info);
  Napi::Value Detokenize(const Napi::CallbackInfo& info);
  Napi::Value TokenPiece(const Napi::CallbackInfo& info);
  Napi::Value ApplyChatTemplate(const Napi::CallbackInfo& info);
  Napi::Value IsEog(const Napi::CallbackInfo& info);
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value Dispose(const Napi::CallbackInfo& info);
  void free();

  llama_model* model_ = nullptr;
  bool loading_ = false;
  bool disposed_ = false;
  std::atomic<int> contexts_{0};
};

}  // namespace attr_rag
