// bench/peer_report.cc
#include "bench/peer_report.h"

#include "bench/peer_shape.h"
#include "tools/consecutive_models_lib.h"

namespace graphgc::bench {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

void ReportPeerCollection(benchmark::State& state, int64_t live,
                          double build_seconds) {
  const auto kPerItem = benchmark::Counter::kIsIterationInvariantRate |
                        benchmark::Counter::kInvert;
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(kPeerNodes) * 1e-9, kPerItem);
  state.counters["ns_per_live_node"] =
      benchmark::Counter(static_cast<double>(live) * 1e-9, kPerItem);
  state.counters["live_nodes"] = static_cast<double>(live);
  state.counters["created_nodes_per_s"] =
      static_cast<double>(kPeerNodes) *
      static_cast<double>(state.iterations()) / build_seconds;
}

void ReportResidentBytes(benchmark::State& state, int64_t rss_before_kb,
                         int64_t live) {
  const int64_t rss_after_kb = consecutive::ProcessRssKb();
  state.counters["bytes_per_live_node"] =
      static_cast<double>(rss_after_kb - rss_before_kb) * 1024 /
      static_cast<double>(live);
  state.counters["live_nodes"] = static_cast<double>(live);
}

}  // namespace graphgc::bench
