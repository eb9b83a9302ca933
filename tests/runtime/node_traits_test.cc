// Tests of runtime/node_traits.h: records shared by equal parts, kept
// apart by any difference, alive while held, and a table that stays
// bounded.
#include "runtime/node_traits.h"

#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/attr_value.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace {

AttrMap MatMulAttrs() {
  AttrMap attrs;
  attrs["T"] = DT_FLOAT;
  attrs["transpose_a"] = false;
  return attrs;
}

NodeTraits InternMatMul(NodeTraitsTable& table, AttrMap attrs,
                        TensorShape shape = TensorShape{-1, 64}) {
  const DataType types[] = {DT_FLOAT};
  const TensorShape shapes[] = {shape};
  return table.Intern("MatMul", std::move(attrs), types, shapes);
}

TEST(NodeTraitsTest, DefaultTraitsHaveNoOpAttributesOrOutputs) {
  NodeTraits traits;
  EXPECT_EQ(traits.op(), "");
  EXPECT_TRUE(traits.attrs().empty());
  EXPECT_TRUE(traits.output_types().empty());
  EXPECT_TRUE(traits.output_shapes().empty());
}

TEST(NodeTraitsTest, InternedTraitsReadBackAsGiven) {
  NodeTraitsTable table;
  NodeTraits traits = InternMatMul(table, MatMulAttrs());
  EXPECT_EQ(traits.op(), "MatMul");
  ASSERT_EQ(traits.attrs().size(), 2u);
  EXPECT_EQ(GetAttrOr<DataType>(traits.attrs(), "T", DT_INVALID), DT_FLOAT);
  EXPECT_EQ(GetAttrOr<bool>(traits.attrs(), "transpose_a", true), false);
  ASSERT_EQ(traits.output_types().size(), 1u);
  EXPECT_EQ(traits.output_types()[0], DT_FLOAT);
  ASSERT_EQ(traits.output_shapes().size(), 1u);
  EXPECT_EQ(traits.output_shapes()[0], (TensorShape{-1, 64}));
}

TEST(NodeTraitsTest, EqualPartsShareOneRecord) {
  NodeTraitsTable table;
  NodeTraits a = InternMatMul(table, MatMulAttrs());
  NodeTraits b = InternMatMul(table, MatMulAttrs());
  EXPECT_TRUE(NodeTraits::SharedForTesting(a, b));
  EXPECT_EQ(table.size(), 1u);
}

TEST(NodeTraitsTest, InternCopySharesTheRecordOfEqualParts) {
  NodeTraitsTable table;
  NodeTraits a = InternMatMul(table, MatMulAttrs());
  const AttrMap attrs = MatMulAttrs();
  const DataType types[] = {DT_FLOAT};
  const TensorShape shapes[] = {TensorShape{-1, 64}};
  NodeTraits b = table.InternCopy("MatMul", attrs, types, shapes);
  EXPECT_TRUE(NodeTraits::SharedForTesting(a, b));
  EXPECT_EQ(table.size(), 1u);
}

TEST(NodeTraitsTest, InternCopyOfNewPartsReadsBackAsGivenAndKeepsThem) {
  NodeTraitsTable table;
  AttrMap attrs = MatMulAttrs();
  const DataType types[] = {DT_FLOAT};
  const TensorShape shapes[] = {TensorShape{-1, 64}};
  NodeTraits traits = table.InternCopy("MatMul", attrs, types, shapes);
  attrs.clear();  // the record has a copy of its own
  EXPECT_EQ(traits.op(), "MatMul");
  ASSERT_EQ(traits.attrs().size(), 2u);
  EXPECT_EQ(GetAttrOr<DataType>(traits.attrs(), "T", DT_INVALID), DT_FLOAT);
  EXPECT_EQ(traits.output_shapes()[0], (TensorShape{-1, 64}));
  EXPECT_TRUE(
      NodeTraits::SharedForTesting(traits, InternMatMul(table, MatMulAttrs())));
}

TEST(NodeTraitsTest, InternCopyOfATensorAttributeGetsARecordOfItsOwn) {
  NodeTraitsTable table;
  AttrMap attrs;
  attrs["value"] = Tensor::Scalar(2.0f);
  NodeTraits a = table.InternCopy("Const", attrs, {}, {});
  NodeTraits b = table.InternCopy("Const", attrs, {}, {});
  EXPECT_FALSE(NodeTraits::SharedForTesting(a, b));
  EXPECT_EQ(table.size(), 0u);
  absl::StatusOr<Tensor> value = GetAttr<Tensor>(a.attrs(), "value");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(value->data<float>()[0], 2.0f);
  EXPECT_EQ(attrs.size(), 1u);
}

