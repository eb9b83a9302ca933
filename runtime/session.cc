#include "runtime/session.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "runtime/executor.h"
#include "runtime/plan.h"
#include "runtime/plan_builder.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {
namespace session_internal {

using exec::Plan;

// The cache key: the ids and output indices of feeds, fetches, targets.
struct PlanKey {
  // Inline for the usual few feeds and fetches: one is made per run.
  absl::InlinedVector<uint32_t, 24> words;
  friend bool operator==(const PlanKey& a, const PlanKey& b) {
    return a.words == b.words;
  }
  template <typename H>
  friend H AbslHashValue(H h, const PlanKey& k) {
    return H::combine(std::move(h), k.words);
  }
};

struct PlanCache {
  static constexpr size_t kMaxPlans = 1024;

  Mutex mu;
  absl::flat_hash_map<PlanKey, std::shared_ptr<const Plan>> plans
      ABSL_GUARDED_BY(mu);
  // The heap's structure_version() when every plan in the cache was last
  // found current (EvictStale).
  int64_t current_as_of ABSL_GUARDED_BY(mu) = -1;

  // Evicts every plan that is no longer current (exec::PlanIsCurrent), in
  // one pass over the cache when the heap's structure changed since the
  // last one, none otherwise. The work is this session's, done when it
  // builds a plan: a collection notifies no session, and a session that
  // never builds again costs nothing. Takes mu, then the heap's mutex.
  void EvictStale(const gc::Heap& heap) ABSL_LOCKS_EXCLUDED(mu, heap.mu()) {
    std::vector<std::shared_ptr<const Plan>> evicted;  // freed unlocked
    WriterLock l(mu);
    ReaderLock heap_lock(heap.mu());
    const int64_t version = heap.structure_version();
    if (version == current_as_of) return;
    for (auto it = plans.begin(); it != plans.end();) {
      if (!exec::PlanIsCurrent(heap, *it->second).ok()) {
        evicted.push_back(std::move(it->second));
        plans.erase(it++);
      } else {
        ++it;
      }
    }
    current_as_of = version;
  }
};

}  // namespace session_internal

namespace {

using exec::Feeds;
using exec::PinnedRun;
using exec::Plan;
using session_internal::PlanCache;
using session_internal::PlanKey;

void AppendKey(const Output& o, absl::InlinedVector<uint32_t, 24>& words) {
  words.push_back(o.handle().id().index);
  words.push_back(o.handle().id().generation);
  words.push_back(static_cast<uint32_t>(o.index()));
}

PlanKey MakeKey(const Feeds& feeds, const std::vector<Output>& fetches,
                const std::vector<Output>& targets) {
  PlanKey key;
  key.words.reserve(3 + 3 * (feeds.size() + fetches.size() + targets.size()));
  key.words.push_back(static_cast<uint32_t>(feeds.size()));
  key.words.push_back(static_cast<uint32_t>(fetches.size()));
  key.words.push_back(static_cast<uint32_t>(targets.size()));
  for (const auto& f : feeds) AppendKey(f.first, key.words);
  for (const Output& o : fetches) AppendKey(o, key.words);
  for (const Output& o : targets) AppendKey(o, key.words);
  return key;
}

}  // namespace

Session::Session(Graph& g, SessionOptions options)
    : graph_(g),
      executor_(std::make_unique<exec::Executor>(
          ResolveIntraOpThreads(options.intra_op_threads))),
      cache_(std::make_unique<PlanCache>()) {}

// Touches nothing of the graph, which may be gone.
Session::~Session() = default;

size_t Session::CachedPlansForTesting() const {
  cache_->EvictStale(graph_.heap());
  ReaderLock l(cache_->mu);
  return cache_->plans.size();
}

absl::StatusOr<int64_t> Session::PlanSizeForTesting(
    const Feeds& feeds, const std::vector<Output>& fetches,
    const std::vector<Output>& targets) const {
  GG_ASSIGN_OR_RETURN(PlanPtr plan, exec::BuildPlan(graph_, executor_->device(),
                                                    feeds, fetches, targets));
  return static_cast<int64_t>(plan->steps.size());
}

absl::StatusOr<Session::PlanPtr> Session::GetPlan(
    const Feeds& feeds, const std::vector<Output>& fetches,
    const std::vector<Output>& targets, bool force_rebuild) {
  PlanKey key = MakeKey(feeds, fetches, targets);
  if (!force_rebuild) {
    ReaderLock l(cache_->mu);
    auto it = cache_->plans.find(key);
    if (it != cache_->plans.end()) return it->second;
  }
  GG_ASSIGN_OR_RETURN(PlanPtr plan, exec::BuildPlan(graph_, executor_->device(),
                                                    feeds, fetches, targets));
  plan_builds_.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<const Plan> replaced;  // freed unlocked
  {
    WriterLock l(cache_->mu);
    if (cache_->plans.size() >= PlanCache::kMaxPlans) cache_->plans.clear();
    auto [it, inserted] = cache_->plans.try_emplace(std::move(key), plan);
    if (!inserted) {
      replaced = std::move(it->second);
      it->second = plan;
    }
  }
  cache_->EvictStale(graph_.heap());
  return plan;
}

absl::StatusOr<std::vector<Tensor>> Session::Run(
    const Feeds& feeds, const std::vector<Output>& fetches,
    const std::vector<Output>& targets) {
  GG_ASSIGN_OR_RETURN(PlanPtr plan, GetPlan(feeds, fetches, targets, false));
  absl::StatusOr<PinnedRun> run = PinnedRun::Pin(graph_, std::move(plan));
  if (!run.ok()) {
    // The cached plan is not current (a node it names gained an input, or
    // was swept): build it again, replacing it in the cache. If a fetch
    // itself is gone, building says so.
    GG_ASSIGN_OR_RETURN(plan, GetPlan(feeds, fetches, targets, true));
    run = PinnedRun::Pin(graph_, std::move(plan));
    if (!run.ok()) {
      return absl::AbortedError(absl::StrCat(
          "Session::Run: the graph changed under the run while it started: ",
          run.status().message()));
    }
  }
  return executor_->Run(*run, feeds);
}

}  // namespace graphgc
