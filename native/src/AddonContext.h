// The native context handle: one llama_context (unified KV cache) that runs one job at a time:
// occlusion, teacher-forced scoring or embedding. JS validates arguments; this class re-checks the
// limits whose violation would trip a GGML_ASSERT and abort the process.
#pragma once

#include <napi.h>

#include <atomic>

#include "Occlusion.h"
#include "llama.h"

namespace attr_rag {

class AddonModel;

class AddonContext : public Napi::ObjectWrap<AddonContext> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit AddonContext(const Napi::CallbackInfo& info);
  ~AddonContext() override;

  // Called by workers on the JS thread when their job ends.
  void jobFinished();
  llama_context* ctx() const { return ctx_; }
  std::atomic<bool>& cancelFlag() { return cancel_; }

 private:
  friend class CreateContextWorker;
  Napi::Value InitContext(const Napi::CallbackInfo& info);
  Napi::Value Occlude(const Napi::CallbackInfo& info);
  Napi::Value Score(const Napi::CallbackInfo& info);
  Napi::Value Embed(const Napi::CallbackInfo& info);
  Napi::Value CellsNeeded(const Napi::CallbackInfo& info);
  Napi::Value Cancel(const Napi::CallbackInfo& info);
  Napi::Value SequencesInUse(const Napi::CallbackInfo& info);
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value Dispose(const Napi::CallbackInfo& info);
  void beginJob(Napi::Env env);
  void checkApproximate(Napi::Env env, const OcclusionRequest& req);
  void free();

  AddonModel* model_ = nullptr;
  Napi::ObjectReference modelRef_;
  llama_context* ctx_ = nullptr;
  bool creating_ = false;
  bool kvUnified_ = true;
  bool busy_ = false;
  bool disposeRequested_ = false;
  std::atomic<bool> cancel_{false};
};

}  // namespace attr_rag
