// tests/gc/test_graph.h
//
// Helpers for collector tests: nodes built straight through Graph::AddNode
// (no op registry), so the gc tests depend on nothing above the graph, and
// a bare heap object that records its destruction.
#ifndef GRAPHGC_TESTS_GC_TEST_GRAPH_H_
#define GRAPHGC_TESTS_GC_TEST_GRAPH_H_

#include <string>
#include <vector>

#include "runtime/graph.h"

namespace graphgc {
namespace testing {

// A gc::Object that counts its destruction in `*destroyed` and asks to be
// destroyed promptly or lazily (gc/heap.h invariant 5).
class Probe : public gc::Object {
 public:
  explicit Probe(int* destroyed, bool prompt = false)
      : destroyed_(destroyed), prompt_(prompt) {}
  ~Probe() override { ++*destroyed_; }
  bool DestroyPromptly() const override { return prompt_; }

 private:
  int* destroyed_;
  bool prompt_;
};

// A node of op "Test" with one float output, reading `inputs`' output 0.
inline NodeHandle AddTestNode(Graph& g, const std::string& name,
                              const std::vector<NodeHandle>& inputs = {},
                              const std::vector<NodeHandle>& control = {}) {
  NodeSpec spec;
  spec.op = "Test";
  spec.name = name;
  for (const NodeHandle& in : inputs) spec.inputs.emplace_back(in, 0);
  spec.control_inputs = control;
  spec.output_types = {DT_FLOAT};
  spec.output_shapes = {TensorShape{}};
  return g.AddNode(std::move(spec)).value();
}

}  // namespace testing
}  // namespace graphgc

#endif  // GRAPHGC_TESTS_GC_TEST_GRAPH_H_
