// The native context handle: one llama_context whose DecodeScheduler runs many jobs together (occlusion,
// generation, teacher-forced scoring; an embedding job holds the whole context). JS validates arguments; this
// class re-checks the limits whose violation would trip a GGML_ASSERT and abort the process, and refuses a job
// that could never fit before it waits.
#pragma once

#include <napi.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>

#include "DecodeScheduler.h"
#include "DevicePicks.h"
#include "JobOwner.h"
#include "Occlusion.h"
#include "Scoring.h"
#include "llama.h"

namespace attr_rag {

class AddonModel;
class ContextJob;

class AddonContext : public Napi::ObjectWrap<AddonContext>, public JobOwner {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit AddonContext(const Napi::CallbackInfo& info);
  ~AddonContext() override;

  // JobOwner: a job keeps the context's JS object alive with a reference until it has ended.
  void retainForJob() override { Ref(); }
  void releaseForJob() override { Unref(); }
  // Valid from init() until the last job has ended after dispose().
  DecodeScheduler& scheduler() override { return *scheduler_; }
  void jobFinished(uint32_t id) override;

 private:
  friend class CreateContextWorker;
  Napi::Value InitContext(const Napi::CallbackInfo& info);
  Napi::Value Occlude(const Napi::CallbackInfo& info);
  Napi::Value Score(const Napi::CallbackInfo& info);
  Napi::Value Embed(const Napi::CallbackInfo& info);
  Napi::Value CellsNeeded(const Napi::CallbackInfo& info);
  Napi::Value Cancel(const Napi::CallbackInfo& info);
  Napi::Value SequencesInUse(const Napi::CallbackInfo& info);
  Napi::Value SchedulerStatsJs(const Napi::CallbackInfo& info);
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value Dispose(const Napi::CallbackInfo& info);
  void beginJob(Napi::Env env);
  uint32_t jobIdOf(const Napi::CallbackInfo& info, size_t index);
  Napi::Value startJob(Napi::Env env, ContextJob* job);
  void checkApproximate(Napi::Env env, const OcclusionRequest& req);
  Reservation occlusionReservation(Napi::Env env, const OcclusionRequest& req);
  Reservation scoreReservation(Napi::Env env, const ScoreRequest& req);
  Reservation reserveWave(Napi::Env env, int units, int perUnit, int maxParallel, const std::function<long long(int)>& cellsFor);
  void free();

  AddonModel* model_ = nullptr;
  Napi::ObjectReference modelRef_;
  llama_context* ctx_ = nullptr;
  bool creating_ = false;
  bool kvUnified_ = true;
  bool disposeRequested_ = false;
  // Read by llama.cpp's abort callback: a decode stops only when the whole context is going away (a single
  // job's cancel must not abort a decode that carries other jobs' tokens).
  std::atomic<bool> disposing_{false};
  int jobsHint_ = 1;  // jobs expected to run together: a job's default share of sequences and cells
  std::unique_ptr<DecodeScheduler> scheduler_;
  // Device picks (sampling: 'device'): owned here because the context holds the chains until it is freed.
  std::unique_ptr<DevicePicks> picks_;
  bool devicePicks_ = false;
  std::string samplingWhy_;  // why a 'device' request runs on the host path ('' otherwise)
  std::map<uint32_t, ContextJob*> jobs_;
  uint32_t nextJobId_ = 1u << 30;  // ids JS did not choose, clear of the ones it does
};

}  // namespace attr_rag
