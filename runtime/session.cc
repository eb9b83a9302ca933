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
  // Drops every plan that names a node no longer live in `graph`. Costs
  // the size of this session's plans, not of the collection: with hundreds
  // of sessions alive (one per model), building a set of the swept ids in
  // each made every collection O(sessions x swept). And it is called only
  // when a collection swept a node no newer than the newest plan (a sweep
  // listener's horizon), so a minor collection that freed only newer nodes
  // does not call it at all.
  void DropDead(const Graph& graph) ABSL_LOCKS_EXCLUDED(mu) {
    std::vector<std::shared_ptr<const Plan>> dropped;  // freed unlocked
    WriterLock l(mu);
    for (auto it = plans.begin(); it != plans.end();) {
      if (!graph.AllLive(it->second->ids)) {
        dropped.push_back(std::move(it->second));
        plans.erase(it++);
      } else {
        ++it;
      }
    }
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
      executor_(std::make_unique<exec::Executor>(options.intra_op_threads)),
      cache_(std::make_shared<PlanCache>()) {
  // The listener holds the cache, not the session: a notification racing
  // with ~Session still touches live memory.
  // It runs only inside this graph's collections, so `graph` is alive then.
  std::shared_ptr<PlanCache> cache = cache_;
  const Graph* graph = &graph_;
  listener_id_ = graph_.AddSweepListener(
      [cache, graph](const CollectEvent&) { cache->DropDead(*graph); },
      /*horizon=*/0);
  listener_ = graph_.RegistrationFor(listener_id_);
}

// Touches only the registration, which outlives the graph harmlessly.
Session::~Session() { listener_.Reset(); }

size_t Session::cached_plans_ForTesting() const {
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
    if (it != cache_->plans.end() &&
        it->second->structure_version == graph_.structure_version()) {
      return it->second;
    }
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
  // The listener's horizon is the newest plan's (it only moves forward).
  graph_.RaiseSweepListenerHorizon(listener_id_, plan->allocations);
  return plan;
}

absl::StatusOr<std::vector<Tensor>> Session::Run(
    const Feeds& feeds, const std::vector<Output>& fetches,
    const std::vector<Output>& targets) {
  GG_ASSIGN_OR_RETURN(PlanPtr plan, GetPlan(feeds, fetches, targets, false));
  absl::StatusOr<PinnedRun> run = PinnedRun::Pin(graph_, std::move(plan));
  if (!run.ok()) {
    // A node of the cached plan was swept between the sweep and the
    // listener that drops the plan: build it again. If a fetch itself is
    // gone, building says so.
    GG_ASSIGN_OR_RETURN(plan, GetPlan(feeds, fetches, targets, true));
    run = PinnedRun::Pin(graph_, std::move(plan));
    if (!run.ok()) {
      return absl::AbortedError(absl::StrCat(
          "Session::Run: a node of the run was swept while it started: ",
          run.status().message()));
    }
  }
  return executor_->Run(*run, feeds);
}

}  // namespace graphgc
