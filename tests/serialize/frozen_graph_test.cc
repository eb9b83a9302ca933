#include "serialize/frozen_graph.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "serialize/graph_def.h"

namespace graphgc {
namespace {

const proto::NodeDef* Find(const proto::GraphDef& def,
                           const std::string& name) {
  for (const auto& node : def.node()) {
    if (node.name() == name) return &node;
  }
  return nullptr;
}

// x [-1, 2] @ w [2, 1], with w a variable: what a Dense layer exports.
class FrozenGraphTest : public testing::Test {
 protected:
  void SetUp() override {
    x_ = ops::Placeholder(g_, DT_FLOAT, {-1, 2}, {.name = "x"}).value();
    w_ = ops::VarHandleOp(g_, DT_FLOAT, {2, 1}, {.name = "w"}).value();
    Output read = ops::ReadVariableOp(w_, {.name = "w/Read"}).value();
    y_ = ops::MatMul(x_, read, {.name = "y"}).value();
    def_ = ExportGraphDef({y_}).value();
  }
  Tensor W() const {
    return Tensor::FromData<float>({2, 1}, std::vector<float>{3.f, -1.f})
        .value();
  }

  Graph g_;
  Output x_, w_, y_;
  proto::GraphDef def_;
};

TEST_F(FrozenGraphTest, FoldsTheVariableIntoAConstAndItsReadIntoAnIdentity) {
  auto frozen = FreezeGraphDef(def_, {{"w", W()}});
  ASSERT_TRUE(frozen.ok()) << frozen.status();
  const proto::NodeDef* w = Find(*frozen, "w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->op(), "Const");
  EXPECT_EQ(w->attr().at("dtype").type(), proto::DT_FLOAT);
  EXPECT_EQ(w->attr().at("value").tensor().tensor_content().size(),
            2 * sizeof(float));
  const proto::NodeDef* read = Find(*frozen, "w/Read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->op(), "Identity");
  EXPECT_EQ(read->attr().at("T").type(), proto::DT_FLOAT);
  EXPECT_FALSE(read->attr().contains("dtype"));
  for (const auto& node : frozen->node()) {
    EXPECT_NE(node.op(), "VarHandleOp");
    EXPECT_NE(node.op(), "ReadVariableOp");
  }
}

TEST_F(FrozenGraphTest, KeepsEveryOtherNodeAsItWas) {
  auto frozen = FreezeGraphDef(def_, {{"w", W()}});
  ASSERT_TRUE(frozen.ok()) << frozen.status();
  ASSERT_EQ(frozen->node_size(), def_.node_size());
  for (const char* name : {"x", "y"}) {
    const proto::NodeDef& a = *Find(*frozen, name);
    const proto::NodeDef& b = *Find(def_, name);
    EXPECT_EQ(a.op(), b.op()) << name;
    EXPECT_EQ(a.input_size(), b.input_size()) << name;
    ASSERT_EQ(a.attr().size(), b.attr().size()) << name;
    for (const auto& [key, value] : a.attr()) {
      EXPECT_EQ(value.SerializeAsString(), b.attr().at(key).SerializeAsString())
          << name << " " << key;
    }
  }
}

TEST_F(FrozenGraphTest, TheFrozenGraphRunsWithOnlyItsPlaceholderFed) {
  auto frozen = FreezeGraphDef(def_, {{"w", W()}});
  ASSERT_TRUE(frozen.ok()) << frozen.status();
  Graph fresh;
  auto nodes = ImportGraphDef(*frozen, fresh);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  Output x, y;
  for (size_t i = 0; i < nodes->size(); ++i) {
    if (frozen->node(i).name() == "x") x = Output((*nodes)[i], 0);
    if (frozen->node(i).name() == "y") y = Output((*nodes)[i], 0);
  }
  Session session(fresh);
  auto out = session.Run(
      {{x,
        Tensor::FromData<float>({1, 2}, std::vector<float>{1.f, 2.f}).value()}},
      {y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], 1.f * 3.f + 2.f * -1.f);
}

TEST_F(FrozenGraphTest, AVariableWithoutAValueIsRefusedNamingIt) {
  const absl::Status s = FreezeGraphDef(def_, {}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'w'")) << s;
}

TEST_F(FrozenGraphTest, AValueOfAnotherShapeIsRefused) {
  const absl::Status s =
      FreezeGraphDef(
          def_,
          {{"w", Tensor::FromData<float>({1, 2}, std::vector<float>{1.f, 2.f})
                     .value()}})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'w'")) << s;
}

TEST_F(FrozenGraphTest, AGraphThatAssignsAVariableIsRefused) {
  Output value = ops::Placeholder(g_, DT_FLOAT, {2, 1}, {.name = "v"}).value();
  Output assign = ops::AssignVariableOp(w_, value, {.name = "assign"}).value();
  auto def = ExportGraphDef({y_, assign}).value();
  const absl::Status s = FreezeGraphDef(def, {{"w", W()}}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "'assign'")) << s;
}

}  // namespace
}  // namespace graphgc
