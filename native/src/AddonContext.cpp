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
    if (owner_->picks_ && !owner_->picks_->supported()) {
      // The device cannot run a pick op: every row's logits come to the host, as with sampling: 'host'.
      owner_->samplingWhy_ = owner_->picks_->unsupportedWhy();
      for (uint32_t s = 0; s < llama_n_seq_max(ctx_); s++) llama_set_sampler(ctx_, static_cast<llama_seq_id>(s), nullptr);
      owner_->devicePicks_ = false;
    }
    owner_->scheduler_ =
        std::make_unique<DecodeScheduler>(ctx_, owner_->kvUnified_, owner_->devicePicks_ ? owner_->picks_.get() : nullptr);
    llama_set_abort_callback(ctx_, [](void* data) { return static_cast<std::atomic<bool>*>(data)->load(); },
                             &owner_->disposing_);
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
                      InstanceMethod("sequencesInUse", &AddonContext::SequencesInUse),
                      InstanceMethod("schedulerStats", &AddonContext::SchedulerStatsJs), InstanceMethod("info", &AddonContext::Info),
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
  scheduler_.reset();
  if (ctx_ != nullptr) {
    llama_free(ctx_);
    ctx_ = nullptr;
  }
  picks_.reset();  // the context held its sampler chains until now
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
  // Device picks: each row's greedy token, top-2 logits, log-sum-exp and named logit computed in the graph,
  // so a row costs the host 24 bytes instead of the vocabulary's floats. Not for embedding contexts (no rows).
  const std::string sampling = o.Get("sampling").IsString() ? o.Get("sampling").As<Napi::String>().Utf8Value() : "host";
  if (sampling != "host" && sampling != "device") throw Napi::RangeError::New(env, "sampling must be 'host' or 'device'");
  devicePicks_ = sampling == "device" && !p.embeddings;
  samplingWhy_ = sampling == "device" && p.embeddings ? "an embedding context has no output rows to pick" : "";
  if (devicePicks_) {
    picks_ = std::make_unique<DevicePicks>(static_cast<int>(p.n_seq_max));
    p.samplers = picks_->configs().data();
    p.n_samplers = picks_->configs().size();
    p.n_outputs_max_per_seq = 0;  // teacher-forced and draft rows: many outputs per sequence in one call
  }
  jobsHint_ = o.Get("jobs").IsNumber() ? std::max(1, o.Get("jobs").As<Napi::Number>().Int32Value()) : 1;
  creating_ = true;
  auto* worker = new CreateContextWorker(env, this, model_->require(env), p);
  worker->Queue();
  return worker->Promise();
}

// The approximate strategies need a cache layout and a model whose positions can be shifted; refused here,
// before llama.cpp would assert on them.
void AddonContext::checkApproximate(Napi::Env env, const OcclusionRequest& req) {
  if (req.pairExact && devicePicks_) {
    throw Napi::RangeError::New(env, "pairExact compares whole next-token distributions, which needs full logits rows: "
                                     "create the context with sampling: 'host'");
  }
  if (!isApproximate(req.strategy)) return;
  const std::string why = reuseUnsupported(req.strategy == Strategy::KvReuse, req.kvUnified, req.gapTokens);
  if (!why.empty()) throw Napi::RangeError::New(env, why);
  if (req.strategy == Strategy::KvReuse && ctx_ != nullptr && !llama_memory_can_shift(llama_get_memory(ctx_))) {
    throw Napi::RangeError::New(env, "this model's KV cache cannot shift positions (llama_memory_can_shift is false); use kv-mask or an exact strategy");
  }
}

void AddonContext::beginJob(Napi::Env env) {
  if (disposeRequested_ || model_ == nullptr) throw Napi::Error::New(env, "the context has been disposed");
  if (ctx_ == nullptr || !scheduler_) throw Napi::Error::New(env, "the context is not initialised; await init() first");
}

// JS names each job (so it can cancel that one); a call without an id gets one of ours.
uint32_t AddonContext::jobIdOf(const Napi::CallbackInfo& info, size_t index) {
  if (info.Length() > index && info[index].IsNumber()) {
    const uint32_t id = info[index].As<Napi::Number>().Uint32Value();
    if (jobs_.count(id) != 0) throw Napi::Error::New(info.Env(), "job id " + std::to_string(id) + " is already running on this context");
    return id;
  }
  while (jobs_.count(nextJobId_) != 0) nextJobId_++;
  return nextJobId_++;
}

Napi::Value AddonContext::startJob(Napi::Env env, ContextJob* job) {
  (void)env;
  jobs_[job->id()] = job;
  return job->start();
}

// A job's wave width (occluded sets, coalitions per wave): without maxParallel, its share of the context when
// `jobs` jobs run together (sequences / jobs and, in a unified cache, cells / jobs); with one, what it asks for, up
// to the whole context. The job waits until its reservation is free; one larger than the whole context is refused
// here. units = 0: only sequence 0 (naive occlusion, generation).
Reservation AddonContext::reserveWave(Napi::Env env, int units, int perUnit, int maxParallel, const std::function<long long(int)>& cellsFor) {
  Reservation r{1, cellsFor(1)};
  if (units > 0) {
    const int nSeq = static_cast<int>(llama_n_seq_max(ctx_));
    const long long ctxCells = kvUnified_ ? static_cast<long long>(llama_n_ctx(ctx_)) : static_cast<long long>(llama_n_ctx_seq(ctx_));
    const bool asked = maxParallel > 0;
    const int seqs = asked ? nSeq : std::max(2, nSeq / jobsHint_);
    const long long room = asked || !kvUnified_ ? ctxCells : std::max<long long>(1, ctxCells / jobsHint_);
    int g = std::min(units, std::max(1, (seqs - 1) / perUnit));
    if (asked) g = std::min(g, maxParallel);
    while (g > 1 && cellsFor(g) > room) g--;
    r = {1 + g * perUnit, cellsFor(g)};
  }
  try {
    scheduler_->check(r);
  } catch (const std::length_error& e) {
    throw Napi::Error::New(env, e.what());
  }
  return r;
}

