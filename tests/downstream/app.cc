// A downstream program: builds nodes on graphgc's default graph, drops them
// and checks that a collection sweeps them. Exits non-zero on any surprise.
#include <cstdio>
#include <vector>

#include "gc/handle.h"
#include "runtime/graph.h"

namespace gg = graphgc;

int main() {
  gg::Graph& g = gg::Graph::Default();
  const int64_t before = g.num_nodes();
  {
    std::vector<gg::NodeHandle> held;
    for (int i = 0; i < 100; ++i) {
      gg::NodeSpec spec;
      spec.op = "NoOp";
      spec.name = "downstream/node";
      held.push_back(g.AddNode(std::move(spec)).value());
    }
  }
  gg::CollectStats stats = g.Collect();
  std::printf("downstream: swept %lld nodes, %lld live\n",
              static_cast<long long>(stats.swept),
              static_cast<long long>(g.num_nodes()));
  return stats.swept == 100 && g.num_nodes() == before ? 0 : 1;
}
