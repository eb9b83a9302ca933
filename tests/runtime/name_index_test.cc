#include "runtime/name_index.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "gc/heap.h"
#include "gtest/gtest.h"
#include "runtime/node.h"

namespace graphgc {
namespace {

// A NameIndex and the nodes it points to, named as a graph names them.
class NameIndexTest : public ::testing::Test {
 protected:
  // Adds a node asking for `base`; it gets the name Unique(base) gives.
  Node& Add(absl::string_view base) {
    auto node = std::make_unique<Node>(NodeKey::ForTesting());
    node->name = index_.Unique(base);
    node->base_length = static_cast<uint32_t>(base.size());
    index_.Insert(*node, next_slot_++);
    nodes_.push_back(std::move(node));
    return *nodes_.back();
  }
  // As Add, but through Look and Insert(node, slot, lookup), as
  // Graph::AddNode adds a node whose name is free.
  Node& AddLooked(absl::string_view name) {
    const NameIndex::Lookup lookup = index_.Look(name);
    EXPECT_FALSE(lookup.taken()) << name;
    auto node = std::make_unique<Node>(NodeKey::ForTesting());
    node->name = std::string(name);
    node->base_length = static_cast<uint32_t>(name.size());
    index_.Insert(*node, next_slot_++, lookup);
    nodes_.push_back(std::move(node));
    return *nodes_.back();
  }
  void Erase(const std::vector<Node*>& nodes) {
    std::vector<NodeId> ids;
    for (Node* node : nodes) {
      ids.push_back(NodeId{index_.Find(node->name).value(), 1});
    }
    index_.Erase(ids, [this](uint32_t slot) -> Node& { return *nodes_[slot]; });
  }

