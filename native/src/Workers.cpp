#include "Workers.h"

#include <thread>

#include "Requests.h"

namespace attr_rag {

ContextJob::ContextJob(Napi::Env env, JobOwner* owner, uint32_t id, Reservation reservation)
    : owner_(owner), deferred_(Napi::Promise::Deferred::New(env)), reservation_(reservation), id_(id) {
  owner_->retainForJob();
}

Napi::Promise ContextJob::start() {
  Napi::Env env = deferred_.Env();
  // The completion is delivered through a thread-safe function, which also keeps the event loop alive while
  // the job runs (as an AsyncWorker would).
  done_ = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}), "attr-rag-job", 0, 1);
  std::thread([this] { threadMain(); }).detach();
  return deferred_.Promise();
}

void ContextJob::threadMain() {
  try {
    std::unique_ptr<Lane> lane = owner_->scheduler().admit(reservation_, cancel_);
    execute(*lane);
    // The lane's destructor frees the job's cells and sequences before the job is reported done.
  } catch (const Cancelled&) {
    failed_ = true;
    error_ = "cancelled";
  } catch (const std::exception& e) {
    failed_ = true;
    error_ = e.what();
  } catch (...) {
    // Anything else escaping a detached thread would call std::terminate and take the Node process with it.
    failed_ = true;
    error_ = "the native job failed with an exception that is not a std::exception";
  }
  // `this` is deleted on the JS thread once the call runs; the handle is copied so the release after it
  // does not read the deleted job.
  Napi::ThreadSafeFunction done = done_;
  done.BlockingCall(this, [](Napi::Env env, Napi::Function, ContextJob* job) { job->complete(env); });
  done.Release();
}

void ContextJob::complete(Napi::Env env) {
  Napi::HandleScope scope(env);
  Napi::Value value = env.Undefined();
  if (!failed_) {
    try {
      value = result(env);
    } catch (const Napi::Error& e) {
      failed_ = true;
      error_ = e.Message();
    }
  }
  finished();
  JobOwner* owner = owner_;
  owner->jobFinished(id_);
  if (failed_) {
    Napi::Error err = Napi::Error::New(env, error_);
    if (error_ == "cancelled") err.Set("code", "ABORT_ERR");
    deferred_.Reject(err.Value());
  } else {
    deferred_.Resolve(value);
  }
  delete this;
  owner->releaseForJob();
}

OccludeJob::OccludeJob(Napi::Env env, JobOwner* owner, uint32_t id, Reservation r, OcclusionRequest req, Napi::Value onProgress)
    : ContextJob(env, owner, id, r), req_(std::move(req)) {
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

void OccludeJob::execute(Lane& lane) {
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
  out_ = runOcclusion(lane, req_, progress);
}

Napi::Value OccludeJob::result(Napi::Env env) { return occlusionResultToJs(env, out_); }

void OccludeJob::finished() {
  if (hasProgress_) {
    progress_.Release();
    hasProgress_ = false;
  }
}

ScoreJob::ScoreJob(Napi::Env env, JobOwner* owner, uint32_t id, Reservation r, ScoreRequest req)
    : ContextJob(env, owner, id, r), req_(std::move(req)) {}

void ScoreJob::execute(Lane& lane) { out_ = runScoring(lane, req_); }

Napi::Value ScoreJob::result(Napi::Env env) { return scoreResultToJs(env, out_); }

EmbedJob::EmbedJob(Napi::Env env, JobOwner* owner, uint32_t id, Reservation r, std::vector<std::vector<llama_token>> seqs)
    : ContextJob(env, owner, id, r), seqs_(std::move(seqs)) {}

// An embedding job holds the whole context (its reservation is every sequence and cell), so it may use the
// context directly: pooled passes clear the cache between batches.
void EmbedJob::execute(Lane& lane) { out_ = runEmbedding(lane, seqs_, cancelFlag()); }

Napi::Value EmbedJob::result(Napi::Env env) {
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