TEST(NodeTraitsTest, AnyDifferentPartGetsARecordOfItsOwn) {
  NodeTraitsTable table;
  NodeTraits base = InternMatMul(table, MatMulAttrs());
  AttrMap other_value = MatMulAttrs();
  other_value["transpose_a"] = true;
  AttrMap other_key = MatMulAttrs();
  other_key["transpose_b"] = false;
  AttrMap other_type = MatMulAttrs();
  other_type["transpose_a"] = int64_t{0};  // an int, not a bool
  const DataType types[] = {DT_FLOAT};
  const TensorShape shapes[] = {TensorShape{-1, 64}};
  const DataType int_types[] = {DT_INT32};
  std::vector<NodeTraits> others;
  others.push_back(InternMatMul(table, other_value));
  others.push_back(InternMatMul(table, other_key));
  others.push_back(InternMatMul(table, other_type));
  others.push_back(InternMatMul(table, MatMulAttrs(), TensorShape{-1, 10}));
  others.push_back(table.Intern("BatchMatMul", MatMulAttrs(), types, shapes));
  others.push_back(table.Intern("MatMul", MatMulAttrs(), int_types, shapes));
  others.push_back(table.Intern("MatMul", MatMulAttrs(), {}, {}));
  for (const NodeTraits& other : others) {
    EXPECT_FALSE(NodeTraits::SharedForTesting(base, other));
  }
  EXPECT_EQ(table.size(), 1 + others.size());
  EXPECT_EQ(GetAttrOr<int64_t>(others[2].attrs(), "transpose_a", -1), 0);
}

TEST(NodeTraitsTest, ZeroAndNegativeZeroAreDifferentAttributes) {
  NodeTraitsTable table;
  AttrMap zero, negative_zero;
  zero["alpha"] = 0.0f;
  negative_zero["alpha"] = -0.0f;
  NodeTraits a = table.Intern("LeakyRelu", zero, {}, {});
  NodeTraits b = table.Intern("LeakyRelu", negative_zero, {}, {});
  EXPECT_FALSE(NodeTraits::SharedForTesting(a, b));
  EXPECT_FALSE(std::signbit(GetAttrOr<float>(a.attrs(), "alpha", 1.0f)));
  EXPECT_TRUE(std::signbit(GetAttrOr<float>(b.attrs(), "alpha", 1.0f)));
}

TEST(NodeTraitsTest, ANaNSharesWithTheSameNaN) {
  NodeTraitsTable table;
  AttrMap nan;
  nan["alpha"] = std::numeric_limits<float>::quiet_NaN();
  nan["list"] = std::vector<float>{std::numeric_limits<float>::quiet_NaN()};
  NodeTraits a = table.Intern("LeakyRelu", nan, {}, {});
  NodeTraits b = table.Intern("LeakyRelu", nan, {}, {});
  EXPECT_TRUE(NodeTraits::SharedForTesting(a, b));
  EXPECT_TRUE(std::isnan(GetAttrOr<float>(b.attrs(), "alpha", 0.0f)));
}

TEST(NodeTraitsTest, ListAndShapeAttributesTakePartInEquality) {
  NodeTraitsTable table;
  AttrMap a, b, c;
  a["strides"] = std::vector<int64_t>{1, 2, 2, 1};
  a["shape"] = TensorShape{3, 3};
  b["strides"] = std::vector<int64_t>{1, 2, 2, 1};
  b["shape"] = TensorShape{3, 3};
  c["strides"] = std::vector<int64_t>{1, 1, 1, 1};
  c["shape"] = TensorShape{3, 3};
  NodeTraits ta = table.Intern("Conv2D", a, {}, {});
  NodeTraits tb = table.Intern("Conv2D", b, {}, {});
  NodeTraits tc = table.Intern("Conv2D", c, {}, {});
  EXPECT_TRUE(NodeTraits::SharedForTesting(ta, tb));
  EXPECT_FALSE(NodeTraits::SharedForTesting(ta, tc));
}

TEST(NodeTraitsTest, AttributesHoldingATensorAreNeverShared) {
  NodeTraitsTable table;
  AttrMap attrs;
  attrs["dtype"] = DT_FLOAT;
  attrs["value"] = Tensor::Scalar(1.0f);
  NodeTraits a = table.Intern("Const", attrs, {}, {});
  NodeTraits b = table.Intern("Const", attrs, {}, {});
  EXPECT_FALSE(NodeTraits::SharedForTesting(a, b));
  EXPECT_EQ(table.size(), 0u);
  absl::StatusOr<Tensor> value = GetAttr<Tensor>(b.attrs(), "value");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(value->data<float>()[0], 1.0f);
}

TEST(NodeTraitsTest, TraitsOutliveTheirTable) {
  std::optional<NodeTraits> traits;
  {
    NodeTraitsTable table;
    traits = InternMatMul(table, MatMulAttrs());
  }
  EXPECT_EQ(traits->op(), "MatMul");
  EXPECT_EQ(GetAttrOr<DataType>(traits->attrs(), "T", DT_INVALID), DT_FLOAT);
}

