// gc/stats.h
//
// CollectStats (one collection) and GcStats (a graph's running totals).
// Plain values; copying one is a snapshot.
#ifndef GRAPHGC_GC_STATS_H_
#define GRAPHGC_GC_STATS_H_

#include <cstdint>

namespace graphgc {

struct CollectStats {
  int64_t marked = 0;    // nodes reached from the roots
  int64_t swept = 0;     // nodes freed
  int64_t pause_ns = 0;  // time the graph was locked for the collection
  bool minor = false;    // young nodes only (see GcPolicy::promote_after)
};

struct GcStats {
  int64_t collections = 0;
  int64_t swept_total = 0;
  int64_t pause_ns_total = 0;
  int64_t last_pause_ns = 0;
  int64_t live_nodes = 0;
  int64_t peak_nodes = 0;
  int64_t minor_collections = 0;  // of `collections`, the minor ones
};

}  // namespace graphgc

#endif  // GRAPHGC_GC_STATS_H_
