#include "DecodeScheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attr_rag {
namespace {

using Clock = std::chrono::steady_clock;

// How long a waiting job waits for the other admitted jobs to hand in their tokens before it decodes without
// them: long enough to cover the CPU work between two steps (greedy picks, KV bookkeeping), short next to a
// decode step.
constexpr auto kGather = std::chrono::milliseconds(50);

std::string kvFullMessage() {
  return "the KV cache is full: the prompt, every occluded continuation and the answers do not fit in the context; "
         "use a larger contextSize, fewer or shorter chunk sets, or fewer max tokens";
}

}  // namespace

void DecodeScheduler::unpublish(const Lane& lane, llama_seq_id global) {
  published_.erase(std::remove_if(published_.begin(), published_.end(),
                                  [&](const Published& p) { return p.lane == &lane && (global < 0 || p.seq == global); }),
                   published_.end());
}

DecodeScheduler::DecodeScheduler(llama_context* ctx, bool kvUnified, DevicePicks* picks)
    : ctx_(ctx),
      kvUnified_(kvUnified),
      picks_(picks),
      nVocab_(llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(ctx)))),
      // A batch larger than min(n_batch, n_ctx) trips a GGML_ASSERT inside llama.cpp, so never submit one.
      limit_(std::min<int32_t>(static_cast<int32_t>(llama_n_batch(ctx)), static_cast<int32_t>(llama_n_ctx(ctx)))),
      seqFree_(llama_n_seq_max(ctx), true),
      cellsFree_(static_cast<long long>(llama_n_ctx(ctx))) {
  batch_ = llama_batch_init(limit_, 0, 1);
  stats_.sequences = static_cast<int>(llama_n_seq_max(ctx));
  stats_.cells = static_cast<long long>(llama_n_ctx(ctx));
}

DecodeScheduler::~DecodeScheduler() { llama_batch_free(batch_); }

void DecodeScheduler::check(const Reservation& r) const {
  const int nSeq = static_cast<int>(seqFree_.size());
  if (r.sequences > nSeq) {
    throw std::length_error("the context cannot hold the job's " + std::to_string(r.sequences) + " sequences (it has " +
                            std::to_string(nSeq) + "); use a context with more sequences or a smaller maxParallel");
  }
  const long long cells = kvUnified_ ? static_cast<long long>(llama_n_ctx(ctx_)) : static_cast<long long>(llama_n_ctx_seq(ctx_));
  if (r.cells > cells) {
    throw std::length_error("the KV cache cannot hold the job (" + std::to_string(r.cells) + " cells needed" +
                            (kvUnified_ ? "" : " per sequence") + ", the context has " + std::to_string(cells) +
                            "); use a larger contextSize, a shorter prompt or fewer max tokens");
  }
}

bool DecodeScheduler::fits(const Reservation& r) const {
  const int freeSeqs = static_cast<int>(std::count(seqFree_.begin(), seqFree_.end(), true));
  return r.sequences <= freeSeqs && (!kvUnified_ || r.cells <= cellsFree_);
}

// FIFO with aging: the head goes first whenever it fits; a later job that fits may go ahead of a head that
// does not, until the head has waited kAgingMs (then nothing passes it, so big jobs are never starved).
bool DecodeScheduler::mayAdmit(const Waiter& w) const {
  if (!fits(w.r)) return false;
  const Waiter& head = waiters_.front();
  if (head.ticket == w.ticket) return true;
  if (Clock::now() - head.since >= std::chrono::milliseconds(kAgingMs)) return false;
  for (const Waiter& o : waiters_) {
    if (o.ticket == w.ticket) return true;
    if (fits(o.r)) return false;  // an earlier waiter that fits goes first
  }
  return false;
}

