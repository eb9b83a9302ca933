// A downstream program: builds nodes on graphgc's default graph from two
// threads while a third collects, drops them and checks that a collection
// sweeps them all. Exits non-zero on any surprise. Run plain and under the
// consumer's own AddressSanitizer and ThreadSanitizer builds.
#include <cstdio>
#include <thread>
#include <vector>

#include "gc/handle.h"
#include "runtime/graph.h"

namespace gg = graphgc;

namespace {

constexpr int kNodesPerThread = 100;

// Adds kNodesPerThread nodes, holds them, then drops them. Returns false if
// any AddNode failed.
bool BuildAndDrop(gg::Graph& g, const char* scope) {
  std::vector<gg::NodeHandle> held;
  for (int i = 0; i < kNodesPerThread; ++i) {
    gg::NodeSpec spec;
    spec.op = "NoOp";
    spec.name = std::string(scope) + "/node";
    auto node = g.AddNode(std::move(spec));
    if (!node.ok()) {
      std::fprintf(stderr, "downstream: %s\n",
                   std::string(node.status().message()).c_str());
      return false;
    }
    held.push_back(*std::move(node));
  }
  return true;
}

}  // namespace

int main() {
  gg::Graph& g = gg::Graph::Default();
  const int64_t before = g.num_nodes();
  bool ok_a = false, ok_b = false;
  std::thread a([&] { ok_a = BuildAndDrop(g, "downstream_a"); });
  std::thread b([&] { ok_b = BuildAndDrop(g, "downstream_b"); });
  std::thread c([&] {
    for (int i = 0; i < 20; ++i) g.Collect();
  });
  a.join();
  b.join();
  c.join();
  g.Collect();
  const gg::GcStats stats = g.gc_stats();
  std::printf("downstream: swept %lld nodes in all, %lld live\n",
              static_cast<long long>(stats.swept_total),
              static_cast<long long>(g.num_nodes()));
  return ok_a && ok_b && stats.swept_total == 2 * kNodesPerThread &&
                 g.num_nodes() == before
             ? 0
             : 1;
}
