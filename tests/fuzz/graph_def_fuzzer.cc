// tests/fuzz/graph_def_fuzzer.cc
//
// libFuzzer target for ImportGraphDef: bytes -> GraphDef -> import into a
// fresh Graph. Invariants checked (a violation aborts, so libFuzzer reports
// it):
//   - a failed import leaves the graph empty (all or nothing);
//   - a successful import exports (ExportGraphDef of the returned handles)
//     and that export imports again into another fresh graph, with as many
//     nodes as the first export and identical deterministic bytes when
//     exported once more.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/stubs/logging.h"
#include "runtime/graph.h"
#include "serialize/graph.pb.h"
#include "serialize/graph_def.h"

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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphgc::proto::GraphDef def;
  if (!def.ParseFromArray(data, static_cast<int>(size))) return 0;

  graphgc::Graph graph;
  absl::StatusOr<std::vector<graphgc::NodeHandle>> nodes =
      graphgc::ImportGraphDef(def, graph);
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
