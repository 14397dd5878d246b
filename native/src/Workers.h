// The context's jobs. Each runs on its own thread (not libuv's pool: a job may wait for room in the context, and
// a waiting job must not hold a pool thread that file I/O needs), is admitted by the context's DecodeScheduler,
// decodes through its Lane, and settles its Promise on the JS thread. A job holds its context, seen as a JobOwner,
// until it ends.
#pragma once

#include <napi.h>

#include <atomic>
#include <string>
#include <vector>

#include "DecodeScheduler.h"
#include "Embedding.h"
#include "JobOwner.h"
#include "Occlusion.h"
#include "Scoring.h"

namespace attr_rag {

class ContextJob {
 public:
  ContextJob(Napi::Env env, JobOwner* owner, uint32_t id, Reservation reservation);
  virtual ~ContextJob() = default;
  ContextJob(const ContextJob&) = delete;
  ContextJob& operator=(const ContextJob&) = delete;
  // Starts the job's thread; the Promise settles when the job ends. Call once, on the JS thread.
  Napi::Promise start();
  // Any thread: the job stops at its next step (or while waiting for admission) and frees its cells.
  void cancel() { cancel_.store(true); }
  uint32_t id() const { return id_; }

 protected:
  // On the job's thread, with the job admitted. Throws Cancelled or std::exception.
  virtual void execute(Lane& lane) = 0;
  // On the JS thread after execute() returned.
  virtual Napi::Value result(Napi::Env env) = 0;
  // On the JS thread whether the job succeeded or not, before its Promise settles.
  virtual void finished() {}
  const std::atomic<bool>& cancelFlag() const { return cancel_; }
  JobOwner* owner_;

 private:
  void threadMain();
  void complete(Napi::Env env);
  Napi::Promise::Deferred deferred_;
  Napi::ThreadSafeFunction done_;
  std::atomic<bool> cancel_{false};
  Reservation reservation_;
  uint32_t id_;
  bool failed_ = false;
  std::string error_;
};

class OccludeJob : public ContextJob {
 public:
  OccludeJob(Napi::Env env, JobOwner* owner, uint32_t id, Reservation r, OcclusionRequest req, Napi::Value onProgress);

 private:
  void execute(Lane& lane) override;
  Napi::Value result(Napi::Env env) override;
  void finished() override;
  OcclusionRequest req_;
  OcclusionResult out_;
  Napi::ThreadSafeFunction progress_;
  bool hasProgress_ = false;
};

class ScoreJob : public ContextJob {
 public:
  ScoreJob(Napi::Env env, JobOwner* owner, uint32_t id, Reservation r, ScoreRequest req);

 private:
  void execute(Lane& lane) override;
  Napi::Value result(Napi::Env env) override;
  ScoreRequest req_;
  ScoreResult out_;
};

class EmbedJob : public ContextJob {
 public:
  EmbedJob(Napi::Env env, JobOwner* owner, uint32_t id, Reservation r, std::vector<std::vector<llama_token>> seqs);

 private:
  void execute(Lane& lane) override;
  Napi::Value result(Napi::Env env) override;
  std::vector<std::vector<llama_token>> seqs_;
  EmbedResult out_;
};

}  // namespace attr_rag
