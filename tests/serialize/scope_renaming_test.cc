#include "serialize/scope_renaming.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "serialize/graph_def.h"
#include "serialize/node_def.pb.h"

namespace graphgc {
namespace {

TEST(LocalizeScopeNames, DropsGraphWideSuffixesAndRenumbersLocally) {
  proto::GraphDef def;
  auto add = [&](const std::string& name, std::vector<std::string> inputs) {
    proto::NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op("Test");
    for (auto& in : inputs) n->add_input(in);
  };
  add("dense_7/kernel", {});
  add("dense_12/kernel", {});
  add("sequential_3/gradients/dense_7/MatMul_grad/MatMul",
      {"dense_7/kernel:0", "^dense_12/kernel"});
  add("input_4", {});
  const ScopeRenaming renaming = LocalizeScopeNames(def);
  EXPECT_EQ(renaming, (ScopeRenaming{{"dense_7", "dense"},
                                     {"dense_12", "dense_1"},
                                     {"sequential_3", "sequential"},
                                     {"input_4", "input"}}));
  EXPECT_EQ(def.node(0).name(), "dense/kernel");
  EXPECT_EQ(def.node(1).name(), "dense_1/kernel");
  EXPECT_EQ(def.node(2).name(),
            "sequential/gradients/dense/MatMul_grad/MatMul");
  EXPECT_EQ(def.node(2).input(0), "dense/kernel:0");
  EXPECT_EQ(def.node(2).input(1), "^dense_1/kernel");
  EXPECT_EQ(def.node(3).name(), "input");
}

TEST(LocalizeScopeNames, LeavesAFreshGraphsNamesAlone) {
  proto::GraphDef def;
  for (const char* name : {"dense/kernel", "dense_1/kernel", "x"}) {
    proto::NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op("Test");
  }
  proto::GraphDef before = def;
  EXPECT_TRUE(LocalizeScopeNames(def).empty());
  EXPECT_EQ(DeterministicBytes(def), DeterministicBytes(before));
}

TEST(RenameScopes, RenamesEveryComponentTheRenamingHolds) {
  const ScopeRenaming renaming = {{"sequential_3", "sequential"},
                                  {"dense_7", "dense"}};
  EXPECT_EQ(RenameScopes("sequential_3/gradients/dense_7/MatMul", renaming),
            "sequential/gradients/dense/MatMul");
  EXPECT_EQ(RenameScopes("dense_70/kernel", renaming), "dense_70/kernel");
  EXPECT_EQ(RenameScopes("dense_7", renaming), "dense");
  EXPECT_EQ(RenameScopes("", renaming), "");
}

TEST(LocalizeScopeNames, RenumbersAUserNamedTrailingSuffixLikeAUniquingOne) {
  proto::GraphDef def;
  for (const char* name : {"block_2/conv", "block_5/conv"}) {
    proto::NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op("Test");
  }
  const ScopeRenaming renaming = LocalizeScopeNames(def);
  EXPECT_EQ(renaming,
            (ScopeRenaming{{"block_2", "block"}, {"block_5", "block_1"}}));
  EXPECT_EQ(def.node(0).name(), "block/conv");
  EXPECT_EQ(def.node(1).name(), "block_1/conv");
}

TEST(RenameScopes, KeepsAnEmptyComponent) {
  EXPECT_EQ(RenameScopes("a//b", {{"a", "x"}}), "x//b");
}

}  // namespace
}  // namespace graphgc
