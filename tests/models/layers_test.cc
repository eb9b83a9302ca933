#include "models/layers.h"

#include <utility>

#include "gtest/gtest.h"
#include "models/sequential.h"
#include "runtime/graph.h"

namespace graphgc {
namespace {

TEST(Layer, AMovedFromLayerIsEmpty) {
  Layer dense = layers::Dense(3, {.name = "out"});
  Layer taken = std::move(dense);
  EXPECT_EQ(dense.kind(), "");
  EXPECT_EQ(dense.name(), "");
  EXPECT_FALSE(dense.built());
  EXPECT_EQ(dense.units(), 0);
  EXPECT_FALSE(dense == taken);
  EXPECT_EQ(taken.kind(), "Dense");
  EXPECT_EQ(taken.name(), "out");
  EXPECT_EQ(taken.units(), 3);
}

TEST(Layer, CreateRefusesAMovedFromLayer) {
  Graph g;
  Layer dense = layers::Dense(3);
  Layer taken = std::move(dense);
  absl::StatusOr<Sequential> m =
      Sequential::Create({layers::Input({4}), dense}, {.graph = &g});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("layer 1 is empty"), std::string::npos)
      << m.status();
  EXPECT_TRUE(
      Sequential::Create({layers::Input({4}), taken}, {.graph = &g}).ok());
}

}  // namespace
}  // namespace graphgc
