// bench/boehm_peer_bench.cc: Boehm GC (Debian's libgc) on the graph of
// bench/peer_shape.h, the peer of gc_bench's BM_PeerGraphgc* (issue 17).
//
// Each node is what a graph node is: an object holding its name (a copy,
// GC_MALLOC_ATOMIC), an array of its inputs (GC_MALLOC) and an array of its
// two attributes (GC_MALLOC_ATOMIC), each with its key inline, as
// std::string keeps a short one, and its value; the models'
// roots are one GC_MALLOC'd array a global points to. Dropping a model
// clears its root; GC_gcollect() then collects. Boehm sweeps lazily: what
// GC_gcollect() returns after is the mark and the freeing of wholly empty
// blocks; the rest of the sweep is paid by later allocations.
#include <gc/gc.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string_view>

#include "bench/peer_report.h"
#include "bench/peer_shape.h"
#include "benchmark/benchmark.h"
#include "runtime/tensor.h"
#include "tools/consecutive_models_lib.h"

namespace graphgc {
namespace {

// Keys inline, as std::string keeps short ones (graphgc's AttrMap keys).
struct BoehmAttr {
  char key[16];
  int64_t kind;  // kTypeAttr or kBoolAttr
  int64_t value;
};
constexpr int64_t kTypeAttr = 0, kBoolAttr = 1;

struct BoehmNode {
  char* name;
  BoehmNode** inputs;
  BoehmAttr* attrs;
  int32_t num_inputs;
  int32_t num_attrs;
  int32_t output_type;
  int32_t output_rank;
};

// The roots, where Boehm scans them (the program's data segment).
BoehmNode** g_roots = nullptr;

void InitBoehm() {
  static const bool initialized = [] {
    GC_INIT();
    return true;
  }();
  (void)initialized;
}

char* CopyString(std::string_view s) {
  char* p = static_cast<char*>(GC_MALLOC_ATOMIC(s.size() + 1));
  if (p == nullptr) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

// One node as graphgc's AddNode builds it; nullptr when out of memory.
BoehmNode* NewNode(std::string_view name, BoehmNode* in1, BoehmNode* in2) {
  auto* node = static_cast<BoehmNode*>(GC_MALLOC(sizeof(BoehmNode)));
  if (node == nullptr) return nullptr;
  node->name = CopyString(name);
  node->num_inputs = (in1 != nullptr) + (in2 != nullptr);
  node->inputs = nullptr;
  if (node->num_inputs > 0) {
    node->inputs = static_cast<BoehmNode**>(
        GC_MALLOC(sizeof(BoehmNode*) * static_cast<size_t>(node->num_inputs)));
    if (node->inputs == nullptr) return nullptr;
    node->inputs[0] = in1;
    if (in2 != nullptr) node->inputs[1] = in2;
  }
  node->num_attrs = 2;
  node->attrs =
      static_cast<BoehmAttr*>(GC_MALLOC_ATOMIC(sizeof(BoehmAttr) * 2));
  if (node->name == nullptr || node->attrs == nullptr) return nullptr;
  node->attrs[0] = {"T", kTypeAttr, DT_FLOAT};
  node->attrs[1] = {"transpose_a", kBoolAttr, 0};
  node->output_type = DT_FLOAT;
  node->output_rank = 0;
  return node;
}

// Model `model`'s nodes; its last node, or nullptr when out of memory.
BoehmNode* BuildModel(int64_t model) {
  char name[bench::kPeerNameCapacity];
  BoehmNode *prev1 = nullptr, *prev2 = nullptr;
  for (int64_t j = 0; j < bench::kNodesPerModel; ++j) {
    BoehmNode* node = NewNode(bench::PeerNodeName(model, j, name), prev1,
                              j >= 2 ? prev2 : nullptr);
    if (node == nullptr) return nullptr;
    prev2 = prev1;
    prev1 = node;
  }
  return prev1;
}

// g_roots with `capacity` entries, the first kPeerModels of them built.
bool BuildRoots(int64_t capacity) {
  g_roots = static_cast<BoehmNode**>(
      GC_MALLOC(sizeof(BoehmNode*) * static_cast<size_t>(capacity)));
  if (g_roots == nullptr) return false;
  for (int64_t m = 0; m < bench::kPeerModels; ++m) {
    g_roots[m] = BuildModel(m);
    if (g_roots[m] == nullptr) return false;
  }
  return true;
}

void DropRoots() {
  g_roots = nullptr;
  GC_gcollect();
}

// The peer of BM_PeerGraphgcCollect: build (timed apart), drop garbage_pct
// percent of the models, GC_gcollect() (manual time).
void BM_PeerBoehmCollect(benchmark::State& state) {
  InitBoehm();
  const int64_t garbage_pct = state.range(0);
  double build_seconds = 0;
  int64_t live = 0, collections_in_build = 0;
  for (auto _ : state) {
    const GC_word gc_no = GC_get_gc_no();
    const auto build_start = std::chrono::steady_clock::now();
    const bool built = BuildRoots(bench::kPeerModels);
    build_seconds += bench::SecondsSince(build_start);
    collections_in_build += static_cast<int64_t>(GC_get_gc_no() - gc_no);
    if (!built) {
      state.SkipWithError("GC_MALLOC returned null");
      return;
    }
    live = 0;
    for (int64_t m = 0; m < bench::kPeerModels; ++m) {
      if (bench::PeerModelDropped(m, garbage_pct)) {
        g_roots[m] = nullptr;
      } else {
        live += bench::kNodesPerModel;
      }
    }
    const auto start = std::chrono::steady_clock::now();
    GC_gcollect();
    state.SetIterationTime(bench::SecondsSince(start));
    DropRoots();
  }
  bench::ReportPeerCollection(state, live, build_seconds);
  state.counters["collections_in_build"] =
      static_cast<double>(collections_in_build) /
      static_cast<double>(state.iterations());
}
BENCHMARK(BM_PeerBoehmCollect)
    ->Arg(50)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// The peer of BM_PeerGraphgcResident, with the same caveat: run it alone
// (--benchmark_filter=BM_PeerBoehmResident).
void BM_PeerBoehmResident(benchmark::State& state) {
  InitBoehm();
  for (auto _ : state) {
    const int64_t rss_before_kb = consecutive::ProcessRssKb();
    if (!BuildRoots(bench::kPeerModels)) {
      state.SkipWithError("GC_MALLOC returned null");
      return;
    }
    bench::ReportResidentBytes(state, rss_before_kb, bench::kPeerNodes);
    state.counters["heap_bytes_per_live_node"] =
        static_cast<double>(GC_get_heap_size()) /
        static_cast<double>(bench::kPeerNodes);
    DropRoots();
  }
}
BENCHMARK(BM_PeerBoehmResident)->Iterations(1)->Unit(benchmark::kMillisecond);

// Boehm's collections are timed by its own event callback (it runs on the
// collecting thread, with the allocation lock held).
std::chrono::steady_clock::time_point g_pause_start;
int64_t g_longest_pause_ns = 0, g_pause_total_ns = 0, g_pauses = 0;

void OnCollectionEvent(GC_EventType event) {
  if (event == GC_EVENT_START) {
    g_pause_start = std::chrono::steady_clock::now();
  } else if (event == GC_EVENT_END) {
    const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - g_pause_start)
                           .count();
    g_longest_pause_ns = std::max(g_longest_pause_ns, ns);
    g_pause_total_ns += ns;
    ++g_pauses;
  }
}

// The peer of BM_PeerGraphgcSteadyDrops: each of kSteadyDrops steps drops
// the oldest model and allocates a new one; Boehm collects when its heap
// policy says so.
void BM_PeerBoehmSteadyDrops(benchmark::State& state) {
  InitBoehm();
  constexpr int64_t kSteps = bench::kSteadyDrops;
  for (auto _ : state) {
    if (!BuildRoots(bench::kPeerModels + kSteps)) {
      state.SkipWithError("GC_MALLOC returned null");
      return;
    }
    GC_gcollect();
    g_longest_pause_ns = g_pause_total_ns = g_pauses = 0;
    GC_set_on_collection_event(OnCollectionEvent);
    const auto start = std::chrono::steady_clock::now();
    bool ok = true;
    for (int64_t step = 0; step < kSteps && ok; ++step) {
      g_roots[step] = nullptr;
      g_roots[bench::kPeerModels + step] =
          BuildModel(bench::kPeerModels + step);
      ok = g_roots[bench::kPeerModels + step] != nullptr;
    }
    state.SetIterationTime(bench::SecondsSince(start));
    GC_set_on_collection_event(nullptr);
    DropRoots();
    if (!ok) {
      state.SkipWithError("GC_MALLOC returned null");
      return;
    }
  }
  state.counters["longest_pause_ms"] =
      static_cast<double>(g_longest_pause_ns) / 1e6;
  state.counters["pause_ms_total"] =
      static_cast<double>(g_pause_total_ns) / 1e6;
  state.counters["collections"] = static_cast<double>(g_pauses);
  state.counters["steps"] = kSteps;
}
BENCHMARK(BM_PeerBoehmSteadyDrops)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace graphgc
