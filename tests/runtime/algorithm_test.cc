#include "runtime/algorithm.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace graphgc {
namespace {

// A walk over an adjacency list: node n's successors are inputs[n]; a
// successor listed as -1 is an edge the walk must not follow.
struct ListWalk {
  const std::vector<std::vector<int>>& inputs;
  std::vector<DfsMark> marks = std::vector<DfsMark>(inputs.size());
  std::vector<int> order;
  std::vector<std::vector<int>> cycles;  // the stack at each back edge
  bool stop_at_cycle = false;

  size_t NumSuccessors(int n) const { return inputs[n].size(); }
  std::optional<int> Successor(int n, size_t i) const {
    if (inputs[n][i] < 0) return std::nullopt;
    return inputs[n][i];
  }
  DfsMark Discover(int& n) {
    const DfsMark before = marks[n];
    if (before == DfsMark::kNew) marks[n] = DfsMark::kOpen;
    return before;
  }
  absl::Status BackEdge(int from, int to, absl::Span<const DfsFrame<int>> s) {
    std::vector<int> path;
    for (const DfsFrame<int>& f : s) path.push_back(f.node);
    path.push_back(to);
    cycles.push_back(path);
    EXPECT_EQ(s.back().node, from);
    if (stop_at_cycle) return absl::InvalidArgumentError("cycle");
    return absl::OkStatus();
  }
  absl::Status Finish(int n) {
    marks[n] = DfsMark::kDone;
    order.push_back(n);
    return absl::OkStatus();
  }
};

TEST(PostOrderDfs, FinishesEveryInputBeforeItsReader) {
  // 0 reads 1 and 2; 1 reads 3; 2 reads 3.
  const std::vector<std::vector<int>> inputs = {{1, 2}, {3}, {3}, {}};
  ListWalk walk{inputs};
  ASSERT_TRUE((PostOrderDfs<int, ListWalk>(walk).Visit(0).ok()));
  EXPECT_EQ(walk.order, (std::vector<int>{3, 1, 2, 0}));
}

TEST(PostOrderDfs, FinishesANodeReachedTwiceOnce) {
  const std::vector<std::vector<int>> inputs = {{1, 1, 2}, {2}, {}};
  ListWalk walk{inputs};
  PostOrderDfs<int, ListWalk> dfs(walk);
  ASSERT_TRUE(dfs.VisitAll(std::vector<int>{0, 1, 2}).ok());
  EXPECT_EQ(walk.order, (std::vector<int>{2, 1, 0}));
}

TEST(PostOrderDfs, VisitsOnlyWhatTheRootsReach) {
  const std::vector<std::vector<int>> inputs = {{1}, {}, {0}};
  ListWalk walk{inputs};
  ASSERT_TRUE((PostOrderDfs<int, ListWalk>(walk).Visit(0).ok()));
  EXPECT_EQ(walk.order, (std::vector<int>{1, 0}));
  EXPECT_EQ(walk.marks[2], DfsMark::kNew);
}

TEST(PostOrderDfs, DoesNotFollowAnEdgeTheVisitorWithholds) {
  const std::vector<std::vector<int>> inputs = {{-1, 1}, {}};
  ListWalk walk{inputs};
  ASSERT_TRUE((PostOrderDfs<int, ListWalk>(walk).Visit(0).ok()));
  EXPECT_EQ(walk.order, (std::vector<int>{1, 0}));
}

TEST(PostOrderDfs, ReportsABackEdgeWithThePathFromTheRoot) {
  // 0 -> 1 -> 2 -> 1: a cycle through 1 and 2.
  const std::vector<std::vector<int>> inputs = {{1}, {2}, {1}};
  ListWalk walk{inputs};
  ASSERT_TRUE((PostOrderDfs<int, ListWalk>(walk).Visit(0).ok()));
  EXPECT_EQ(walk.cycles, (std::vector<std::vector<int>>{{0, 1, 2, 1}}));
  EXPECT_EQ(walk.order, (std::vector<int>{2, 1, 0}));  // the edge ignored
}

TEST(PostOrderDfs, StopsWithTheBackEdgeHooksError) {
  const std::vector<std::vector<int>> inputs = {{1}, {0}};
  ListWalk walk{inputs};
  walk.stop_at_cycle = true;
  absl::Status s = PostOrderDfs<int, ListWalk>(walk).Visit(0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(walk.order.empty());
}

TEST(PostOrderDfs, WalksAMillionNodeChainWithoutRecursion) {
  constexpr int kN = 1000000;
  std::vector<std::vector<int>> inputs(kN);
  for (int i = 0; i + 1 < kN; ++i) inputs[i] = {i + 1};
  ListWalk walk{inputs};
  ASSERT_TRUE((PostOrderDfs<int, ListWalk>(walk).Visit(0).ok()));
  ASSERT_EQ(walk.order.size(), static_cast<size_t>(kN));
  EXPECT_EQ(walk.order.front(), kN - 1);
  EXPECT_EQ(walk.order.back(), 0);
}

TEST(NodeNameRule, AcceptsTensorFlowNames) {
  for (const char* name :
       {"x", "dense_1/MatMul", ".hidden", "0", "a-b.c/d_e"}) {
    EXPECT_TRUE(IsValidNodeName(name)) << name;
    EXPECT_TRUE(ValidateNodeName(name).ok()) << name;
  }
}

TEST(NodeNameRule, RefusesABadFirstCharacterAnEmptyScopeOrAStrayCharacter) {
  for (const char* name : {"_x", "-x", "/x", "a//b", "a/", "a b", "a:0"}) {
    EXPECT_FALSE(IsValidNodeName(name)) << name;
  }
}

// The rule as TensorFlow's regular expression spells it, a byte at a time.
bool ReferenceRule(absl::string_view name) {
  auto first_ok = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '.';
  };
  auto rest_ok = [&](char c) {
    return first_ok(c) || c == '_' || c == '-' || c == '/';
  };
  if (name.empty() || !first_ok(name[0]) || name.back() == '/') return false;
  for (size_t i = 1; i < name.size(); ++i) {
    if (!rest_ok(name[i]) || (name[i] == '/' && name[i - 1] == '/')) {
      return false;
    }
  }
  return true;
}

TEST(NodeNameRule, AgreesWithTheRuleOnShortNames) {
  std::string name;
  for (int a = 0; a < 256; ++a) {
    name.assign(1, static_cast<char>(a));
    ASSERT_EQ(IsValidNodeName(name), ReferenceRule(name)) << a;
    for (int b = 0; b < 256; ++b) {
      name.assign({static_cast<char>(a), static_cast<char>(b)});
      ASSERT_EQ(IsValidNodeName(name), ReferenceRule(name)) << a << " " << b;
    }
  }
  // Three and four bytes over the classes that matter: each class's
  // bytes, a high byte, and the bytes next to the ranges' ends.
  const std::string bytes = std::string("aZ09._-/ :@[`{\x7f") + '\xe9' + '\0';
  for (char a : bytes) {
    for (char b : bytes) {
      for (char c : bytes) {
        name.assign({a, b, c});
        ASSERT_EQ(IsValidNodeName(name), ReferenceRule(name)) << name;
        for (char d : bytes) {
          name.assign({a, b, c, d});
          ASSERT_EQ(IsValidNodeName(name), ReferenceRule(name)) << name;
        }
      }
    }
  }
}

TEST(NodeNameRule, ValidateNamesTheNameAndTheRule) {
  absl::Status s = ValidateNodeName("a//b");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'a//b'")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), kNodeNameRule)) << s;
  EXPECT_EQ(ValidateNodeName("").message(), "empty node name");
}

}  // namespace
}  // namespace graphgc
