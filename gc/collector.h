// gc/collector.h
//
// GcPolicy and Collector: the mark-and-sweep orchestrator of one graph.
//
// Liveness has one source of truth: reachability from the roots at the
// moment of a collection. Root counts only say which slots are roots; a
// node whose last handle went away lives on until a collection finds it
// unreachable (no reference counting frees anything).
//
// Collect() runs the phases in this order, holding the heap's mutex
// exclusively for 2-4, so no node is created, looked up or pinned meanwhile
// (handles may still be copied and dropped; kernels of pinned runs go on):
//   1. start listeners are called (no lock held).
//   2. mark: every slot reachable from a root is marked and the unmarked
//      live slots are listed as garbage. A full collection does it in one
//      pass, Marker::MarkHeap() (gc/marker.h: roots, trace and listing
//      together); a minor one in three steps over the young generation,
//      CollectYoungRoots() (gc/roots.h), Marker::MarkYoung() and
//      FindYoungGarbage() (gc/sweeper.h).
//   3. SweepObserver::OnSweep(garbage): the graph purges names and indexes
//      while the nodes still exist.
//   4. SweepLazily() (gc/sweeper.h; Sweep() under GcPolicy::save_garbage):
//      every listed slot is free and its generation changed, and its
//      object is unlinked; the survivors age (Heap::AgeSurvivors); stats
//      are recorded. The lock is released here: pause_ns is phases 2-4.
//   5. the swept objects that asked for it (Object::DestroyPromptly: a
//      node holding a variable's state) are destroyed, no lock held, or
//      all of them are set aside under GcPolicy::save_garbage; then end
//      listeners are called with the swept ids (no lock held). Collect()
//      returns after both, so names are free for reuse and prompt objects'
//      memory is freed when it returns.
// Lazy sweeping: the other swept objects (most nodes: a name, inputs and
// attributes) wait in the heap (gc/heap.h invariant 5) and are destroyed as
// allocation reaches them, the way Boehm GC and Go sweep: Graph::AddNode
// destroys kReclaimPerNode of them for each node it makes, each safe point
// that does not collect (MaybeCollect) up to kReclaimPerSafePoint, and the
// next collection, before its phase 2, the rest. Nothing can reach them
// (their slots are free, their names gone), and they are destroyed with no
// lock held. So the work of freeing a dropped model's nodes is paid by the
// allocation that follows, not by the pause or the Collect() call.
// With Heap::SetVerifyCollectionsForTesting, the heap's invariants and the
// mark's postconditions are checked between the phases.
//
// Generations: most nodes die young (a model built, trained and dropped),
// and the ones that live long (the models kept) would otherwise be marked
// again by every collection. So a node is young until it has survived
// GcPolicy::promote_after collections, and MaybeCollect() usually runs a
// minor collection: the same phases over the young generation only (roots
// among young nodes and the young nodes old ones read, marking that stops
// at old nodes, garbage among young nodes). Its cost follows the young
// generation, not the graph, and it frees a dropped model's nodes while
// they are still in cache. Old garbage waits for a full collection.
// Collect() is always full.
//
// Safe points: the runtime calls MaybeCollect() before each training step
// and each graph export. It returns at once (a few atomic loads) unless a
// root was dropped since the last collection AND min_new_nodes were created
// since then. It then runs a full collection if the nodes promoted since
// the last full one reach growth_ratio x the live nodes that one left (at
// least min_new_nodes), or if an old node lost its last handle since the
// last full collection and that many nodes were created since it (old
// garbage, e.g. a long-lived model dropped, waits at most that long); a
// minor one otherwise. A handle dropped on another thread than the graph's
// counts as a node's last (Heap::maybe_drop: a drop at home takes no locked
// instruction, so the two may race past the zero they make together), so
// a program that drops handles on other threads may see collections that
// find nothing. Either way the amortised cost of collecting stays
// proportional to the allocation that made the garbage. With
// promote_after = 0 every automatic collection is full, once growth_ratio x
// the live nodes (at least min_new_nodes) were created.
//
// Thread safety: all methods may be called from any thread. A collection
// (Collect(), CollectYoung() or MaybeCollect()) requested by a thread that
// is inside one of THIS collector's listeners is deferred: it returns empty
// stats and the next MaybeCollect() collects. "Inside" is tracked per
// thread and per collector, for exactly the length of the listener calls:
// other threads, and this thread once its listener returned, collect as
// usual however notifications on several threads overlap, and a listener of
// graph A that asks graph B to collect gets a real collection of B (whose
// own listeners, if they ask A to collect, are deferred in turn, since the
// thread is still inside A's listener).
//
// A Graph owns one Collector (Graph::collector()); the graph itself keeps
// only Collect(), gc_stats() and set_gc_policy(), the public contract's
// spelling, and callers reach the rest here: graph.collector().MaybeCollect()
// at safe points, CollectYoung(), policy(), Listen(), ClearSaved().
#ifndef GRAPHGC_GC_COLLECTOR_H_
#define GRAPHGC_GC_COLLECTOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "gc/heap.h"
#include "gc/marker.h"
#include "gc/stats.h"
#include "util/registration.h"

