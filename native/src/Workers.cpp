#include "Workers.h"

#include "AddonContext.h"
#include "Requests.h"

namespace attr_rag {

ContextJobWorker::ContextJobWorker(Napi::Env env, AddonContext* owner)
    : Napi::AsyncWorker(env), owner_(owner), deferred_(env) {
  owner_->Ref();
}

ContextJobWorker::~ContextJobWorker() { owner_->Unref(); }

void ContextJobWorker::OnOK() {
  Napi::Env env = Env();
  Napi::Value value = result(env);
  finished();
  owner_->jobFinished();
  deferred_.Resolve(value);
}

void ContextJobWorker::OnError(const Napi::Error& e) {
  finished();
  owner_->jobFinished();
  Napi::Error err = e;
  if (std::string(e.Message()) == "cancelled") err.Set("code", "ABORT_ERR");
  deferred_.Reject(err.Value());
}

OccludeWorker::OccludeWorker(Napi::Env env, AddonContext* owner, OcclusionRequest req, Napi::Value onProgress)
    : ContextJobWorker(env, owner), req_(std::move(req)) {
  if (onProgress.IsFunction()) {
    progress_ = Napi::ThreadSafeFunction::New(env, onProgress.As<Napi::Function>(), "attr-rag-occlusion-progress", 0, 1);
    hasProgress_ = true;
  }
}

namespace {
struct ProgressEvent {
  int kind;
  int index;
  llama_token token;
};
}  // namespace

void OccludeWorker::Execute() {
  guarded([&] {
    OcclusionProgress progress = [&](int kind, int index, llama_token token) {
      if (!hasProgress_) return;
      progress_.NonBlockingCall(new ProgressEvent{kind, index, token}, [](Napi::Env env, Napi::Function fn, ProgressEvent* e) {
        try {
          fn.Call({Napi::Number::New(env, e->kind), Napi::Number::New(env, e->index), Napi::Number::New(env, e->token)});
        } catch (const Napi::Error&) {
          // A throwing progress listener must not take the process down; the job goes on.
        }
        delete e;
      });
    };
    out_ = runOcclusion(owner_->ctx(), req_, owner_->cancelFlag(), progress);
  });
}

Napi::Value OccludeWorker::result(Napi::Env env) { return occlusionResultToJs(env, out_); }

void OccludeWorker::finished() {
  if (hasProgress_) {
    progress_.Release();
    hasProgress_ = false;
  }
}

ScoreWorker::ScoreWorker(Napi::Env env, AddonContext* owner, ScoreRequest req)
    : ContextJobWorker(env, owner), req_(std::move(req)) {}

void ScoreWorker::Execute() {
  guarded([&] { out_ = runScoring(owner_->ctx(), req_, owner_->cancelFlag()); });
}

Napi::Value ScoreWorker::result(Napi::Env env) { return scoreResultToJs(env, out_); }

EmbedWorker::EmbedWorker(Napi::Env env, AddonContext* owner, std::vector<std::vector<llama_token>> seqs)
    : ContextJobWorker(env, owner), seqs_(std::move(seqs)) {}

void EmbedWorker::Execute() {
  guarded([&] { out_ = runEmbedding(owner_->ctx(), seqs_, owner_->cancelFlag()); });
}

Napi::Value EmbedWorker::result(Napi::Env env) {
  Napi::Array arr = Napi::Array::New(env, out_.vectors.size());
  for (size_t i = 0; i < out_.vectors.size(); i++) {
    Napi::Float32Array v = Napi::Float32Array::New(env, out_.vectors[i].size());
    std::copy(out_.vectors[i].begin(), out_.vectors[i].end(), v.Data());
    arr.Set(static_cast<uint32_t>(i), v);
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("vectors", arr);
  o.Set("tokensEvaluated", static_cast<double>(out_.tokensEvaluated));
  o.Set("decodeCalls", static_cast<double>(out_.decodeCalls));
  return o;
}

}  // namespace attr_rag
