// bench/peer_shape.h
//
// The graph gc_bench builds twice, once through graphgc's public API and
// once with Boehm GC's GC_MALLOC (issue 17: the collector beside a peer, on
// the same work). It is made of models of kNodesPerModel nodes; node j of a
// model reads nodes j-1 and j-2 of the same model (nodes 0 and 1 read what
// there is), is named "model_<m>/dense/MatMul_<j>" (one top-level scope per
// model, names of the seed model's length) and carries the two attributes a
// seed MatMul carries most of: "T" (a type) and "transpose_a" (a bool). Each
// model has one root, on its last node, which reaches all of it. Pure
// functions: thread-safe.
#ifndef GRAPHGC_BENCH_PEER_SHAPE_H_
#define GRAPHGC_BENCH_PEER_SHAPE_H_

#include <cstdint>
#include <string_view>

namespace graphgc::bench {

inline constexpr int64_t kNodesPerModel = 100;
// 1,000,000 nodes: 10,000 models.
inline constexpr int64_t kPeerModels = 10'000;
inline constexpr int64_t kPeerNodes = kPeerModels * kNodesPerModel;
// Models dropped (and as many built) one by one by the steady-drop
// benchmarks: as many as the graph holds, so the graph is replaced once and
// graphgc's policy (a full collection once the nodes created since the last
// one reach the live graph's size) runs its full collection too.
inline constexpr int64_t kSteadyDrops = kPeerModels;

// Room for any name PeerNodeName writes, its NUL included.
inline constexpr int kPeerNameCapacity = 64;

// Writes node `node`'s name of model `model` into `buffer` (NUL-terminated)
// and returns it (without the NUL).
std::string_view PeerNodeName(int64_t model, int64_t node,
                              char (&buffer)[kPeerNameCapacity]);

// Whether model `model` is one of those dropped to make `garbage_pct`
// percent of the graph garbage: garbage_pct of every 100 consecutive models,
// spread over the graph.
bool PeerModelDropped(int64_t model, int64_t garbage_pct);

}  // namespace graphgc::bench

#endif  // GRAPHGC_BENCH_PEER_SHAPE_H_
