// AsyncWorkers for the context's jobs. Each Ref()s its context, never touches JS in Execute(), resolves or
// rejects a Promise, and tells the context its job ended so a pending dispose can run.
#pragma once

#include <napi.h>

#include <memory>
#include <string>
#include <vector>

#include "Embedding.h"
#include "Occlusion.h"
#include "Scoring.h"

namespace attr_rag {

class AddonContext;

class ContextJobWorker : public Napi::AsyncWorker {
 public:
  ContextJobWorker(Napi::Env env, AddonContext* owner);
  ~ContextJobWorker() override;
  Napi::Promise Promise() { return deferred_.Promise(); }
  void OnOK() override;
  void OnError(const Napi::Error& e) override;

 protected:
  // Runs a job body, turning C++ exceptions into the worker's error (cancellation included).
  template <typename F>
  void guarded(F&& body) {
    try {
      body();
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  virtual Napi::Value result(Napi::Env env) = 0;
  virtual void finished() {}
  AddonContext* owner_;
  Napi::Promise::Deferred deferred_;
};

class OccludeWorker : public ContextJobWorker {
 public:
  OccludeWorker(Napi::Env env, AddonContext* owner, OcclusionRequest req, Napi::Value onProgress);
  void Execute() override;

 private:
  Napi::Value result(Napi::Env env) override;
  void finished() override;
  OcclusionRequest req_;
  OcclusionResult out_;
  Napi::ThreadSafeFunction progress_;
  bool hasProgress_ = false;
};

class ScoreWorker : public ContextJobWorker {
 public:
  ScoreWorker(Napi::Env env, AddonContext* owner, ScoreRequest req);
  void Execute() override;

 private:
  Napi::Value result(Napi::Env env) override;
  ScoreRequest req_;
  ScoreResult out_;
};

class EmbedWorker : public ContextJobWorker {
 public:
  EmbedWorker(Napi::Env env, AddonContext* owner, std::vector<std::vector<llama_token>> seqs);
  void Execute() override;

 private:
  Napi::Value result(Napi::Env env) override;
  std::vector<std::vector<llama_token>> seqs_;
  EmbedResult out_;
};

}  // namespace attr_rag