TEST(NodeTraitsTest, CopiesShareTheRecordAndOutliveTheOriginal) {
  NodeTraitsTable table;
  std::optional<NodeTraits> original = InternMatMul(table, MatMulAttrs());
  NodeTraits copy = *original;
  NodeTraits moved = std::move(copy);
  EXPECT_TRUE(NodeTraits::SharedForTesting(*original, moved));
  original.reset();
  EXPECT_EQ(moved.op(), "MatMul");
}

TEST(NodeTraitsTest, TheTableDropsRecordsNoNodeHoldsOnceItDoubles) {
  NodeTraitsTable table;
  constexpr int kRound = 1000;
  for (int round = 0; round < 10; ++round) {
    std::vector<NodeTraits> held;
    for (int i = 0; i < kRound; ++i) {
      AttrMap attrs;
      attrs["seed"] = int64_t{round * kRound + i};
      held.push_back(table.Intern("RandomUniform", std::move(attrs), {}, {}));
    }
    // At most the live ones plus those of the last round or two.
    EXPECT_LE(table.size(), size_t{4 * kRound}) << "round " << round;
  }
}

TEST(NodeTraitsTest, HeldRecordsSurviveThePruning) {
  NodeTraitsTable table;
  NodeTraits kept = InternMatMul(table, MatMulAttrs());
  for (int i = 0; i < 1000; ++i) {
    AttrMap attrs;
    attrs["seed"] = int64_t{i};
    table.Intern("RandomUniform", std::move(attrs), {}, {});
  }
  EXPECT_LT(table.size(), 1000u);  // pruned on the way
  NodeTraits again = InternMatMul(table, MatMulAttrs());
  EXPECT_TRUE(NodeTraits::SharedForTesting(kept, again));
}

// The record an op type gave last is compared with first: parts that
// differ from it in any one way, or whose op type lands on its entry,
// still get their own record, and going back to an earlier kind finds its
// record again.
TEST(NodeTraitsTest, PartsThatDifferFromTheLastOfTheirOpTypeAreNotShared) {
  NodeTraitsTable table;
  const NodeTraits a = InternMatMul(table, MatMulAttrs());
  AttrMap other = MatMulAttrs();
  other["transpose_a"] = true;
  const NodeTraits b = InternMatMul(table, other);
  EXPECT_FALSE(NodeTraits::SharedForTesting(a, b));
  EXPECT_TRUE(std::get<bool>(b.attrs().at("transpose_a")));
  // One attribute fewer: the same first entries, a different size.
  AttrMap fewer = MatMulAttrs();
  fewer.erase(std::prev(fewer.end()));
  const NodeTraits c = InternMatMul(table, fewer);
  EXPECT_FALSE(NodeTraits::SharedForTesting(a, c));
  EXPECT_EQ(c.attrs().size(), MatMulAttrs().size() - 1);
  // Op types of one length with the same first and last bytes.
  const NodeTraits d = table.Intern("MaxPool", {}, {}, {});
  const NodeTraits e = table.Intern("MinPool", {}, {}, {});
  EXPECT_FALSE(NodeTraits::SharedForTesting(d, e));
  EXPECT_EQ(e.op(), "MinPool");
  // Back to the first kinds.
  EXPECT_TRUE(
      NodeTraits::SharedForTesting(a, InternMatMul(table, MatMulAttrs())));
  EXPECT_TRUE(NodeTraits::SharedForTesting(
      d, table.InternCopy("MaxPool", AttrMap(), {}, {})));
}

// The records Intern compares with first keep none alive: a record no
// node holds is pruned though it was the last of its op type.
TEST(NodeTraitsTest, TheLastRecordOfAnOpTypeIsPrunedWhenNoNodeHoldsIt) {
  NodeTraitsTable table;
  {
    NodeTraits dropped = InternMatMul(table, MatMulAttrs());
    AttrMap attrs;
    attrs["seed"] = int64_t{-1};
    NodeTraits also_dropped = table.Intern("RandomUniform", attrs, {}, {});
  }
  std::vector<NodeTraits> held;
  for (int i = 0; i < 64; ++i) {
    AttrMap attrs;
    attrs["seed"] = int64_t{i};
    held.push_back(table.Intern("RandomUniform", std::move(attrs), {}, {}));
  }
  // The 64th made the table prune: only the held ones are left.
  EXPECT_EQ(table.size(), held.size());
}

TEST(NodeTraitsTest, CopiesMayComeAndGoOnManyThreadsAtOnce) {
  NodeTraitsTable table;
  const NodeTraits shared = InternMatMul(table, MatMulAttrs());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&shared] {
      for (int i = 0; i < 10000; ++i) {
        NodeTraits copy = shared;
        if (copy.attrs().size() != 2) std::abort();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(shared.attrs().size(), 2u);
}

}  // namespace
}  // namespace graphgc
