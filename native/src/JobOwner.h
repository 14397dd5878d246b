// What a context job (Workers.h) needs from the context that runs it. The context creates its jobs, so the jobs
// see it only through this interface: otherwise the two would depend on each other, and the jobs on every
// JS-facing method of the context.
#pragma once

#include <cstdint>

#include "DecodeScheduler.h"

namespace attr_rag {

class JobOwner {
 public:
  // On the JS thread: the owner (and its JS object) must outlive every job it started, even when JS drops it.
  virtual void retainForJob() = 0;
  virtual void releaseForJob() = 0;
  // Any thread, between retainForJob() and jobFinished(): the scheduler that admits the job.
  virtual DecodeScheduler& scheduler() = 0;
  // On the JS thread when a job ends, before its Promise settles.
  virtual void jobFinished(uint32_t id) = 0;

 protected:
  // Never deleted through this interface: the owner's lifetime is its JS object's.
  ~JobOwner() = default;
};

}  // namespace attr_rag