std::unique_ptr<Lane> DecodeScheduler::admit(const Reservation& r, const std::atomic<bool>& cancel) {
  check(r);
  std::unique_lock<std::mutex> lock(m_);
  const long long ticket = nextTicket_++;
  waiters_.push_back({ticket, r, Clock::now()});
  bool waited = false;
  auto leave = [&] {
    waiters_.erase(std::find_if(waiters_.begin(), waiters_.end(), [&](const Waiter& w) { return w.ticket == ticket; }));
    cv_.notify_all();
  };
  while (true) {
    if (cancel.load()) {
      leave();
      throw Cancelled();
    }
    const auto me = std::find_if(waiters_.begin(), waiters_.end(), [&](const Waiter& w) { return w.ticket == ticket; });
    if (mayAdmit(*me)) break;
    waited = true;
    // Timed: the head's aging and a cancel flag set without a wake both need a look now and then.
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  leave();
  // Contiguous ids when there are, so per-sequence streams batch this job's sequences in one micro-batch.
  std::vector<llama_seq_id> ids;
  const int n = static_cast<int>(seqFree_.size());
  for (int start = 0; start + r.sequences <= n && ids.empty(); start++) {
    bool run = true;
    for (int i = 0; i < r.sequences && run; i++) run = seqFree_[static_cast<size_t>(start + i)];
    if (run) {
      for (int i = 0; i < r.sequences; i++) ids.push_back(start + i);
    }
  }
  for (int s = 0; s < n && static_cast<int>(ids.size()) < r.sequences; s++) {
    if (seqFree_[static_cast<size_t>(s)]) ids.push_back(s);
  }
  for (llama_seq_id id : ids) seqFree_[static_cast<size_t>(id)] = false;
  if (kvUnified_) cellsFree_ -= r.cells;
  stats_.jobsAdmitted++;
  if (waited) stats_.jobsWaited++;
  stats_.activeJobs++;
  stats_.sequencesReserved += r.sequences;
  stats_.cellsReserved += kvUnified_ ? r.cells : 0;
  active_++;
  return std::unique_ptr<Lane>(new Lane(*this, std::move(ids), r.cells, cancel));
}

void DecodeScheduler::release(Lane& lane) {
  std::lock_guard<std::mutex> lock(m_);
  for (llama_seq_id id : lane.ids_) seqFree_[static_cast<size_t>(id)] = true;
  if (kvUnified_) cellsFree_ += lane.reservedCells_;
  stats_.activeJobs--;
  stats_.sequencesReserved -= static_cast<int>(lane.ids_.size());
  stats_.cellsReserved -= kvUnified_ ? lane.reservedCells_ : 0;
  active_--;
  cv_.notify_all();
  // One job fewer may mean every remaining one now waits: let one of them look (and lead).
  wakeCandidate();
}

void DecodeScheduler::wake() {
  std::lock_guard<std::mutex> lock(m_);
  cv_.notify_all();
  for (Pending* q : pending_) q->cv.notify_one();
}

void DecodeScheduler::wakeCandidate() {
  if (!leading_ && !pending_.empty()) pending_.front()->cv.notify_one();
}

SchedulerStats DecodeScheduler::stats(bool checkCells) {
  // Looking at the cells waits for a decode in flight; plain counters never do.
  std::unique_lock<std::mutex> kv(kv_, std::defer_lock);
  if (checkCells) kv.lock();
  std::lock_guard<std::mutex> lock(m_);
  SchedulerStats s = stats_;
  s.waitingJobs = static_cast<int>(waiters_.size());
  s.prefixTokensShared = prefixTokensShared_.load();
  s.strayCellSequences = checkCells ? 0 : -1;
  llama_memory_t mem = checkCells ? llama_get_memory(ctx_) : nullptr;
  for (size_t id = 0; mem != nullptr && id < seqFree_.size(); id++) {
    if (seqFree_[id] && llama_memory_seq_pos_max(mem, static_cast<llama_seq_id>(id)) >= 0) s.strayCellSequences++;
  }
  return s;
}

int DecodeScheduler::sequencesInUse() {
  std::lock_guard<std::mutex> kv(kv_);
  llama_memory_t mem = llama_get_memory(ctx_);
  if (mem == nullptr) return 0;
  int used = 0;
  for (uint32_t s = 0; s < llama_n_seq_max(ctx_); s++) used += llama_memory_seq_pos_max(mem, static_cast<llama_seq_id>(s)) >= 0 ? 1 : 0;
  return used;
}

// Wakeups are targeted (each waiting job has its own condition variable): on a CPU, a thread woken for
// nothing while llama.cpp's worker threads spin at their barriers stalls the whole decode.
void DecodeScheduler::submit(Pending& p) {
  std::unique_lock<std::mutex> lock(m_);
  pending_.push_back(&p);
  const auto since = Clock::now();
  while (!p.done) {
    if (!p.inFlight && p.lane->cancelled()) {
      pending_.erase(std::find(pending_.begin(), pending_.end(), &p));
      wakeCandidate();
      throw Cancelled();
    }
    const bool everyone = static_cast<int>(pending_.size()) >= active_;
    if (!leading_ && (everyone || Clock::now() - since >= kGather)) {
      lead(lock);
      continue;
    }
    if (leading_) {
      p.cv.wait(lock);
    } else {
      p.cv.wait_until(lock, since + kGather);
    }
  }
  if (p.error) std::rethrow_exception(p.error);
}

// Shares `budget` rows among the waiting jobs: each gets an equal part, what one cannot use goes to the others.
int DecodeScheduler::plan(int budget) {
  std::vector<Pending*> open;
  for (Pending* q : pending_) {
    q->take = 0;
    if (q->lane->cancelled()) continue;
    open.push_back(q);
  }
  int left = budget;
  while (left > 0 && !open.empty()) {
    const int share = std::max(1, left / static_cast<int>(open.size()));
    for (size_t i = 0; i < open.size() && left > 0;) {
      Pending* q = open[i];
      const size_t remaining = q->items->size() - q->offset - q->take;
      const int g = static_cast<int>(std::min<size_t>({static_cast<size_t>(share), remaining, static_cast<size_t>(left)}));
      q->take += static_cast<size_t>(g);
      left -= g;
      if (q->take == q->items->size() - q->offset) {
        open.erase(open.begin() + static_cast<long>(i));
      } else {
        i++;
      }
    }
  }
  return budget - left;
}

void DecodeScheduler::lead(std::unique_lock<std::mutex>& lock) {
  leading_ = true;
  int budget = limit_;
  std::vector<Pending*> step;
  while (true) {
    for (auto it = pending_.begin(); it != pending_.end();) {
      if ((*it)->lane->cancelled()) {
        (*it)->error = std::make_exception_ptr(Cancelled());
        (*it)->done = true;
        (*it)->cv.notify_one();
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
    if (pending_.empty()) break;
    const int rows = plan(budget);
    step.clear();
    for (Pending* q : pending_) {
      if (q->take > 0) {
        q->inFlight = true;
        step.push_back(q);
      }
    }
    // Items in ascending global sequence id (each sequence's own order kept): llama.cpp's per-stream split
    // puts consecutive sequence ids into one micro-batch, so this keeps every job's sequences together.
    struct Row {
      Pending* q;
      size_t index;
      llama_seq_id seq;
    };
    std::vector<Row> order;
    order.reserve(static_cast<size_t>(rows));
    for (Pending* q : step) {
      for (size_t i = q->offset; i < q->offset + q->take; i++) order.push_back({q, i, q->lane->global((*q->items)[i].seq)});
    }
    // Callbacks still run in each job's own order (a job may pair rows, e.g. exact then approximate).
    std::vector<int32_t> slot(order.size());
    {
      std::vector<int32_t> perm(order.size());
      for (size_t i = 0; i < perm.size(); i++) perm[i] = static_cast<int32_t>(i);
      std::stable_sort(perm.begin(), perm.end(), [&](int32_t a, int32_t b) { return order[static_cast<size_t>(a)].seq < order[static_cast<size_t>(b)].seq; });
      for (size_t i = 0; i < perm.size(); i++) slot[static_cast<size_t>(perm[i])] = static_cast<int32_t>(i);
    }
    lock.unlock();
    int32_t rc = 0;
    double decodeMs = 0;
    struct {
      long long rows = 0;
      long long bytes = 0;
      double ms = 0;
    } rowStats;
    {
      std::lock_guard<std::mutex> kv(kv_);
      batch_.n_tokens = rows;
      for (int32_t k = 0; k < rows; k++) {
        const Row& r = order[static_cast<size_t>(k)];
        const int32_t i = slot[static_cast<size_t>(k)];
        const BatchItem& item = (*r.q->items)[r.index];
        batch_.token[i] = item.token;
        batch_.pos[i] = item.pos;
        batch_.n_seq_id[i] = 1;
        batch_.seq_id[i][0] = r.seq;
        batch_.logits[i] = item.output ? 1 : 0;
      }
      if (picks_ != nullptr) {
        // Each sequence's named tokens in its output order (the batch keeps every sequence's own order).
        std::vector<std::vector<llama_token>> named(seqFree_.size());
        for (int32_t k = 0; k < rows; k++) {
          const Row& r = order[static_cast<size_t>(k)];
          const BatchItem& item = (*r.q->items)[r.index];
          if (item.output) named[static_cast<size_t>(r.seq)].push_back(item.named);
        }
        picks_->setNamed(named);
      }
      const auto t0 = Clock::now();
      rc = llama_decode(ctx_, batch_);
      // GPU backends return before the graph has run: wait here, so decode time is the device's work and the
      // row reads below are host work only.
      if (rc == 0) llama_synchronize(ctx_);
      const auto t1 = Clock::now();
      decodeMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
      if (rc == 0) {
        // The rows are read before anyone can decode again; each job's callback only touches its own state
        // (its thread is waiting).
        DeviceRow picked;
        long long bytes = 0;
        long long outputs = 0;
        for (int32_t k = 0; k < rows; k++) {
          const Row& r = order[static_cast<size_t>(k)];
          const BatchItem& item = (*r.q->items)[r.index];
          if (!item.output || r.q->error) continue;
          const int32_t i = slot[static_cast<size_t>(k)];
          OutputRow out;
          out.nVocab = nVocab_;
          out.named = item.named;
          try {
            if (picks_ != nullptr) {
              if (!DevicePicks::read(ctx_, i, picked, bytes)) throw std::runtime_error("llama.cpp returned no device picks for a requested position");
              out.device = &picked;
            } else {
              out.logits = llama_get_logits_ith(ctx_, i);
              if (out.logits == nullptr) throw std::runtime_error("llama.cpp returned no output row for a requested position");
              bytes += static_cast<long long>(nVocab_) * static_cast<long long>(sizeof(float));
            }
            outputs++;
            (*r.q->onOutput)(out, item);
          } catch (...) {
            r.q->error = std::current_exception();
          }
        }
        rowStats.rows = outputs;
        rowStats.bytes = bytes;
        rowStats.ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
      }
    }
    lock.lock();
    for (Pending* q : step) q->inFlight = false;
    if (rc == 1 && rows > 1) {
      budget = std::max(1, rows / 2);  // no KV slot for this many rows (fragmented cache): retry in halves
      continue;
    }
    stats_.decodeCalls++;
    stats_.rows += rows;
    stats_.decodeMs += decodeMs;
    stats_.outputRows += rowStats.rows;
    stats_.bytesToHost += rowStats.bytes;
    stats_.hostRowMs += rowStats.ms;
    if (step.size() > 1) stats_.multiJobCalls++;
    for (Pending* q : step) {
      if (rc == 0) {
        q->stats->decodeCalls++;
        q->stats->tokensEvaluated += static_cast<long long>(q->take);
        q->offset += q->take;
      } else if (rc == 1) {
        q->error = std::make_exception_ptr(std::runtime_error(kvFullMessage()));
      } else if (rc == 2) {
        q->error = std::make_exception_ptr(Cancelled());
      } else {
        q->error = std::make_exception_ptr(std::runtime_error("llama_decode failed with code " + std::to_string(rc)));
      }
      if (q->error || q->offset == q->items->size()) {
        q->done = true;
        pending_.erase(std::find(pending_.begin(), pending_.end(), q));
      }
    }
    break;
  }
  leading_ = false;
  for (Pending* q : step) {
    if (q->done) q->cv.notify_one();
  }
  wakeCandidate();
}

}  // namespace attr_rag
