#include "AddonContext.h"

#include <string>
#include <thread>

#include "AddonModel.h"
#include "Backend.h"
#include "Requests.h"
#include "Workers.h"

namespace attr_rag {

class CreateContextWorker : public Napi::AsyncWorker {
 public:
  CreateContextWorker(Napi::Env env, AddonContext* owner, llama_model* model, llama_context_params params)
      : Napi::AsyncWorker(env), owner_(owner), model_(model), params_(params), deferred_(env) {
    owner_->Ref();
  }
  ~CreateContextWorker() override { owner_->Unref(); }
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override {
    clearLastLlamaError();
    ctx_ = llama_init_from_model(model_, params_);
    if (ctx_ == nullptr) {
      const std::string why = lastLlamaError();
      SetError("could not create a llama.cpp context" + (why.empty() ? std::string() : ": " + why) +
               "; try a smaller contextSize or batchSize");
    }
  }
  void OnOK() override {
    owner_->creating_ = false;
    owner_->ctx_ = ctx_;
    llama_set_abort_callback(ctx_, [](void* data) { return static_cast<std::atomic<bool>*>(data)->load(); },
                             &owner_->cancel_);
    if (owner_->disposeRequested_) owner_->free();
    deferred_.Resolve(Env().Undefined());
  }
  void OnError(const Napi::Error& e) override {
    owner_->creating_ = false;
    deferred_.Reject(e.Value());
  }

 private:
  AddonContext* owner_;
  llama_model* model_;
  llama_context_params params_;
  llama_context* ctx_ = nullptr;
  Napi::Promise::Deferred deferred_;
};

Napi::Function AddonContext::Init(Napi::Env env) {
  return DefineClass(env, "AddonContext",
                     {InstanceMethod("init", &AddonContext::InitContext), InstanceMethod("occlude", &AddonContext::Occlude),
                      InstanceMethod("score", &AddonContext::Score), InstanceMethod("embed", &AddonContext::Embed),
                      InstanceMethod("cellsNeeded", &AddonContext::CellsNeeded),
                      InstanceMethod("cancel", &AddonContext::Cancel),
                      InstanceMethod("sequencesInUse", &AddonContext::SequencesInUse), InstanceMethod("info", &AddonContext::Info),
                      InstanceMethod("dispose", &AddonContext::Dispose)});
}

AddonContext::AddonContext(const Napi::CallbackInfo& info) : Napi::ObjectWrap<AddonContext>(info) {
  Napi::Object modelObj = info[0].As<Napi::Object>();
  model_ = Napi::ObjectWrap<AddonModel>::Unwrap(modelObj);
  model_->require(info.Env());
  modelRef_ = Napi::Persistent(modelObj);
  model_->retainContext();
}

AddonContext::~AddonContext() { free(); }

void AddonContext::free() {
  if (ctx_ != nullptr) {
    llama_free(ctx_);
    ctx_ = nullptr;
  }
  if (model_ != nullptr) {
    model_->releaseContext();
    model_ = nullptr;
    modelRef_.Reset();
  }
}

Napi::Value AddonContext::InitContext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (disposeRequested_ || model_ == nullptr) throw Napi::Error::New(env, "the context has been disposed");
  if (ctx_ != nullptr || creating_) throw Napi::Error::New(env, "init() was already called on this context");
  Napi::Object o = info[0].As<Napi::Object>();
  llama_context_params p = llama_context_default_params();
  p.n_ctx = o.Get("contextSize").As<Napi::Number>().Uint32Value();
  p.n_batch = o.Get("batchSize").As<Napi::Number>().Uint32Value();
  p.n_ubatch = o.Get("ubatchSize").As<Napi::Number>().Uint32Value();
  p.n_seq_max = o.Get("sequences").As<Napi::Number>().Uint32Value();
  const int32_t threads = o.Get("threads").As<Napi::Number>().Int32Value();
  p.n_threads = threads;
  p.n_threads_batch = threads;
  p.embeddings = o.Get("embeddings").As<Napi::Boolean>().Value();
  p.pooling_type = static_cast<enum llama_pooling_type>(o.Get("pooling").As<Napi::Number>().Int32Value());
  p.flash_attn_type = static_cast<enum llama_flash_attn_type>(o.Get("flashAttention").As<Napi::Number>().Int32Value());
  const int32_t kvType = o.Get("kvType").IsNumber() ? o.Get("kvType").As<Napi::Number>().Int32Value() : GGML_TYPE_F16;
  p.type_k = static_cast<enum ggml_type>(kvType);
  p.type_v = static_cast<enum ggml_type>(kvType);
  // Unified: one cache whose cells the occluded sequences share with the full prompt (seq_cp copies no
  // data), but attention scans every used cell. Per-sequence streams: each sequence attends only to its own
  // cells; the shared prefix is copied stream to stream.
  kvUnified_ = !o.Get("kvUnified").IsBoolean() || o.Get("kvUnified").As<Napi::Boolean>().Value();
  p.kv_unified = kvUnified_;
  p.no_perf = true;
  creating_ = true;
  auto* worker = new CreateContextWorker(env, this, model_->require(env), p);
  worker->Queue();
  return worker->Promise();
}

// The approximate strategies need a cache layout and a model whose positions can be shifted; refused here,
// before llama.cpp would assert on them.
void AddonContext::checkApproximate(Napi::Env env, const OcclusionRequest& req) {
  if (!isApproximate(req.strategy)) return;
  const std::string why = reuseUnsupported(req.strategy == Strategy::KvReuse, req.kvUnified, req.gapTokens);
  if (!why.empty()) throw Napi::RangeError::New(env, why);
  if (req.strategy == Strategy::KvReuse && ctx_ != nullptr && !llama_memory_can_shift(llama_get_memory(ctx_))) {
    throw Napi::RangeError::New(env, "this model's KV cache cannot shift positions (llama_memory_can_shift is false); use kv-mask or an exact strategy");
  }
}

