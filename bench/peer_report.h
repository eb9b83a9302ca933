// bench/peer_report.h
//
// What graphgc's and Boehm GC's peer benchmarks (bench/peer_shape.h) both
// report, under the same counter names, so //bench:all can set them side by
// side.
#ifndef GRAPHGC_BENCH_PEER_REPORT_H_
#define GRAPHGC_BENCH_PEER_REPORT_H_

#include <chrono>
#include <cstdint>

#include "benchmark/benchmark.h"

namespace graphgc::bench {

double SecondsSince(std::chrono::steady_clock::time_point start);

// The counters of a collection benchmark whose iterations each built the
// kPeerNodes-node graph in build_seconds in all and left `live` nodes:
// ns_per_node and ns_per_live_node (the manual time of one collection over
// the graph's nodes, and over its live ones), live_nodes and
// created_nodes_per_s.
void ReportPeerCollection(benchmark::State& state, int64_t live,
                          double build_seconds);

// The counters of a resident-bytes benchmark that built `live` nodes since
// it read consecutive::ProcessRssKb() as `rss_before_kb`:
// bytes_per_live_node (the process's resident growth since, over them) and
// live_nodes.
void ReportResidentBytes(benchmark::State& state, int64_t rss_before_kb,
                         int64_t live);

}  // namespace graphgc::bench

#endif  // GRAPHGC_BENCH_PEER_REPORT_H_
