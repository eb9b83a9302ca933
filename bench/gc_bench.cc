// bench/gc_bench: the collector's costs on this machine.
//
//   ./bazelw run //bench:gc_bench -- --benchmark_format=json
//
// Targets (issue 2, 2-core machine): Collect() after dropping the roots of
// half of a 1,000,000-node graph <= 20 ns per node of the graph;
// MaybeCollect() with nothing to do <= 20 ns; a strong handle copy+destroy
// <= 10 ns uncontended, labelled (an owner label) or not. Graph building is
// excluded from collection timings (manual time around Collect() only).
//
// BM_PeerGraphgc* (issue 17) build the 1M-node graph of bench/peer_shape.h
// through the public API; bench/boehm_peer_bench.cc's BM_PeerBoehm* build it
// with Boehm GC, in this same binary: a full collection with 50% and 1%
// garbage, the creation rate, resident bytes per live node (run alone:
// --benchmark_filter=BM_PeerGraphgcResident, then ...Boehm...), and the
// pauses while models are dropped steadily.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/peer_report.h"
#include "bench/peer_shape.h"
#include "benchmark/benchmark.h"
#include "gc/handle.h"
#include "runtime/graph.h"
#include "runtime/name_table.h"
#include "tools/consecutive_models_lib.h"
#include "util/huge_pages.h"
#include "util/mutex.h"