void AddonContext::beginJob(Napi::Env env) {
  if (disposeRequested_ || model_ == nullptr) throw Napi::Error::New(env, "the context has been disposed");
  if (ctx_ == nullptr) throw Napi::Error::New(env, "the context is not initialised; await init() first");
  if (busy_) throw Napi::Error::New(env, "the context is busy with another job; wait for it or use another context");
  busy_ = true;
  cancel_.store(false);
}

void AddonContext::jobFinished() {
  busy_ = false;
  if (disposeRequested_) free();
}

Napi::Value AddonContext::Occlude(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  beginJob(env);
  try {
    OcclusionRequest req = readOcclusionRequest(info[0].As<Napi::Object>(), llama_vocab_n_tokens(llama_model_get_vocab(model_->require(env))));
    req.kvUnified = kvUnified_;
    checkApproximate(env, req);
    auto* worker = new OccludeWorker(env, this, std::move(req), info.Length() > 1 ? info[1] : env.Undefined());
    worker->Queue();
    return worker->Promise();
  } catch (...) {
    busy_ = false;
    throw;
  }
}

Napi::Value AddonContext::Score(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  beginJob(env);
  try {
    ScoreRequest req = readScoreRequest(info[0].As<Napi::Object>(), llama_vocab_n_tokens(llama_model_get_vocab(model_->require(env))));
    req.kvUnified = kvUnified_;
    auto* worker = new ScoreWorker(env, this, std::move(req));
    worker->Queue();
    return worker->Promise();
  } catch (...) {
    busy_ = false;
    throw;
  }
}

Napi::Value AddonContext::Embed(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  beginJob(env);
  try {
    auto seqs = readTokenLists(info[0]);
    const int32_t nVocab = llama_vocab_n_tokens(llama_model_get_vocab(model_->require(env)));
    for (const auto& s : seqs) {
      for (llama_token t : s) {
        if (t < 0 || t >= nVocab) throw Napi::RangeError::New(env, "token id " + std::to_string(t) + " is outside the vocabulary");
      }
    }
    auto* worker = new EmbedWorker(env, this, std::move(seqs));
    worker->Queue();
    return worker->Promise();
  } catch (...) {
    busy_ = false;
    throw;
  }
}

Napi::Value AddonContext::CellsNeeded(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (model_ == nullptr || disposeRequested_) throw Napi::Error::New(env, "the context has been disposed");
  const int32_t nVocab = llama_vocab_n_tokens(llama_model_get_vocab(model_->require(env)));
  Napi::Object o = info[0].As<Napi::Object>();
  const int parallel = info[1].As<Napi::Number>().Int32Value();
  if (o.Get("continuation").IsTypedArray()) {
    ScoreRequest req = readScoreRequest(o, nVocab);
    req.kvUnified = kvUnified_;
    return Napi::Number::New(env, static_cast<double>(scoreCellsNeeded(req, parallel)));
  }
  OcclusionRequest req = readOcclusionRequest(o, nVocab);
  req.kvUnified = kvUnified_;
  checkApproximate(env, req);
  return Napi::Number::New(env, static_cast<double>(occlusionCellsNeeded(req, parallel)));
}

Napi::Value AddonContext::Cancel(const Napi::CallbackInfo& info) {
  cancel_.store(true);
  return info.Env().Undefined();
}

// How many sequences hold KV cells; 0 between jobs (every job clears what it used, also when cancelled).
Napi::Value AddonContext::SequencesInUse(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (ctx_ == nullptr) throw Napi::Error::New(env, "the context is not initialised or has been disposed");
  if (busy_) throw Napi::Error::New(env, "the context is running a job");
  llama_memory_t mem = llama_get_memory(ctx_);
  if (mem == nullptr) return Napi::Number::New(env, 0);
  int used = 0;
  for (uint32_t s = 0; s < llama_n_seq_max(ctx_); s++) used += llama_memory_seq_pos_max(mem, static_cast<llama_seq_id>(s)) >= 0 ? 1 : 0;
  return Napi::Number::New(env, used);
}

Napi::Value AddonContext::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (ctx_ == nullptr) throw Napi::Error::New(env, "the context is not initialised or has been disposed");
  Napi::Object o = Napi::Object::New(env);
  o.Set("contextSize", llama_n_ctx(ctx_));
  // Cells one sequence can use: all of them in a unified cache, its stream's share otherwise.
  o.Set("sequenceCells", kvUnified_ ? llama_n_ctx(ctx_) : llama_n_ctx_seq(ctx_));
  o.Set("kvUnified", kvUnified_);
  o.Set("batchSize", llama_n_batch(ctx_));
  o.Set("ubatchSize", llama_n_ubatch(ctx_));
  o.Set("sequences", llama_n_seq_max(ctx_));
  o.Set("pooling", static_cast<int32_t>(llama_pooling_type(ctx_)));
  o.Set("threads", llama_n_threads(ctx_));
  return o;
}

Napi::Value AddonContext::Dispose(const Napi::CallbackInfo& info) {
  disposeRequested_ = true;
  if (busy_) {
    cancel_.store(true);  // the running job stops at its next check and frees the context when it ends
  } else if (!creating_) {
    free();
  }
  return info.Env().Undefined();
}

}  // namespace attr_rag