namespace graphgc {

struct GcPolicy {
  // Collect at safe points (MaybeCollect). Collect() works either way.
  bool automatic = true;
  // A full collection waits for this many nodes, relative to the live
  // nodes the last full collection left, to be promoted since then (or
  // created, once an old root was dropped or with promote_after = 0)...
  double growth_ratio = 1.0;
  // ... and at least this many; and MaybeCollect() does nothing before
  // this many nodes were created since the last collection. 256 nodes
  // (about 1 KB each with their attributes) of garbage are still in L2
  // when a minor collection sweeps them, so the seed workload's pauses
  // are about half what they are at 1024 (models_bench's BM_SeedFit
  // reports them as its pause_ms counter).
  int64_t min_new_nodes = 256;
  // Debug mode like CPython's DEBUG_SAVEALL: swept nodes are set aside
  // (their names and slots freed) instead of destroyed, for inspection.
  bool save_garbage = false;
  // Collections a node must survive to become old, 0 to 100. 0: no minor
  // collections.
  int promote_after = 2;
};

// What a collection did, told to listeners.
struct CollectEvent {
  enum class Phase { kStart, kEnd };
  Phase phase = Phase::kStart;
  CollectStats stats;         // kEnd only
  std::vector<NodeId> swept;  // kEnd only: the ids now dead
};

namespace gc {

// Called during a collection of `heap` with its mutex held exclusively,
// after marking and before the garbage is freed. Must not call back into the
// graph or the collector.
class SweepObserver {
 public:
  virtual ~SweepObserver() = default;
  virtual void OnSweep(Heap& heap, absl::Span<const NodeId> garbage)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu()) = 0;
};

namespace collector_internal {

// A collector's listeners. The collector shares it (weakly) with the
// registrations it hands out, so a registration dropped after its
// collector finds it expired.
struct Listeners {
  using Fn = std::function<void(const CollectEvent&)>;
  struct Entry {
    int id;
    std::shared_ptr<const Fn> fn;
  };
  Mutex mu;
  int next_id ABSL_GUARDED_BY(mu) = 1;
  std::vector<Entry> entries ABSL_GUARDED_BY(mu);
};

// Removes listener `id` (ListenerRegistration's release).
void RemoveListener(Listeners& listeners, const int& id);

}  // namespace collector_internal

// ListenerRegistration: keeps one listener of a collector (Collector::Listen)
// registered while it lives; destroying it, or Reset(), removes the
// listener. Move-only (a Registration, util/registration.h): the moved-to
// registration removes it, the moved-from one is empty. May outlive its
// collector (and the graph owning it): removing then does nothing, the
// listeners went with the collector. Thread safety: one registration is used by
// one thread at a time; registrations of one collector may be reset from any
// threads at once.
class ListenerRegistration {
 public:
  ListenerRegistration() = default;

  // Removes the listener now; the registration is empty afterwards. Not an
  // error when it is already empty or its collector is gone. May be called
  // from a listener (its own registration too). It does not wait for a
  // notification already under way, on this thread or another: that one
  // may still call the listener after Reset() returns.
  void Reset() { hold_.Reset(); }

 private:
  friend class Collector;
  ListenerRegistration(std::weak_ptr<collector_internal::Listeners> listeners,
                       int id)
      : hold_(std::move(listeners), id) {}

  Registration<collector_internal::Listeners, int,
               &collector_internal::RemoveListener>
      hold_;
};

class Collector {
 public:
  using Listener = collector_internal::Listeners::Fn;

  // Collects `heap`; `observer` (may be null) is told of every sweep.
  // Both must outlive the collector.
  Collector(Heap& heap, SweepObserver* observer)
      : heap_(heap),
        observer_(observer),
        listeners_(std::make_shared<collector_internal::Listeners>()) {}
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // A full collection, phases 1-5 above. When it returns, every node no
  // root reached at phase 2 is unlinked (destroyed, set aside under
  // GcPolicy::save_garbage, or waiting to be destroyed: Lazy sweeping
  // above), its name is free and its id stale, the
  // survivors aged one collection, stats() counts it, and the end
  // listeners have run. Called from inside one of this collector's
  // listeners it is deferred instead: returns empty stats, does nothing,
  // and the next MaybeCollect() collects.
  CollectStats Collect() ABSL_LOCKS_EXCLUDED(heap_.mu());
  // A minor collection (see Generations above), whatever the policy says.
  // When it returns, every young node no young root and no old node reached
  // is swept as Collect() sweeps; old nodes, garbage or not, are untouched
  // (stats().minor_collections counts it). Deferred like Collect().
  CollectStats CollectYoung() ABSL_LOCKS_EXCLUDED(heap_.mu());
  // A safe point (see Safe points above): nullopt, having taken no lock,
  // when the policy says there is nothing to do; otherwise the stats of
  // the full or minor collection it ran. A collection deferred from a
  // listener runs here (full), policy or not.
  // When it does not collect and swept objects wait to be destroyed, it
  // destroys up to kReclaimPerSafePoint of them (taking the lock briefly).
  std::optional<CollectStats> MaybeCollect() ABSL_LOCKS_EXCLUDED(heap_.mu());

