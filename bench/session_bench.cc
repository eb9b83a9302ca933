// bench/session_bench.cc
//
// Session::Run dispatch overhead. BM_Chain runs a chain of N trivial
// Identity nodes (one float scalar passed along), so the time is the
// executor's own: ns_per_node is the cost per node. BM_ChainAmongUnrelated
// runs the same chain with U unrelated nodes in the graph, half of them
// consumers of the chain's nodes; its ns_per_node should match BM_Chain's.
// BM_SingleNode is the fixed cost of one Run (plan lookup, pin, unpin).
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/graph.h"
#include "runtime/op_def.h"
#include "runtime/session.h"

namespace graphgc {
namespace {

const OpDef& ConstDef() {
  static const OpDef* def = new OpDef{
      .type = "Const", .kernel = [](OpKernelContext& c) {
        c.set_output(0, std::get<Tensor>(c.attrs().at("value")));
        return absl::OkStatus();
      }};
  return *def;
}

const OpDef& IdentityDef() {
  static const OpDef* def = new OpDef{
      .type = "Identity", .kernel = [](OpKernelContext& c) {
        c.set_output(0, c.input(0));
        return absl::OkStatus();
      }};
  return *def;
}

Output Const(Graph& g) {
  NodeSpec spec;
  spec.op = "Const";
  spec.op_def = &ConstDef();
  spec.attrs["value"] = Tensor::Scalar<float>(1.f);
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {TensorShape{}};
  return Output(g.AddNode(std::move(spec)).value(), 0);
}

Output Identity(const Output& x) {
  NodeSpec spec;
  spec.op = "Identity";
  spec.op_def = &IdentityDef();
  spec.inputs = {x};
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {TensorShape{}};
  return Output(x.graph()->AddNode(std::move(spec)).value(), 0);
}

void RunChain(benchmark::State& state, int64_t nodes, int64_t unrelated) {
  Graph g;
  std::vector<Output> chain{Const(g)};
  for (int64_t i = 1; i < nodes; ++i) chain.push_back(Identity(chain.back()));
  std::vector<Output> keep;
  for (int64_t i = 0; i < unrelated; ++i) {
    keep.push_back(i % 2 ? Identity(chain[i % nodes]) : Const(g));
  }
  {
    Session session(g);
    const std::vector<Output> fetches{chain.back()};
    if (!session.Run({}, fetches).ok()) state.SkipWithError("run failed");
    for (auto _ : state) {
      auto out = session.Run({}, fetches);
      benchmark::DoNotOptimize(out);
    }
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["graph_nodes"] = static_cast<double>(g.num_nodes());
  // Seconds per node in JSON (kInvert of a per-node rate); ns on the console.
  state.counters["s_per_node"] = benchmark::Counter(
      static_cast<double>(nodes),
      benchmark::Counter::kIsIterationInvariantRate |
          benchmark::Counter::kInvert);
  keep.clear();
  chain.clear();
}

void BM_Chain(benchmark::State& state) {
  RunChain(state, state.range(0), 0);
}
BENCHMARK(BM_Chain)->Arg(100)->Arg(1000)->Arg(10000);

void BM_ChainAmongUnrelated(benchmark::State& state) {
  RunChain(state, state.range(0), state.range(1));
}
BENCHMARK(BM_ChainAmongUnrelated)
    ->Args({1000, 0})
    ->Args({1000, 10000})
    ->Args({1000, 100000});

void BM_SingleNode(benchmark::State& state) {
  RunChain(state, 1, state.range(0));
}
BENCHMARK(BM_SingleNode)->Arg(0)->Arg(100000);

}  // namespace
}  // namespace graphgc
