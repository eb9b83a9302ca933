#include "gc/collector.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/types/span.h"
#include "gc/roots.h"
#include "gc/sweeper.h"

namespace graphgc {
namespace gc {
namespace {

// The collectors whose listeners this thread is inside, innermost last. A
// listener runs on the thread that notifies, and nested notifications on one
// thread end in the reverse order they began, so a stack per thread is
// always exact (one shared variable was not: overlapping notifications on
// two threads restored it out of order).
thread_local std::vector<const Collector*> t_notifying;

// Marks the calling thread as inside a listener of `collector` while alive.
class NotifyingScope {
 public:
  explicit NotifyingScope(const Collector* collector) {
    t_notifying.push_back(collector);
  }
  ~NotifyingScope() { t_notifying.pop_back(); }
  NotifyingScope(const NotifyingScope&) = delete;
  NotifyingScope& operator=(const NotifyingScope&) = delete;
};

using ListenerList =
    std::vector<std::shared_ptr<const collector_internal::Listeners::Fn>>;

// The listeners registered now.
ListenerList SnapshotListeners(collector_internal::Listeners& listeners)
    ABSL_LOCKS_EXCLUDED(listeners.mu) {
  ListenerList list;
  ReaderLock l(listeners.mu);
  list.reserve(listeners.entries.size());
  for (const auto& e : listeners.entries) list.push_back(e.fn);
  return list;
}

// Calls `listeners` (of `collector`) with `event`, with no lock held.
void NotifyEach(const Collector* collector, const ListenerList& listeners,
                const CollectEvent& event) {
  if (listeners.empty()) return;
  // Listeners of concurrent collections on other threads run concurrently;
  // what we track is only "this thread is inside a listener of this
  // collector".
  NotifyingScope scope(collector);
  for (const auto& fn : listeners) (*fn)(event);
}

// A broken invariant found by a collection of a heap under verification
// (Heap::SetVerifyCollectionsForTesting) stops the program: going on
// would sweep live nodes or keep garbage.
void VerifyOrDie(const char* phase, const absl::Status& status) {
  if (status.ok()) return;
  std::fprintf(stderr, "graphgc: heap verification failed %s: %s\n", phase,
               std::string(status.message()).c_str());
  std::abort();
}

}  // namespace

bool Collector::InsideListenerOnThisThread() const {
  return std::find(t_notifying.begin(), t_notifying.end(), this) !=
         t_notifying.end();
}

CollectStats Collector::Collect() { return Run(/*minor=*/false); }

CollectStats Collector::CollectYoung() { return Run(/*minor=*/true); }

CollectStats Collector::Run(bool minor) {
  // A collection asked for by a listener would re-enter; defer it.
  if (InsideListenerOnThisThread()) {
    deferred_.store(true, std::memory_order_release);
    return CollectStats{};
  }
  Notify(CollectEvent{.phase = CollectEvent::Phase::kStart});

  CollectStats result;
  result.minor = minor;
  std::vector<NodeId> swept;
  bool save = false;
  int promote_after = 0;
  {
    ReaderLock l(state_mu_);
    save = policy_.save_garbage;
    promote_after = policy_.promote_after;
  }
  std::vector<std::unique_ptr<Object>> kept;
  ObjectList leftover;  // by earlier collections
  std::vector<std::shared_ptr<const Listener>> end_listeners;
  int64_t live_after = 0;
  int64_t peak = 0;
  {
    WriterLock lock(heap_.mu());
    const auto start = std::chrono::steady_clock::now();
    // Read the counters first: anything dropped after this is left for the
    // next collection to find.
    const int64_t drops = heap_.drops();
    const int64_t allocations = heap_.allocations();
    const int64_t old_drops = heap_.old_drops();
    heap_.LowerMaybeDrops(/*full=*/!minor);
    if (++epoch_ == 0) {
      // The epoch wrapped: clear every stamp so none looks current.
      for (uint32_t i = 0; i < heap_.num_slots(); ++i) {
        heap_.slot(i).mark_epoch = 0;
      }
      epoch_ = 1;
    }
    // Those an earlier collection left waiting are destroyed below (with
    // `leftover`), before this one's sweep defers anything: they are not
    // this collection's garbage, so save_garbage does not set them aside,
    // and what this sweep defers (its nodes, and the name tables of its
    // dropped scopes, which Graph::OnSweep defers) waits for allocation.
    heap_.TakeAllUnreclaimed(leftover);
    roots_.clear();
    garbage_.clear();
    const bool verify = heap_.VerifyCollectionsForTesting();
    if (verify) VerifyOrDie("before the collection", heap_.VerifyForTesting());
    if (minor) {
      CollectYoungRoots(heap_, roots_);
      result.marked = marker_.MarkYoung(heap_, roots_, epoch_);
      FindYoungGarbage(heap_, epoch_, garbage_);
    } else {
      result.marked =
          marker_.MarkHeap(heap_, epoch_, /*stamp=*/verify, garbage_);
    }
    if (verify) {
      VerifyOrDie("after marking",
                  heap_.VerifyMarkingForTesting(epoch_, /*young_only=*/minor));
    }
    if (!garbage_.empty() && observer_ != nullptr) {
      observer_->OnSweep(heap_, garbage_);
    }
    // The swept objects are unlinked here; the prompt ones (all of them
    // when saved) are destroyed below, once the lock is released, and the
    // rest as allocation reaches them (Lazy sweeping, collector.h): the
    // pause is roots, mark and unlinking, and nothing can reach an
    // unlinked object (its slot is free, its generation changed, its names
    // are gone).
    if (save) {
      kept.reserve(kept.size() + garbage_.size());
      Sweep(heap_, garbage_, /*keep=*/true, &kept);
    } else {
      SweepLazily(heap_, garbage_, kept);
    }
    if (verify) VerifyOrDie("after sweeping", heap_.VerifyForTesting());
    // A minor collection's garbage is in young() order (FindYoungGarbage):
    // its entries leave young() now.
    const int64_t promoted = heap_.AgeSurvivors(
        promote_after, minor ? absl::Span<const NodeId>(garbage_)
                             : absl::Span<const NodeId>());
    if (verify) VerifyOrDie("after aging", heap_.VerifyForTesting());
    if (minor) {
      promoted_since_full_.fetch_add(promoted, std::memory_order_relaxed);
    } else {
      promoted_since_full_.store(0, std::memory_order_relaxed);
      allocations_at_full_.store(allocations, std::memory_order_relaxed);
      old_drops_at_full_.store(old_drops, std::memory_order_relaxed);
    }
    result.swept = static_cast<int64_t>(garbage_.size());
    // The end event goes to the listeners registered now, with a copy of
    // the list in ordinary memory (CollectEvent::swept is a std::vector).
    // The list itself stays, and the next collection refills it without
    // growing it again: growing it from empty touches fresh pages, which
    // would dominate a small collection's mark.
    end_listeners = SnapshotListeners(*listeners_);
    if (!end_listeners.empty()) swept.assign(garbage_.begin(), garbage_.end());
    garbage_.clear();
    if (garbage_.capacity() > (size_t{1} << 20)) garbage_ = {};
    if (roots_.capacity() > (size_t{1} << 20)) roots_ = {};
    live_after = heap_.live_count();
    peak = heap_.peak_live();
    drops_at_last_.store(drops, std::memory_order_release);
    allocations_at_last_.store(allocations, std::memory_order_release);
    result.pause_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  }
  if (save && !kept.empty()) {
    WriterLock l(saved_mu_);
    for (auto& o : kept) saved_.push_back(std::move(o));
  }
  kept.clear();      // destroys the prompt objects (none left when saved)
  leftover.clear();  // and those earlier collections left waiting
  {
    WriterLock l(state_mu_);
    ++stats_.collections;
    if (minor) ++stats_.minor_collections;
    stats_.swept_total += result.swept;
    stats_.pause_ns_total += result.pause_ns;
    stats_.last_pause_ns = result.pause_ns;
    stats_.peak_nodes = std::max(stats_.peak_nodes, peak);
  }
  if (!minor) UpdateThreshold(live_after);
  deferred_.store(false, std::memory_order_release);
  NotifyEach(this, end_listeners,
             CollectEvent{.phase = CollectEvent::Phase::kEnd,
                          .stats = result,
                          .swept = std::move(swept)});
  return result;
}

std::optional<CollectStats> Collector::MaybeCollect() {
  std::optional<CollectStats> stats = CollectIfDue();
  if (!stats.has_value()) Reclaim(kReclaimPerSafePoint);
  return stats;
}

size_t Collector::Reclaim(size_t n) {
  if (n == 0 || heap_.unreclaimed_count() == 0) return 0;  // no lock
  constexpr size_t kBatch = 64;
  std::unique_ptr<Object> batch[kBatch];
  size_t done = 0;
  while (done < n) {
    size_t taken;
    {
      WriterLock lock(heap_.mu());
      taken = heap_.TakeUnreclaimed(
          absl::MakeSpan(batch, std::min(kBatch, n - done)));
    }
    if (taken == 0) break;
    for (size_t i = 0; i < taken; ++i) batch[i].reset();  // lock released
    done += taken;
  }
  return done;
}

std::optional<CollectStats> Collector::CollectIfDue() {
  if (deferred_.load(std::memory_order_acquire)) return Collect();
  if (!automatic_.load(std::memory_order_relaxed)) return std::nullopt;
  if (heap_.drops() == drops_at_last_.load(std::memory_order_acquire) &&
      !heap_.maybe_drop()) {
    return std::nullopt;  // no root went away: nothing can be garbage
  }
  const int64_t allocations = heap_.allocations();
  const int64_t created =
      allocations - allocations_at_last_.load(std::memory_order_acquire);
  const int64_t full_threshold = threshold_.load(std::memory_order_relaxed);
  if (promote_after_.load(std::memory_order_relaxed) == 0) {
    if (created < full_threshold) return std::nullopt;
    return Collect();
  }
  if (created < min_new_nodes_.load(std::memory_order_relaxed)) {
    return std::nullopt;
  }
  if (promoted_since_full_.load(std::memory_order_relaxed) >= full_threshold) {
    return Collect();
  }
  if ((heap_.old_drops() !=
           old_drops_at_full_.load(std::memory_order_relaxed) ||
       heap_.maybe_old_drop()) &&
      allocations - allocations_at_full_.load(std::memory_order_relaxed) >=
          full_threshold) {
    return Collect();  // an old root went away: its garbage needs a full one
  }
  return CollectYoung();
}

void Collector::UpdateThreshold(int64_t live_after) {
  WriterLock l(state_mu_);
  const double grow = policy_.growth_ratio * static_cast<double>(live_after);
  threshold_.store(
      std::max<int64_t>(policy_.min_new_nodes, static_cast<int64_t>(grow)),
      std::memory_order_relaxed);
}

GcStats Collector::stats() const {
  GcStats s;
  {
    ReaderLock l(state_mu_);
    s = stats_;
  }
  ReaderLock lock(heap_.mu());
  s.live_nodes = heap_.live_count();
  s.peak_nodes = std::max(s.peak_nodes, heap_.peak_live());
  return s;
}

GcPolicy Collector::policy() const {
  ReaderLock l(state_mu_);
  return policy_;
}

void Collector::set_policy(const GcPolicy& policy) {
  int64_t live;
  {
    ReaderLock lock(heap_.mu());
    live = heap_.live_count();
  }
  {
    WriterLock l(state_mu_);
    policy_ = policy;
    // Survival counts are 8 bits.
    policy_.promote_after = std::clamp(policy.promote_after, 0, 100);
    automatic_.store(policy.automatic, std::memory_order_relaxed);
    min_new_nodes_.store(policy.min_new_nodes, std::memory_order_relaxed);
    promote_after_.store(policy_.promote_after, std::memory_order_relaxed);
  }
  UpdateThreshold(live);
}

ListenerRegistration Collector::Listen(Listener listener) {
  auto fn = std::make_shared<const Listener>(std::move(listener));
  WriterLock lock(listeners_->mu);
  const int id = listeners_->next_id++;
  listeners_->entries.push_back({id, std::move(fn)});
  return ListenerRegistration(listeners_, id);
}

void Collector::Notify(const CollectEvent& event) {
  NotifyEach(this, SnapshotListeners(*listeners_), event);
}

namespace collector_internal {

void RemoveListener(Listeners& listeners, const int& id) {
  WriterLock lock(listeners.mu);
  std::erase_if(listeners.entries,
                [id](const Listeners::Entry& e) { return e.id == id; });
}

}  // namespace collector_internal

size_t Collector::saved_count() const {
  ReaderLock l(saved_mu_);
  return saved_.size();
}

void Collector::ClearSaved() {
  std::vector<std::unique_ptr<Object>> saved;
  {
    WriterLock l(saved_mu_);
    saved.swap(saved_);
  }
}

}  // namespace gc
}  // namespace graphgc