  // Declared before the index, so the index goes first.
  std::vector<std::unique_ptr<Node>> nodes_;
  NameIndex index_;
  uint32_t next_slot_ = 0;
};

TEST_F(NameIndexTest, FindsTheSlotOfALiveNodeByName) {
  Add("x");
  Add("dense/MatMul");
  EXPECT_EQ(index_.Find("dense/MatMul"), std::optional<uint32_t>(1));
  EXPECT_TRUE(index_.Contains("x"));
  EXPECT_EQ(index_.Find("dense/BiasAdd"), std::nullopt);
}

TEST_F(NameIndexTest, ALookedUpNameIsTakenExactlyWhileALiveNodeHasIt) {
  Node& x = Add("dense/MatMul");
  EXPECT_TRUE(index_.Look("dense/MatMul").taken());
  EXPECT_FALSE(index_.Look("dense/BiasAdd").taken());  // its scope lives
  EXPECT_FALSE(index_.Look("other/MatMul").taken());   // no such scope
  EXPECT_FALSE(index_.Look("dense").taken());
  Erase({&x});
  EXPECT_FALSE(index_.Look("dense/MatMul").taken());
}

TEST_F(NameIndexTest, ANodeInsertedWithItsLookupIsIndexedAsInsertIndexesIt) {
  Add("dense/MatMul");
  // In a scope that has a group, in one that has none yet, and unscoped.
  Node& bias = AddLooked("dense/BiasAdd");
  Node& other = AddLooked("other/MatMul");
  Node& x = AddLooked("x");
  EXPECT_EQ(index_.Find("dense/BiasAdd"), std::optional<uint32_t>(1));
  EXPECT_EQ(index_.Find("other/MatMul"), std::optional<uint32_t>(2));
  EXPECT_EQ(index_.Find("x"), std::optional<uint32_t>(3));
  EXPECT_TRUE(index_.IsScopeInUse("other"));
  EXPECT_EQ(index_.Unique("x"), "x_1");
  Erase({&bias, &other, &x});
  EXPECT_FALSE(index_.Contains("dense/BiasAdd"));
  EXPECT_FALSE(index_.IsScopeInUse("other"));
  EXPECT_TRUE(index_.Contains("dense/MatMul"));
  EXPECT_EQ(index_.size(), 2u);  // the "dense" group and its one name
}

// Look and Insert try the group they used last before the table of
// groups: a scope whose group died and was made again is the new group's,
// and names alternating between scopes land in their own.
TEST_F(NameIndexTest, AScopeMadeAgainAfterItsGroupDiedIsIndexedInTheNewGroup) {
  Node& a = AddLooked("model/a");
  AddLooked("other/a");
  AddLooked("model/b");
  Erase({&a, &*nodes_[2]});  // the "model" group dies, last used
  EXPECT_FALSE(index_.IsScopeInUse("model"));
  EXPECT_FALSE(index_.Look("model/a").taken());
  AddLooked("model/c");
  EXPECT_TRUE(index_.Look("model/c").taken());
  EXPECT_FALSE(index_.Look("model/a").taken());
  EXPECT_TRUE(index_.Look("other/a").taken());
  EXPECT_EQ(index_.Find("model/c"), std::optional<uint32_t>(3));
  EXPECT_EQ(index_.Find("other/a"), std::optional<uint32_t>(1));
  AddLooked("other/c");
  Add("model/c");  // uniqued in its group
  EXPECT_EQ(nodes_.back()->name, "model/c_1");
  EXPECT_EQ(index_.Find("other/c"), std::optional<uint32_t>(4));
  EXPECT_EQ(index_.Find("model/c_1"), std::optional<uint32_t>(5));
}

TEST_F(NameIndexTest, UniqueIsTheRequestedNameWhenItIsFree) {
  Add("dense/MatMul");
  EXPECT_EQ(index_.Unique("dense/BiasAdd"), "dense/BiasAdd");
}

TEST_F(NameIndexTest, UniqueAppendsTensorFlowSuffixesToATakenName) {
  EXPECT_EQ(Add("dense/MatMul").name, "dense/MatMul");
  EXPECT_EQ(Add("dense/MatMul").name, "dense/MatMul_1");
  EXPECT_EQ(index_.Unique("dense/MatMul"), "dense/MatMul_2");
}

TEST_F(NameIndexTest, UniqueStartsAfterTheHighestSuffixGivenAmongLiveNodes) {
  Add("x");
  Node& x_1 = Add("x");
  Add("x");  // x_2
  Erase({&x_1});
  EXPECT_EQ(index_.Unique("x"), "x_3");
}

TEST_F(NameIndexTest, AnErasedNameIsFreeAgain) {
  Node& x = Add("x");
  Erase({&x});
  EXPECT_FALSE(index_.Contains("x"));
  EXPECT_EQ(index_.Unique("x"), "x");
}

TEST_F(NameIndexTest, ScopeIsInUseWhileANodeLivesUnderIt) {
  Add("a/b/c");
  EXPECT_TRUE(index_.IsScopeInUse("a"));
  EXPECT_TRUE(index_.IsScopeInUse("a/b"));
  EXPECT_FALSE(index_.IsScopeInUse("a/bc"));
  EXPECT_FALSE(index_.IsScopeInUse("b"));
}

TEST_F(NameIndexTest, ReserveScopeHandsOutTheBaseThenItsSuffixes) {
  EXPECT_EQ(index_.ReserveScope("dense", ""), "dense");
  EXPECT_EQ(index_.ReserveScope("dense", ""), "dense_1");
  EXPECT_EQ(index_.ReserveScope("dense", ""), "dense_2");
}

TEST_F(NameIndexTest, ReserveScopeSkipsAScopeALiveNodeIsIn) {
  Add("dense/MatMul");
  EXPECT_EQ(index_.ReserveScope("dense", ""), "dense_1");
}

TEST_F(NameIndexTest, AReleasedScopeIsHandedOutAgainSmallestFirst) {
  index_.ReserveScope("dense", "");
  index_.ReserveScope("dense", "");  // dense_1
  index_.ReserveScope("dense", "");  // dense_2
  index_.ReleaseScope("dense_2");
  index_.ReleaseScope("dense");
  EXPECT_EQ(index_.ReserveScope("dense", ""), "dense");
  EXPECT_EQ(index_.ReserveScope("dense", ""), "dense_2");
}

TEST_F(NameIndexTest, FirstFreeScopeReservesNothing) {
  EXPECT_EQ(index_.FirstFreeScope("dense"), "dense");
  EXPECT_FALSE(index_.IsScopeTaken("dense"));
  EXPECT_EQ(index_.ReserveScope("dense", ""), "dense");
}

TEST_F(NameIndexTest, ReservedScopeOfNamesTheScopeAndItsOwner) {
  index_.ReserveScope("sequential", "Sequential 'sequential'");
  EXPECT_EQ(index_.ReservedScopeOf("sequential/dense/MatMul"),
            std::make_pair(std::string("sequential"),
                           std::string("Sequential 'sequential'")));
  EXPECT_EQ(index_.ReservedScopeOf("sequential_1/dense"), std::nullopt);
}

TEST_F(NameIndexTest, ErasingEveryNodeLeavesNoBookkeeping) {
  Node& a = Add("dense/MatMul");
  Node& b = Add("dense/MatMul");
  Node& c = Add("x");
  ASSERT_GT(index_.size(), 0u);
  Erase({&a, &b, &c});
  EXPECT_EQ(index_.size(), 0u);
}

// Erasing a sixteenth or more of a group's names (and at least 64) sweeps
// its table in one pass instead of a lookup per name.
TEST_F(NameIndexTest, ErasingManyNamesOfAGroupKeepsTheOthers) {
  std::vector<Node*> many;
  for (int i = 0; i < 200; ++i) many.push_back(&Add("m/n"));
  Node& keep = Add("m/keep");
  Erase(std::vector<Node*>(many.begin(), many.begin() + 150));
  EXPECT_FALSE(index_.Find("m/n").has_value());
  EXPECT_FALSE(index_.Find("m/n_149").has_value());
  for (int i = 150; i < 200; ++i) {
    EXPECT_TRUE(index_.Find(many[i]->name).has_value()) << many[i]->name;
  }
  EXPECT_TRUE(index_.Find(keep.name).has_value());
  EXPECT_EQ(index_.Unique("m/n"), "m/n");
  // Uniqued names go on after the highest suffix still live.
  Add("m/n");
  EXPECT_EQ(index_.Unique("m/n"), "m/n_200");
}

TEST_F(NameIndexTest, SweepingABaseOutOfALiveGroupLeavesNoBookkeeping) {
  std::vector<Node*> many;
  for (int i = 0; i < 100; ++i) many.push_back(&Add("m/n"));
  Add("m/keep");
  Erase(many);
  EXPECT_EQ(index_.size(), 2u);  // the group and "m/keep"
  EXPECT_EQ(index_.Unique("m/n"), "m/n");
}

// A sweep of a group's table counts a leaving uniqued name against its
// base from the table entry: none of the leaving nodes is read.
TEST_F(NameIndexTest, SweepingUniquedNamesReadsNoneOfTheirNodes) {
  std::vector<NodeId> ids;
  for (int i = 0; i < 200; ++i) {
    if (i >= 1 && i <= 150) ids.push_back(NodeId{next_slot_, 1});
    Add("m/n");  // m/n, m/n_1, ..., m/n_199
  }
  int reads = 0;
  index_.Erase(ids, [&](uint32_t slot) -> Node& {
    ++reads;
    return *nodes_[slot];
  });
  EXPECT_EQ(reads, 0);
  EXPECT_FALSE(index_.Find("m/n_150").has_value());
  EXPECT_TRUE(index_.Find("m/n_151").has_value());
  EXPECT_EQ(index_.Unique("m/n"), "m/n_200");
}

// The base's entry outlives its uniqued names while the node named the
// base itself lives, and goes when that node is swept.
TEST_F(NameIndexTest, ASweptBaseStaysWhileItsHolderLives) {
  Node& holder = Add("m/n");
  std::vector<Node*> uniqued;
  for (int i = 0; i < 150; ++i) uniqued.push_back(&Add("m/n"));
  std::vector<Node*> others;
  for (int i = 0; i < 100; ++i) others.push_back(&Add(absl::StrCat("m/x", i)));
  Add("m/keep");
  Erase(uniqued);
  EXPECT_EQ(index_.Unique("m/n"), "m/n_151");
  // The group, m/n, the 100 others, m/keep and the base.
  EXPECT_EQ(index_.size(), 104u);
  others.push_back(&holder);
  Erase(others);
  EXPECT_EQ(index_.size(), 2u);  // the group and m/keep
  EXPECT_EQ(index_.Unique("m/n"), "m/n");
}

// The holder swept out with some of its uniqued names: the base stays for
// the others, and uniquing goes on after the highest suffix given.
TEST_F(NameIndexTest, ASweptHolderLeavesTheBaseToItsLiveUniquedNames) {
  std::vector<Node*> nodes;
  for (int i = 0; i < 200; ++i) nodes.push_back(&Add("m/n"));
  Erase(std::vector<Node*>(nodes.begin(), nodes.begin() + 100));
  EXPECT_FALSE(index_.Find("m/n").has_value());
  EXPECT_EQ(index_.Unique("m/n"), "m/n");
  Add("m/n");
  EXPECT_EQ(index_.Unique("m/n"), "m/n_200");
  Erase(std::vector<Node*>(nodes.begin() + 100, nodes.end()));
  EXPECT_EQ(index_.size(), 3u);  // the group, m/n, the base it holds
}

// A base's number, freed when the base goes, is reused by the next base
// of the group, and the names counted in each stay apart.
TEST_F(NameIndexTest, ABaseNumberFreedByOneBaseIsReusedByTheNext) {
  std::vector<Node*> a, b, c;
  for (int i = 0; i < 100; ++i) a.push_back(&Add("m/a"));
  for (int i = 0; i < 100; ++i) b.push_back(&Add("m/b"));
  Erase(a);
  for (int i = 0; i < 100; ++i) c.push_back(&Add("m/c"));
  Erase(std::vector<Node*>(c.begin(), c.begin() + 99));  // m/c_99 lives
  Node& again = Add("m/c");
  EXPECT_EQ(again.name, "m/c");
  EXPECT_EQ(index_.Unique("m/c"), "m/c_100");
  EXPECT_EQ(index_.Unique("m/b"), "m/b_100");
  Erase(b);
  EXPECT_EQ(index_.Unique("m/b"), "m/b");
  Erase({c.back(), &again});
  EXPECT_EQ(index_.size(), 0u);
}

// An entry holds base numbers up to 253; the uniqued names of bases
// numbered past that are counted through their nodes, and a sweep settles
// every base alike.
TEST_F(NameIndexTest, BasesNumberedPastWhatAnEntryHoldsAreSweptToo) {
  std::vector<Node*> nodes;
  for (int k = 0; k < 300; ++k) {
    const std::string base = absl::StrCat("m/b", k);
    nodes.push_back(&Add(base));
    nodes.push_back(&Add(base));  // base_1
  }
  Add("m/keep");
  EXPECT_EQ(index_.Unique("m/b299"), "m/b299_2");
  Erase(nodes);
  EXPECT_EQ(index_.size(), 2u);  // the group and m/keep
  EXPECT_EQ(index_.Unique("m/b299"), "m/b299");
}

TEST_F(NameIndexTest, ReleasingEveryScopeLeavesNoBookkeeping) {
  index_.ReserveScope("dense", "");
  index_.ReserveScope("dense", "");  // dense_1
  ASSERT_GT(index_.size(), 0u);
  index_.ReleaseScope("dense");
  index_.ReleaseScope("dense_1");
  EXPECT_EQ(index_.size(), 0u);
}

// A scope's nodes swept together take their group with them, found by
// their slots: the sweep reads none of the nodes themselves.
TEST_F(NameIndexTest, ErasingAWholeScopeReadsNoneOfItsNodes) {
  std::vector<NodeId> ids;
  for (int i = 0; i < 100; ++i) {
    ids.push_back(NodeId{next_slot_, 1});
    Add("model_1/dense/MatMul");
  }
  Node& keep = Add("model_2/dense/MatMul");
  int reads = 0;
  index_.Erase(ids, [&](uint32_t slot) -> Node& {
    ++reads;
    return *nodes_[slot];
  });
  EXPECT_EQ(reads, 0);
  EXPECT_FALSE(index_.IsScopeInUse("model_1"));
  EXPECT_TRUE(index_.Find(keep.name).has_value());
}

// A slot freed by one scope's node and reused by another's is erased from
// the new node's group.
TEST_F(NameIndexTest, ASlotReusedByAnotherScopeIsErasedFromItsNewGroup) {
  Node& first = Add("a/x");
  const uint32_t slot = index_.Find(first.name).value();
  Erase({&first});
  auto second = std::make_unique<Node>(NodeKey::ForTesting());
  second->name = "b/y";
  second->base_length = 3;
  index_.Insert(*second, slot);
  nodes_[slot] = std::move(second);
  Add("b/z");
  EXPECT_EQ(index_.Find("b/y"), std::optional<uint32_t>(slot));
  Erase({nodes_[slot].get()});
  EXPECT_FALSE(index_.Contains("b/y"));
  EXPECT_TRUE(index_.Contains("b/z"));
  EXPECT_FALSE(index_.IsScopeInUse("a"));
}

// Scopes coming and going reuse the numbers of the ones gone: the index's
// per-group bookkeeping follows the scopes alive, not all there were.
TEST_F(NameIndexTest, ScopesComingAndGoingReuseTheirGroupNumbers) {
  for (int model = 0; model < 1000; ++model) {
    Node& a = Add(absl::StrCat("model_", model, "/dense/MatMul"));
    Node& b = Add(absl::StrCat("model_", model, "/dense/BiasAdd"));
    Erase({&a, &b});
  }
  EXPECT_EQ(index_.GroupNumbersForTesting(), 1u);
  EXPECT_EQ(index_.size(), 0u);
}

// A group whose names all go is handed over unlinked: its scope is free and
// its names are gone before the caller destroys it.
TEST_F(NameIndexTest, AGroupWhoseNamesAllGoIsRetiredUnlinked) {
  Node& a = Add("model/dense/MatMul");
  Node& b = Add("model/dense/BiasAdd");
  Add("x");
  std::vector<NodeId> ids = {NodeId{index_.Find(a.name).value(), 1},
                             NodeId{index_.Find(b.name).value(), 1}};
  std::vector<std::unique_ptr<gc::Object>> retired;
  index_.Erase(
      ids, [this](uint32_t slot) -> Node& { return *nodes_[slot]; },
      [&](std::unique_ptr<gc::Object> group) {
        // Unlinked before it is handed over.
        EXPECT_FALSE(index_.IsScopeInUse("model"));
        retired.push_back(std::move(group));
      });
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_NE(retired[0], nullptr);
  EXPECT_FALSE(index_.Contains("model/dense/MatMul"));
  EXPECT_EQ(index_.Unique("model/dense/MatMul"), "model/dense/MatMul");
  EXPECT_TRUE(index_.Contains("x"));
  EXPECT_EQ(index_.size(), 2u);  // "x" and its group
  retired.clear();               // destroyed after the index let go of it
  EXPECT_EQ(index_.Unique("model/dense/MatMul"), "model/dense/MatMul");
}

TEST_F(NameIndexTest, AGroupThatKeepsANameIsNotRetired) {
  Node& a = Add("model/dense/MatMul");
  Add("model/dense/BiasAdd");
  std::vector<NodeId> ids = {NodeId{index_.Find(a.name).value(), 1}};
  int retired = 0;
  index_.Erase(
      ids, [this](uint32_t slot) -> Node& { return *nodes_[slot]; },
      [&](std::unique_ptr<gc::Object>) { ++retired; });
  EXPECT_EQ(retired, 0);
  EXPECT_TRUE(index_.IsScopeInUse("model"));
  EXPECT_TRUE(index_.Contains("model/dense/BiasAdd"));
}

}  // namespace
}  // namespace graphgc