Reservation AddonContext::occlusionReservation(Napi::Env env, const OcclusionRequest& req) {
  if (req.hasForced) {
    return reserveWave(env, static_cast<int>(req.occlude.size()), forcedSequencesPerSet(req), req.maxParallel,
                       [&](int g) { return forcedCellsNeeded(req, g); });
  }
  const int sets = req.strategy == Strategy::Naive ? 0 : static_cast<int>(req.occlude.size());
  return reserveWave(env, sets, 1, req.maxParallel, [&](int g) { return occlusionCellsNeeded(req, g); });
}

Reservation AddonContext::scoreReservation(Napi::Env env, const ScoreRequest& req) {
  return reserveWave(env, static_cast<int>(req.coalitions.size()), 1, req.maxParallel, [&](int g) { return scoreCellsNeeded(req, g); });
}

void AddonContext::jobFinished(uint32_t id) {
  jobs_.erase(id);
  if (disposeRequested_ && jobs_.empty()) free();
}

Napi::Value AddonContext::Occlude(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  beginJob(env);
  OcclusionRequest req = readOcclusionRequest(info[0].As<Napi::Object>(), llama_vocab_n_tokens(llama_model_get_vocab(model_->require(env))));
  req.kvUnified = kvUnified_;
  checkApproximate(env, req);
  const Reservation r = occlusionReservation(env, req);
  const uint32_t id = jobIdOf(info, 2);
  return startJob(env, new OccludeJob(env, this, id, r, std::move(req), info.Length() > 1 ? info[1] : env.Undefined()));
}

Napi::Value AddonContext::Score(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  beginJob(env);
  ScoreRequest req = readScoreRequest(info[0].As<Napi::Object>(), llama_vocab_n_tokens(llama_model_get_vocab(model_->require(env))));
  req.kvUnified = kvUnified_;
  const Reservation r = scoreReservation(env, req);
  const uint32_t id = jobIdOf(info, 1);
  return startJob(env, new ScoreJob(env, this, id, r, std::move(req)));
}

Napi::Value AddonContext::Embed(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  beginJob(env);
  auto seqs = readTokenLists(info[0]);
  const int32_t nVocab = llama_vocab_n_tokens(llama_model_get_vocab(model_->require(env)));
  for (const auto& s : seqs) {
    for (llama_token t : s) {
      if (t < 0 || t >= nVocab) throw Napi::RangeError::New(env, "token id " + std::to_string(t) + " is outside the vocabulary");
    }
  }
  // Pooled passes clear the whole cache between batches: the job holds every sequence and cell.
  const Reservation r{static_cast<int>(llama_n_seq_max(ctx_)), kvUnified_ ? static_cast<long long>(llama_n_ctx(ctx_)) : 0};
  const uint32_t id = jobIdOf(info, 1);
  return startJob(env, new EmbedJob(env, this, id, r, std::move(seqs)));
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

// cancel(id) cancels one job, cancel() every job; the others go on untouched.
Napi::Value AddonContext::Cancel(const Napi::CallbackInfo& info) {
  if (info.Length() > 0 && info[0].IsNumber()) {
    const auto it = jobs_.find(info[0].As<Napi::Number>().Uint32Value());
    if (it != jobs_.end()) it->second->cancel();
  } else {
    for (auto& [id, job] : jobs_) job->cancel();
  }
  if (scheduler_) scheduler_->wake();
  return info.Env().Undefined();
}

// How many sequences hold KV cells: 0 when no job runs (every job clears what it used, also when cancelled),
// the running jobs' sequences otherwise.
Napi::Value AddonContext::SequencesInUse(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (ctx_ == nullptr || !scheduler_) throw Napi::Error::New(env, "the context is not initialised or has been disposed");
  return Napi::Number::New(env, scheduler_->sequencesInUse());
}

Napi::Value AddonContext::SchedulerStatsJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (ctx_ == nullptr || !scheduler_) throw Napi::Error::New(env, "the context is not initialised or has been disposed");
  return schedulerStatsToJs(env, scheduler_->stats(info.Length() > 0 && info[0].IsBoolean() && info[0].As<Napi::Boolean>().Value()));
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
  o.Set("sampling", devicePicks_ ? "device" : "host");
  o.Set("samplingWhy", samplingWhy_);
  return o;
}

Napi::Value AddonContext::Dispose(const Napi::CallbackInfo& info) {
  disposeRequested_ = true;
  if (!jobs_.empty()) {
    // Running jobs stop at their next check (a decode in flight aborts) and the last one frees the context.
    disposing_.store(true);
    for (auto& [id, job] : jobs_) job->cancel();
    if (scheduler_) scheduler_->wake();
  } else if (!creating_) {
    free();
  }
  return info.Env().Undefined();
}

}  // namespace attr_rag
