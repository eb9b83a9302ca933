// tests/fuzz/graph_def_fuzzer.cc
//
// libFuzzer target for ImportGraphDef: bytes -> GraphDef (parsed within a
// budget, serialize/parse_budget.h) -> import into a fresh Graph, with a
// tensor budget of kTensorBudget so that one-value-repeated constants stay
// small. Invariants checked (a violation aborts, so libFuzzer reports it):
//   - a parsed GraphDef uses no more memory than its bound;
//   - a failed import leaves the graph empty (all or nothing);
//   - a successful import exports (ExportGraphDef of the returned handles)
//     and that export imports again into another fresh graph, with as many
//     nodes as the first export and identical deterministic bytes when
//     exported once more.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/stubs/logging.h"
#include "runtime/graph.h"
#include "serialize/graph.pb.h"
#include "serialize/graph_def.h"
#include "serialize/parse_budget.h"

namespace {

void Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "graph_def_fuzzer: %s: %s\n", what,
               status.ToString().c_str());
  std::abort();
}

}  // namespace

// Protobuf logs every malformed UTF-8 string it parses; silence it so the
// fuzzer's output stays readable (and fast).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

// The tensors one import may build: far under run_fuzzers.sh's allocation
// limit for this target.
constexpr int64_t kTensorBudget = int64_t{64} << 20;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphgc::proto::GraphDef def;
  uint64_t bound = 0;
  if (!graphgc::ParseWithinBudget(
           std::string_view(reinterpret_cast<const char*>(data), size),
           uint64_t{64} << 20, &def, &bound)
           .ok()) {
    return 0;
  }
  if (def.SpaceUsedLong() > bound) {
    std::fprintf(stderr,
                 "graph_def_fuzzer: GraphDef uses %zu bytes, over its bound "
                 "%llu\n",
                 def.SpaceUsedLong(), static_cast<unsigned long long>(bound));
    std::abort();
  }

  graphgc::Graph graph;
  absl::StatusOr<std::vector<graphgc::NodeHandle>> nodes =
      graphgc::ImportGraphDef(def, graph, {.max_tensor_bytes = kTensorBudget});
  if (!nodes.ok()) {
    if (graph.num_nodes() != 0) {
      std::fprintf(stderr, "graph_def_fuzzer: failed import left %lld nodes\n",
                   static_cast<long long>(graph.num_nodes()));
      std::abort();
    }
    return 0;
  }

  absl::StatusOr<graphgc::proto::GraphDef> exported =
      graphgc::ExportGraphDef(*nodes);
  if (!exported.ok())
    Fail("export of an imported graph failed", exported.status());

  graphgc::Graph copy;
  absl::StatusOr<std::vector<graphgc::NodeHandle>> again =
      graphgc::ImportGraphDef(*exported, copy);
  if (!again.ok()) Fail("re-import of an export failed", again.status());
  if (static_cast<int>(again->size()) != exported->node_size()) {
    std::fprintf(stderr,
                 "graph_def_fuzzer: re-import gave %zu nodes, export "
                 "had %d\n",
                 again->size(), exported->node_size());
    std::abort();
  }
  absl::StatusOr<graphgc::proto::GraphDef> exported2 =
      graphgc::ExportGraphDef(*again);
  if (!exported2.ok()) Fail("second export failed", exported2.status());
  if (graphgc::DeterministicBytes(*exported) !=
      graphgc::DeterministicBytes(*exported2)) {
    std::fprintf(stderr,
                 "graph_def_fuzzer: export -> import -> export is "
                 "not a fixed point\n");
    std::abort();
  }
  return 0;
}