namespace graphgc {
namespace {

NodeHandle AddNode(Graph& g, const std::vector<NodeHandle>& inputs,
                   const std::string& name = "n") {
  NodeSpec spec;
  spec.op = "NoOp";
  spec.name = name;
  for (const NodeHandle& in : inputs) spec.inputs.emplace_back(in, 0);
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {TensorShape{}};
  return g.AddNode(std::move(spec)).value();
}

// Builds `nodes` nodes named `name` (uniqued) as chains of `chain` nodes,
// each chain held by one handle on its last node.
std::vector<NodeHandle> BuildChains(Graph& g, int64_t nodes, int64_t chain,
                                    const std::string& name = "n") {
  std::vector<NodeHandle> roots;
  for (int64_t built = 0; built < nodes;) {
    NodeHandle tail = AddNode(g, {}, name);
    ++built;
    for (int64_t i = 1; i < chain && built < nodes; ++i, ++built) {
      tail = AddNode(g, {tail}, name);
    }
    roots.push_back(std::move(tail));
  }
  return roots;
}

void BM_NodeCreation(benchmark::State& state) {
  Graph g;
  std::vector<NodeHandle> keep;
  keep.reserve(1 << 20);
  for (auto _ : state) {
    keep.push_back(AddNode(g, {}));
    if (keep.size() == (1 << 20)) {
      state.PauseTiming();
      keep.clear();
      g.Collect();
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NodeCreation);

// What first touching memory costs (util/huge_pages.h): 32 MiB freshly
// allocated, one byte written per 4 KiB page, timed; arg 0 through
// operator new (4 KiB pages), arg 1 through AllocateLarge (2 MiB pages
// where the kernel gives them). Both are fresh mappings every iteration.
void BM_FirstTouch(benchmark::State& state) {
  constexpr size_t kBytes = size_t{32} << 20;
  const bool huge = state.range(0) != 0;
  for (auto _ : state) {
    char* p = static_cast<char*>(huge ? AllocateLarge(kBytes)
                                      : ::operator new(kBytes));
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < kBytes; i += 4096) p[i] = 1;
    benchmark::ClobberMemory();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    if (huge) {
      FreeLarge(p, kBytes);
    } else {
      ::operator delete(p);
    }
  }
  state.SetBytesProcessed(state.iterations() * int64_t{kBytes});
}
BENCHMARK(BM_FirstTouch)
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10);

// One name group's sweep on its own (runtime/name_table.h): 1M names
// "n_<i>", entry i holding slot i, the lower half of the slots leaving, as
// in BM_Collect/1000000/50's one unscoped group. Arg 0 sweeps an
// absl::flat_hash_set of 16-byte entries (node, hash, slot) with
// absl::erase_if, as NameGroup did before c3fa0c9; arg 1 a NameTable with
// EraseIf, each slot tested without a branch as NameIndex::Erase tests it.
// Only the sweep is timed; the table is built anew, untimed, each time.
struct SweepNode {
  std::string name;
};
struct SweepEntry {
  const SweepNode* node;
  uint32_t hash;
  uint32_t slot;
};
struct SweepEntryHash {
  size_t operator()(const SweepEntry& e) const {
    return static_cast<size_t>(uint64_t{e.hash} * 0x9E3779B97F4A7C15u);
  }
};
struct SweepEntryEq {
  bool operator()(const SweepEntry& a, const SweepEntry& b) const {
    return a.node == b.node;
  }
};
void BM_NameSweep(benchmark::State& state) {
  constexpr uint32_t kNames = 1'000'000;
  const bool table = state.range(0) != 0;
  std::vector<SweepNode> nodes(kNames);
  std::vector<uint32_t> hashes(kNames);
  std::vector<uint64_t> leaving(kNames / 64 + 1, 0);
  for (uint32_t i = 0; i < kNames; ++i) {
    nodes[i].name = absl::StrCat("n_", i);
    hashes[i] = static_cast<uint32_t>(absl::Hash<std::string>{}(nodes[i].name));
    if (i < kNames / 2) leaving[i / 64] |= uint64_t{1} << (i % 64);
  }
  auto leaves = [&](uint32_t slot) {
    return static_cast<uint32_t>(leaving[slot / 64] >> (slot % 64)) & 1;
  };
  size_t left = 0;
  for (auto _ : state) {
    std::chrono::steady_clock::time_point start;
    if (table) {
      NameTable<SweepNode> t;
      for (uint32_t i = 0; i < kNames; ++i) t.Insert(&nodes[i], hashes[i], i);
      start = std::chrono::steady_clock::now();
      t.EraseIf([&](uint32_t slot, bool full, size_t) {
        return (full & leaves(slot)) != 0;
      });
      left = t.size();
    } else {
      absl::flat_hash_set<SweepEntry, SweepEntryHash, SweepEntryEq,
                          HugePageAllocator<SweepEntry>>
          set;
      for (uint32_t i = 0; i < kNames; ++i) {
        set.insert(SweepEntry{&nodes[i], hashes[i], i});
      }
      start = std::chrono::steady_clock::now();
      absl::erase_if(set,
                     [&](const SweepEntry& e) { return leaves(e.slot) != 0; });
      left = set.size();
    }
    state.SetIterationTime(bench::SecondsSince(start));
    benchmark::DoNotOptimize(left);
  }
  state.counters["left"] = static_cast<double>(left);
}
BENCHMARK(BM_NameSweep)
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);

void BM_HandleCopyDestroy(benchmark::State& state) {
  Graph g;
  NodeHandle h = AddNode(g, {});
  for (auto _ : state) {
    NodeHandle copy(h);
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_HandleCopyDestroy);

// The floor under a copy and destroy counted with two atomic operations
// (relaxed increment, acq_rel decrement tested for zero), on a bare counter
// with no handle around it: what a handle costs on a thread other than its
// graph's home thread (BM_HandleCopyDestroyOffHome), and what every copy
// cost before root counts had a home part (gc/root_count.h). On this
// machine it is above the handle's 10 ns target (issue 16).
void BM_CountUpDownFloor(benchmark::State& state) {
  std::atomic<int32_t> count{1};
  int64_t zeros = 0;
  for (auto _ : state) {
    count.fetch_add(1, std::memory_order_relaxed);
    benchmark::ClobberMemory();
    if (count.fetch_sub(1, std::memory_order_acq_rel) == 1) ++zeros;
  }
  benchmark::DoNotOptimize(zeros);
}
BENCHMARK(BM_CountUpDownFloor);

// A writer's lock and unlock of the graph's lock type (util/mutex.h),
// uncontended, beside std::shared_mutex's, what Mutex was before it had a
// lock word of its own (glibc's pthread_rwlock). Graph::AddNode takes one
// such pair per node.
void BM_MutexWriterLockUnlock(benchmark::State& state) {
  Mutex mu;
  for (auto _ : state) {
    WriterLock l(mu);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_MutexWriterLockUnlock);

void BM_SharedMutexWriterLockUnlock(benchmark::State& state) {
  std::shared_mutex mu;
  for (auto _ : state) {
    std::lock_guard<std::shared_mutex> l(mu);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_SharedMutexWriterLockUnlock);

// The same on a thread that did not make the graph: the copy and the drop
// count in the shared part, one atomic operation each.
void BM_HandleCopyDestroyOffHome(benchmark::State& state) {
  std::optional<Graph> g;
  NodeHandle h;
  std::thread([&] {
    g.emplace();
    h = AddNode(*g, {});
  }).join();
  for (auto _ : state) {
    NodeHandle copy(h);
    benchmark::DoNotOptimize(copy);
  }
  h.Reset();
}
BENCHMARK(BM_HandleCopyDestroyOffHome);

void BM_HandleCopyDestroyContended(benchmark::State& state) {
  static Graph* g = new Graph();
  static NodeHandle* h = new NodeHandle(AddNode(*g, {}));
  for (auto _ : state) {
    NodeHandle copy(*h);
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_HandleCopyDestroyContended)->Threads(2);

// A handle with an owner label, as models hold theirs: the copy counts
// itself in the label's entry too.
void BM_LabelledHandleCopyDestroy(benchmark::State& state) {
  Graph g;
  NodeHandle h = AddNode(g, {}).WithOwner("Sequential 'sequential'");
  for (auto _ : state) {
    NodeHandle copy(h);
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_LabelledHandleCopyDestroy);

void BM_LabelledHandleCopyDestroyContended(benchmark::State& state) {
  static Graph* g = new Graph();
  static NodeHandle* h =
      new NodeHandle(AddNode(*g, {}).WithOwner("Sequential 'sequential'"));
  for (auto _ : state) {
    NodeHandle copy(*h);
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_LabelledHandleCopyDestroyContended)->Threads(2);

void BM_MaybeCollectNothingToDo(benchmark::State& state) {
  Graph g;
  std::vector<NodeHandle> roots = BuildChains(g, 10000, 10);
  g.Collect();
  for (auto _ : state) {
    benchmark::DoNotOptimize(g.collector().MaybeCollect());
  }
}
BENCHMARK(BM_MaybeCollectNothingToDo);

// Builds `nodes` nodes in `g` in chains of 10, drops `garbage_pct` percent
// of the chains and times one Collect(); the seconds it took. The other
// chains' handles go when it returns.
double BuildDropAndCollect(Graph& g, int64_t nodes, int64_t garbage_pct) {
  std::vector<NodeHandle> roots = BuildChains(g, nodes, 10);
  const size_t drop = roots.size() * garbage_pct / 100;
  roots.erase(roots.begin(), roots.begin() + drop);
  const auto start = std::chrono::steady_clock::now();
  CollectStats s = g.Collect();
  const auto end = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(s);
  return std::chrono::duration<double>(end - start).count();
}

void SetNsPerNode(benchmark::State& state, int64_t nodes) {
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(nodes) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

// Args: nodes in the graph, percent of it made garbage before Collect().
// A new graph each iteration.
void BM_Collect(benchmark::State& state) {
  const int64_t nodes = state.range(0);
  for (auto _ : state) {
    Graph g;
    state.SetIterationTime(BuildDropAndCollect(g, nodes, state.range(1)));
  }
  SetNsPerNode(state, nodes);
}
BENCHMARK(BM_Collect)
    ->ArgsProduct({{1000, 10000, 100000, 1000000}, {0, 50, 90}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
// The small shapes again, 300 times each: three iterations of a 30-us
// collection are mostly noise (BM_Collect/1000/50 ranged 29-97 us over
// three pairs of runs), and too few samples for a profile.
BENCHMARK(BM_Collect)
    ->Name("BM_CollectSmall")
    ->ArgsProduct({{1000, 10000}, {0, 50, 90}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(300);

// Args as BM_Collect, but one graph for all iterations, as a process keeps
// its graph: each iteration builds the nodes, drops the share, times the
// collection, then drops the rest and collects again (untimed), so every
// iteration starts from an empty graph whose collector and name index have
// collected before. BM_Collect builds a new graph each time, so every
// collection there is a fresh graph's first, and its scratch lists are new
// memory (a page fault per 4 KB page touched).
void BM_CollectReused(benchmark::State& state) {
  const int64_t nodes = state.range(0);
  Graph g;
  for (auto _ : state) {
    state.SetIterationTime(BuildDropAndCollect(g, nodes, state.range(1)));
    g.Collect();  // the rest, untimed
  }
  SetNsPerNode(state, nodes);
}
BENCHMARK(BM_CollectReused)
    ->ArgsProduct({{1000, 10000, 100000}, {0, 50, 90}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(30);

// Args: old nodes (held, promoted) in the graph; whether young and old
// nodes share one top-level scope (0: "old/n" and "young/n", as models
// have scopes of their own; 1: every node named "n"). Each iteration
// builds 10,000 young nodes in chains of 10, keeps a tenth of the chains,
// and times one minor collection, whose work is the young nodes only.
void BM_CollectYoung(benchmark::State& state) {
  const int64_t old_nodes = state.range(0);
  const bool one_scope = state.range(1) != 0;
  constexpr int64_t kYoung = 10000;
  Graph g;
  std::vector<NodeHandle> old =
      BuildChains(g, old_nodes, 10, one_scope ? "n" : "old/n");
  g.Collect();
  g.Collect();  // survived promote_after (2) collections: old
  for (auto _ : state) {
    std::vector<NodeHandle> young =
        BuildChains(g, kYoung, 10, one_scope ? "n" : "young/n");
    young.resize(young.size() / 10);
    const auto start = std::chrono::steady_clock::now();
    CollectStats s = g.collector().CollectYoung();
    const auto end = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(s);
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
  }
  state.counters["ns_per_young_node"] =
      benchmark::Counter(static_cast<double>(kYoung) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
  state.counters["live_nodes"] = static_cast<double>(g.num_nodes());
}
BENCHMARK(BM_CollectYoung)
    ->ArgsProduct({{0, 100000, 1000000}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

void BM_CollectDeepChain(benchmark::State& state) {
  const int64_t nodes = state.range(0);
  for (auto _ : state) {
    Graph g;
    std::vector<NodeHandle> roots = BuildChains(g, nodes, nodes);
    roots.clear();  // the whole chain becomes garbage
    const auto start = std::chrono::steady_clock::now();
    CollectStats s = g.Collect();
    const auto end = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(s);
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
  }
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(nodes) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}
BENCHMARK(BM_CollectDeepChain)
    ->Arg(1000000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// One node reading every other node: marking from it touches them all.
void BM_CollectWideFanIn(benchmark::State& state) {
  const int64_t nodes = state.range(0);
  for (auto _ : state) {
    Graph g;
    std::vector<NodeHandle> leaves;
    for (int64_t i = 0; i + 1 < nodes; ++i) leaves.push_back(AddNode(g, {}));
    NodeHandle sink = AddNode(g, leaves);
    leaves.clear();
    const auto start = std::chrono::steady_clock::now();
    CollectStats s = g.Collect();
    const auto end = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(s);
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
  }
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(nodes) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}
BENCHMARK(BM_CollectWideFanIn)
    ->Arg(100000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// Reserving `n` live scopes of one base ("dense", "dense_1", ...), as a
// model of n Dense layers does: O(1) each, so the time per scope should not
// grow with n (it was O(n) each when every suffix was probed).
void BM_ReserveScopesOfOneBase(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    Graph g;
    std::vector<ScopeReservation> held;
    held.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) held.push_back(g.ReserveScope("dense"));
    benchmark::DoNotOptimize(held.back().name());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ReserveScopesOfOneBase)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);

// --- Peer benchmarks (issue 17): the shape of bench/peer_shape.h, the same
// work bench/boehm_peer_bench.cc gives Boehm GC.

// The parts every node of the peer shape shares: its op type, attributes
// and output, set once in the spec the build reuses.
NodeSpec PeerSpec() {
  NodeSpec spec;
  spec.op = "NoOp";
  spec.attrs["T"] = DT_FLOAT;
  spec.attrs["transpose_a"] = false;
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {TensorShape{}};
  return spec;
}

// Makes `spec` (from PeerSpec) describe node j of model m of the peer
// shape, reading prev1 and prev2 (the nodes made just before it) where it
// has them, as a user's loop adding many similar nodes spells it: one spec,
// its name and inputs rewritten for each node (Graph::AddNode(const
// NodeSpec&) copies what the node keeps).
void SetPeerNode(NodeSpec& spec, int64_t m, int64_t j, const NodeHandle& prev1,
                 const NodeHandle& prev2) {
  char name[bench::kPeerNameCapacity];
  spec.name = bench::PeerNodeName(m, j, name);
  spec.inputs.clear();
  if (j >= 1) spec.inputs.emplace_back(prev1, 0);
  if (j >= 2) spec.inputs.emplace_back(prev2, 0);
}

// Builds models [first, first + count) of the peer shape; one root each.
absl::StatusOr<std::vector<NodeHandle>> BuildPeerModels(Graph& g, int64_t first,
                                                        int64_t count) {
  std::vector<NodeHandle> roots;
  roots.reserve(static_cast<size_t>(count));
  NodeSpec spec = PeerSpec();
  for (int64_t m = first; m < first + count; ++m) {
    NodeHandle prev1, prev2;
    for (int64_t j = 0; j < bench::kNodesPerModel; ++j) {
      SetPeerNode(spec, m, j, prev1, prev2);
      absl::StatusOr<NodeHandle> node = g.AddNode(spec);
      if (!node.ok()) return node.status();
      prev2 = std::move(prev1);
      prev1 = *std::move(node);
    }
    roots.push_back(std::move(prev1));
  }
  return roots;
}

// The whole peer graph on `g`, or nullopt after failing `state` with why.
std::optional<std::vector<NodeHandle>> BuildPeerGraph(Graph& g,
                                                      benchmark::State& state) {
  absl::StatusOr<std::vector<NodeHandle>> roots =
      BuildPeerModels(g, 0, bench::kPeerModels);
  if (!roots.ok()) {
    state.SkipWithError(std::string(roots.status().message()).c_str());
    return std::nullopt;
  }
  return *std::move(roots);
}

// Arg: percent of the 1M-node graph made garbage. Times Collect() (manual
// time); the build is timed apart, for the creation rate.
void BM_PeerGraphgcCollect(benchmark::State& state) {
  const int64_t garbage_pct = state.range(0);
  double build_seconds = 0;
  int64_t live = 0;
  for (auto _ : state) {
    Graph g;
    const auto build_start = std::chrono::steady_clock::now();
    std::optional<std::vector<NodeHandle>> roots = BuildPeerGraph(g, state);
    build_seconds += bench::SecondsSince(build_start);
    if (!roots.has_value()) return;
    for (int64_t m = 0; m < bench::kPeerModels; ++m) {
      if (bench::PeerModelDropped(m, garbage_pct)) (*roots)[m] = NodeHandle();
    }
    const auto start = std::chrono::steady_clock::now();
    CollectStats s = g.Collect();
    state.SetIterationTime(bench::SecondsSince(start));
    live = s.marked;
    roots->clear();
  }
  bench::ReportPeerCollection(state, live, build_seconds);
}
BENCHMARK(BM_PeerGraphgcCollect)
    ->Arg(50)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// The part of the peer's node creation that is the caller's: rewriting
// the reused spec for each of the 1M nodes (name written, handles copied
// in), without a graph. Every node reads the same two nodes. What
// BM_PeerGraphgcCollect's created_nodes_per_s takes beyond this is
// AddNode's.
void BM_PeerSpecsAlone(benchmark::State& state) {
  Graph g;
  const NodeHandle a = AddNode(g, {});
  const NodeHandle b = AddNode(g, {});
  for (auto _ : state) {
    NodeSpec spec = PeerSpec();
    for (int64_t m = 0; m < bench::kPeerModels; ++m) {
      for (int64_t j = 0; j < bench::kNodesPerModel; ++j) {
        SetPeerNode(spec, m, j, a, b);
        benchmark::DoNotOptimize(spec);
      }
    }
  }
  state.counters["specs_per_s"] =
      benchmark::Counter(static_cast<double>(bench::kPeerNodes),
                         benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PeerSpecsAlone)->Iterations(3)->Unit(benchmark::kMillisecond);

// Resident bytes per live node: process RSS after building the 1M-node
// graph (all live) minus before, over its nodes. Meaningful only as the
// first thing a process does (//bench:all runs it alone:
// --benchmark_filter=BM_PeerGraphgcResident), as memory freed earlier in the
// process would be reused without growing RSS.
void BM_PeerGraphgcResident(benchmark::State& state) {
  for (auto _ : state) {
    const int64_t rss_before_kb = consecutive::ProcessRssKb();
    Graph g;
    std::optional<std::vector<NodeHandle>> roots = BuildPeerGraph(g, state);
    if (!roots.has_value()) return;
    bench::ReportResidentBytes(state, rss_before_kb, g.num_nodes());
  }
}
BENCHMARK(BM_PeerGraphgcResident)->Iterations(1)->Unit(benchmark::kMillisecond);

// Models dropped steadily on a 1M-node graph: the 1M nodes are built and
// promoted (two collections), then each of kSteadyDrops steps drops the
// oldest model, builds a new one and reaches a safe point (MaybeCollect, as
// Fit's steps do). Reports the longest single pause and their sum (issue 17:
// longest <= 5 ms).
void BM_PeerGraphgcSteadyDrops(benchmark::State& state) {
  constexpr int64_t kSteps = bench::kSteadyDrops;
  int64_t longest_ns = 0, total_ns = 0, collections = 0, full = 0;
  for (auto _ : state) {
    Graph g;
    std::optional<std::vector<NodeHandle>> roots = BuildPeerGraph(g, state);
    if (!roots.has_value()) return;
    g.Collect();
    g.Collect();
    const auto start = std::chrono::steady_clock::now();
    for (int64_t step = 0; step < kSteps; ++step) {
      (*roots)[step] = NodeHandle();
      absl::StatusOr<std::vector<NodeHandle>> added =
          BuildPeerModels(g, bench::kPeerModels + step, 1);
      if (!added.ok()) {
        state.SkipWithError(std::string(added.status().message()).c_str());
        return;
      }
      roots->push_back(std::move(added->front()));
      if (std::optional<CollectStats> s = g.collector().MaybeCollect()) {
        longest_ns = std::max(longest_ns, s->pause_ns);
        total_ns += s->pause_ns;
        ++collections;
        if (!s->minor) ++full;
      }
    }
    state.SetIterationTime(bench::SecondsSince(start));
  }
  state.counters["longest_pause_ms"] = static_cast<double>(longest_ns) / 1e6;
  state.counters["pause_ms_total"] = static_cast<double>(total_ns) / 1e6;
  state.counters["collections"] = static_cast<double>(collections);
  state.counters["full_collections"] = static_cast<double>(full);
  state.counters["steps"] = kSteps;
}
BENCHMARK(BM_PeerGraphgcSteadyDrops)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace graphgc

BENCHMARK_MAIN();
