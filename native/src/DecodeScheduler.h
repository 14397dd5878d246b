// Continuous batching: one llama_context shared by many jobs (occlusion, generation, scoring), each on its own
// thread. A job is admitted with a reservation (sequences and, in a unified cache, KV cells at its peak) and
// gets a Lane: its own sequence ids and KV operations. When a job wants tokens decoded it hands them to its
// lane and waits; once every admitted job is waiting (or a short wait has passed), one of them leads a single
// llama_decode that carries every waiting job's tokens (up to n_batch, a fair share each; a long prefill goes
// on in the next step), hands each job its output rows and wakes it. A job that leaves frees its sequences'
// cells at once and the next waiting job is admitted. Jobs see the same sequences, positions and tokens they
// would alone, so their greedy tokens are the same up to llama.cpp's batch-shape rounding (near-ties).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "Greedy.h"
#include "llama.h"

namespace attr_rag {

struct BatchItem {
  llama_token token;
  llama_pos pos;
  llama_seq_id seq;  // the job's own (local) sequence id
  bool output;
  // Caller's tag for the output row (e.g. sequence index and draft offset), passed back to onOutput.
  int32_t tag;
  int32_t tag2;
  // For an output row: the token whose log-probability the job will ask for (a teacher-forced token), so the
  // device path gathers its logit; -1 when only the greedy token (and its own log-probability) is wanted.
  llama_token named = -1;
};

struct BatchStats {
  long long tokensEvaluated = 0;  // this job's tokens submitted to llama_decode
  long long decodeCalls = 0;      // llama_decode calls this job took part in
};

class Cancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "cancelled"; }
};

using OnOutput = std::function<void(const OutputRow&, const BatchItem&)>;

// What a job holds while it runs: sequence ids, and (unified cache) KV cells at its peak.
struct Reservation {
  int sequences = 1;
  long long cells = 0;
};

struct SchedulerStats {
  long long decodeCalls = 0;    // llama_decode calls made
  long long rows = 0;           // tokens they carried (mean rows per call = rows / decodeCalls)
  double decodeMs = 0;          // wall time inside those calls (what the rows cost, apart from the jobs' own work)
  long long outputRows = 0;     // rows handed to jobs
  long long bytesToHost = 0;    // what llama.cpp copied to the host for those rows (whole logits rows, or the picks)
  double hostRowMs = 0;         // host time reading the rows and running the jobs' callbacks on them
  long long multiJobCalls = 0;  // calls that carried tokens of more than one job
  long long jobsAdmitted = 0;
  long long jobsWaited = 0;     // admitted only after waiting for room
  long long prefixTokensShared = 0;  // prompt positions jobs copied from other running jobs (cross-job reuse)
  int activeJobs = 0;
  int waitingJobs = 0;
  int sequencesReserved = 0;
  long long cellsReserved = 0;
  int strayCellSequences = 0;   // sequences no job holds that still have KV cells (0 unless cells leak; checkCells)
  int sequences = 0;            // the context's sequences
  long long cells = 0;          // the context's KV cells
};

class DecodeScheduler;

class Lane {
 public:
  ~Lane();
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  // Decodes all items (local sequence ids) in order, merged with other jobs' tokens. Items of one sequence
  // must be in position order. onOutput(row, item) runs for every item with output = true before the next
  // llama_decode overwrites the row. Throws Cancelled when this job is cancelled, runtime_error on failure.
  void run(const std::vector<BatchItem>& items, const OnOutput& onOutput, BatchStats& stats);

  // KV operations on this job's sequences (local ids), never touching another job's.
  bool seqRm(llama_seq_id seq, llama_pos p0, llama_pos p1);
  void seqCp(llama_seq_id src, llama_seq_id dst, llama_pos p0, llama_pos p1);
  void seqAdd(llama_seq_id seq, llama_pos p0, llama_pos p1, llama_pos delta);
  // Drops every cell of this job's sequences.
  void clear();
  // Runs fn on the context with the KV cache locked, as the scheduler's own decodes run: for a job that holds
  // every sequence and drives the context itself (pooled embeddings), so stats never read cells mid-change.
  void withKv(const std::function<void(llama_context*)>& fn);

