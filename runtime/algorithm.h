// runtime/algorithm.h
//
// The graph algorithms graphgc needs in more than one place, written once:
//
//   PostOrderDfs: an iterative depth-first walk that finishes each node
//   after every successor it follows (post-order), with a hook for back
//   edges (cycle detection). With successors = inputs, the finish order is
//   a topological order, inputs before their readers. Graph reachability
//   (Graph::ReachableFrom), a Session's plan walk (exec::WalkSubgraph), the
//   gradients' backward cone (AddGradientsWith) and GraphDef import
//   ordering all run it, each over its own view of a graph.
//
//   IsValidNodeName / ValidateNodeName: TensorFlow's node-name rule, which
//   Graph::AddNode, the op builders and GraphDef import all check.
//
// Example: the finish order of the nodes `root` reaches in an adjacency
// list (each node's successors are its inputs).
//   struct Walk {
//     const std::vector<std::vector<int>>& inputs;
//     std::vector<DfsMark> marks;
//     std::vector<int> order;
//     size_t NumSuccessors(int n) const { return inputs[n].size(); }
//     std::optional<int> Successor(int n, size_t i) const {
//       return inputs[n][i];
//     }
//     DfsMark Discover(int& n) {
//       return std::exchange(marks[n], std::max(marks[n], DfsMark::kOpen));
//     }
//     absl::Status BackEdge(int, int, absl::Span<const DfsFrame<int>>) {
//       return absl::InvalidArgumentError("cycle");
//     }
//     absl::Status Finish(int n) {
//       marks[n] = DfsMark::kDone;
//       order.push_back(n);
//       return absl::OkStatus();
//     }
//   };
//   Walk walk{inputs, std::vector<DfsMark>(inputs.size())};
//   absl::Status s = PostOrderDfs<int, Walk>(walk).Visit(root);
#ifndef GRAPHGC_RUNTIME_ALGORITHM_H_
#define GRAPHGC_RUNTIME_ALGORITHM_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace graphgc {

// Where a node stands in a walk: not reached yet, on the walk's stack (its
// successors are being visited), or finished.
enum class DfsMark : uint8_t { kNew, kOpen, kDone };

// One entry of the walk's stack: a node and how many of its successors
// were looked at.
template <typename Node>
struct DfsFrame {
  Node node;
  size_t next = 0;
};

// PostOrderDfs: the walk. `Visitor` provides, for its `Node` (a small
// value: an index, an id, an id with a cached pointer):
//   size_t NumSuccessors(const Node& n): how many successors n has;
//   std::optional<Node> Successor(const Node& n, size_t i): n's i-th
//     successor, or nullopt when the walk must not follow that edge;
//   DfsMark Discover(Node& n): n's mark before this call; a kNew node
//     becomes kOpen (the visitor records that, and may complete n, e.g.
//     look up a pointer, before it is pushed);
//   absl::Status BackEdge(const Node& from, const Node& to,
//                         absl::Span<const DfsFrame<Node>> stack): `to` is
//     open, so from -> to closes a cycle; `stack` runs from the root to
//     `from`. OK: the edge is ignored and the walk goes on; an error stops
//     the walk and Visit returns it;
//   absl::Status Finish(const Node& n): every successor of n the walk
//     follows is finished; the visitor marks n kDone. An error stops the
//     walk.
// Iterative: the depth of the graph costs heap, not stack (a million-node
// chain is fine). Each node is discovered once per edge and finished once.
//
// Not thread-safe; the visitor's own locking rules apply to the graph.
template <typename Node, typename Visitor>
class PostOrderDfs {
 public:
  explicit PostOrderDfs(Visitor& visitor) : visitor_(visitor) {}

  // Walks from `root` (nothing happens if it is not kNew); the nodes an
  // earlier Visit finished are not visited again.
  absl::Status Visit(Node root) {
    stack_.clear();
    if (visitor_.Discover(root) != DfsMark::kNew) return absl::OkStatus();
    stack_.push_back(DfsFrame<Node>{std::move(root)});
    while (!stack_.empty()) {
      DfsFrame<Node>& top = stack_.back();
      if (top.next < visitor_.NumSuccessors(top.node)) {
        std::optional<Node> next = visitor_.Successor(top.node, top.next++);
        if (!next.has_value()) continue;
        switch (visitor_.Discover(*next)) {
          case DfsMark::kNew:
            stack_.push_back(DfsFrame<Node>{*std::move(next)});
            break;
          case DfsMark::kOpen:
            if (absl::Status s = visitor_.BackEdge(top.node, *next, stack_);
                !s.ok()) {
              return s;
            }
            break;
          case DfsMark::kDone:
            break;
        }
        continue;
      }
      if (absl::Status s = visitor_.Finish(top.node); !s.ok()) return s;
      stack_.pop_back();
    }
    return absl::OkStatus();
  }

  // Visit for each root in order.
  absl::Status VisitAll(absl::Span<const Node> roots) {
    for (const Node& root : roots) {
      if (absl::Status s = Visit(root); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  Visitor& visitor_;
  std::vector<DfsFrame<Node>> stack_;
};

// TensorFlow's node-name rule: [A-Za-z0-9.][A-Za-z0-9_.\-/]*, with no
// empty scope component (no "//", no trailing "/").
bool IsValidNodeName(absl::string_view name);

// OK for a valid name; otherwise InvalidArgument quoting it and the rule.
absl::Status ValidateNodeName(absl::string_view name);

// The rule in words, for callers that word their own error.
inline constexpr absl::string_view kNodeNameRule =
    "use letters, digits and . _ - / (not first), no empty scope";

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_ALGORITHM_H_