  // Lazy sweeping's pace (see above): objects destroyed for each node
  // allocated, and at most per safe point.
  static constexpr size_t kReclaimPerNode = 2;
  static constexpr size_t kReclaimPerSafePoint = 32;
  // Destroys up to `n` swept objects waiting in the heap, with the heap's
  // lock released; returns how many.
  size_t Reclaim(size_t n) ABSL_LOCKS_EXCLUDED(heap_.mu());

  // Totals since the collector was made, with the live and peak node
  // counts of the heap now.
  GcStats stats() const ABSL_LOCKS_EXCLUDED(heap_.mu(), state_mu_);
  // The policy last set (promote_after clamped to 0-100).
  GcPolicy policy() const ABSL_LOCKS_EXCLUDED(state_mu_);
  // Takes effect at the next collection or MaybeCollect(); the full
  // collection threshold is recomputed from the live nodes now.
  void set_policy(const GcPolicy& policy)
      ABSL_LOCKS_EXCLUDED(heap_.mu(), state_mu_);

  // Calls `listener` at the start (phase 1) and the end (phase 5) of every
  // collection of this collector, on the collecting thread with no lock
  // held, until the returned registration is destroyed or reset
  // (diagnostics, tests). A listener must not block on the graph's lock,
  // and a collection it asks for is deferred (see Thread safety above).
  // Nothing in the runtime listens: a cache of ids checks
  // Heap::structure_version() when it uses them instead.
  [[nodiscard]] ListenerRegistration Listen(Listener listener)
      ABSL_LOCKS_EXCLUDED(listeners_->mu);

  // With GcPolicy::save_garbage: the swept objects set aside so far.
  // Calls fn(const Object&) for each; ClearSaved() destroys them. The
  // graph's SavedGarbage() names them.
  template <typename Fn>
  void ForEachSaved(Fn fn) const ABSL_LOCKS_EXCLUDED(saved_mu_) {
    ReaderLock l(saved_mu_);
    for (const auto& o : saved_) fn(*o);
  }
  size_t saved_count() const ABSL_LOCKS_EXCLUDED(saved_mu_);
  // Destroys the objects set aside; saved_count() is 0 when it returns
  // (until the next collection under save_garbage).
  void ClearSaved() ABSL_LOCKS_EXCLUDED(saved_mu_);

 private:
  CollectStats Run(bool minor) ABSL_LOCKS_EXCLUDED(heap_.mu(), state_mu_);
  // MaybeCollect() but for its reclaiming.
  std::optional<CollectStats> CollectIfDue() ABSL_LOCKS_EXCLUDED(heap_.mu());
  // Whether the calling thread is inside a listener this collector called.
  bool InsideListenerOnThisThread() const;
  void Notify(const CollectEvent& event) ABSL_LOCKS_EXCLUDED(listeners_->mu);
  void UpdateThreshold(int64_t live_after) ABSL_LOCKS_EXCLUDED(state_mu_);

  Heap& heap_;
  SweepObserver* const observer_;

  // Fast-path state for MaybeCollect(), all lock-free.
  std::atomic<bool> automatic_{true};
  std::atomic<int64_t> drops_at_last_{0};
  std::atomic<int64_t> allocations_at_last_{0};
  std::atomic<int64_t> threshold_{256};  // for a full collection
  std::atomic<int64_t> min_new_nodes_{256};
  std::atomic<int> promote_after_{2};
  // Nodes promoted since the last full collection, and the heap's
  // allocations and old-root drops when it started.
  std::atomic<int64_t> promoted_since_full_{0};
  std::atomic<int64_t> allocations_at_full_{0};
  std::atomic<int64_t> old_drops_at_full_{0};
  std::atomic<bool> deferred_{false};

  mutable Mutex state_mu_;
  GcPolicy policy_ ABSL_GUARDED_BY(state_mu_);
  GcStats stats_ ABSL_GUARDED_BY(state_mu_);
  // A collection's working state, used with the heap's mutex held
  // exclusively.
  uint32_t epoch_ ABSL_GUARDED_BY(heap_.mu()) = 0;
  Marker marker_ ABSL_GUARDED_BY(heap_.mu());
  std::vector<uint32_t> roots_ ABSL_GUARDED_BY(heap_.mu());
  NodeIdList garbage_ ABSL_GUARDED_BY(heap_.mu());
  // Shared (weakly) with the registrations Listen() hands out.
  const std::shared_ptr<collector_internal::Listeners> listeners_;

  mutable Mutex saved_mu_;
  std::vector<std::unique_ptr<Object>> saved_ ABSL_GUARDED_BY(saved_mu_);
};

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_COLLECTOR_H_