  // Cross-job prefix reuse: copies into local sequence `dst` (empty) the longest prefix of `tokens` that a
  // running job published, when it is at least kMinSharedPrefix long; the last token is always left to decode
  // (its logits start the answer). Returns the positions copied (0: none). The copied cells hold exactly what
  // decoding those tokens at those positions would compute.
  llama_pos adoptPrefix(llama_seq_id dst, const std::vector<llama_token>& tokens);
  // Offers the prompt local sequence `seq` holds at positions [0, tokens.size()) to later jobs until this job
  // clears the sequence or ends.
  void publishPrefix(llama_seq_id seq, const std::vector<llama_token>& tokens);
  static constexpr size_t kMinSharedPrefix = 16;

  int sequences() const { return static_cast<int>(ids_.size()); }
  // Cells this job may fill: its reservation in a unified cache, one stream's size per sequence otherwise.
  long long cells() const { return cells_; }
  bool kvUnified() const;
  llama_context* ctx() const;
  bool cancelled() const { return cancel_.load(); }

 private:
  friend class DecodeScheduler;
  Lane(DecodeScheduler& owner, std::vector<llama_seq_id> ids, long long cells, const std::atomic<bool>& cancel);
  llama_seq_id global(llama_seq_id local) const;

  DecodeScheduler& owner_;
  std::vector<llama_seq_id> ids_;
  long long reservedCells_;
  long long cells_;
  const std::atomic<bool>& cancel_;
};

class DecodeScheduler {
 public:
  // picks: the context's device picks (nullptr: every row's logits come to the host).
  DecodeScheduler(llama_context* ctx, bool kvUnified, DevicePicks* picks);
  ~DecodeScheduler();
  DecodeScheduler(const DecodeScheduler&) = delete;
  DecodeScheduler& operator=(const DecodeScheduler&) = delete;

  // Throws std::length_error (with the sizes) when the reservation can never fit this context.
  void check(const Reservation& r) const;
  // Waits (FIFO; later jobs that fit may go first until the head has waited kAgingMs) until the reservation
  // fits, then admits the job. Throws Cancelled when `cancel` is set or the scheduler shuts down meanwhile.
  std::unique_ptr<Lane> admit(const Reservation& r, const std::atomic<bool>& cancel);
  // Wakes every waiter so cancelled jobs notice (jobs check their own flag).
  void wake();
  // checkCells: also count strayCellSequences (waits for a decode in flight to end).
  SchedulerStats stats(bool checkCells);
  // Sequences that hold KV cells right now.
  int sequencesInUse();

  static constexpr int kAgingMs = 2000;

 private:
  friend class Lane;
  struct Pending {
    Lane* lane = nullptr;
    const std::vector<BatchItem>* items = nullptr;
    const OnOutput* onOutput = nullptr;
    BatchStats* stats = nullptr;
    size_t offset = 0;
    size_t take = 0;
    bool inFlight = false;  // its rows are in the decode the leader runs now
    bool done = false;
    std::exception_ptr error;
    std::condition_variable cv;  // this job's thread waits here
  };
  struct Published {
    const Lane* lane;
    llama_seq_id seq;  // global
    std::vector<llama_token> tokens;
  };
  struct Waiter {
    long long ticket;
    Reservation r;
    std::chrono::steady_clock::time_point since;
  };

  void submit(Pending& p);
  void wakeCandidate();  // m_ held: lets the first waiting job check whether it should lead
  void lead(std::unique_lock<std::mutex>& lock);
  int plan(int budget);
  void release(Lane& lane);
  void unpublish(const Lane& lane, llama_seq_id global);  // kv_ held; global < 0: all of the lane's
  bool fits(const Reservation& r) const;
  bool mayAdmit(const Waiter& w) const;

  llama_context* ctx_;
  bool kvUnified_;
  DevicePicks* picks_;
  int32_t nVocab_;
  int32_t limit_;
  llama_batch batch_;
  // kv_ is held around llama_decode and every KV operation; m_ guards the bookkeeping. Where both are held
  // (stats), kv_ is taken first; the leader never holds m_ while it waits for kv_.
  std::mutex kv_;
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<bool> seqFree_;
  long long cellsFree_;
  std::deque<Waiter> waiters_;
  long long nextTicket_ = 0;
  std::vector<Pending*> pending_;
  std::vector<Published> published_;  // guarded by kv_
  std::atomic<long long> prefixTokensShared_{0};
  int active_ = 0;
  bool leading_ = false;
  SchedulerStats stats_;
};

}  // namespace attr_rag
