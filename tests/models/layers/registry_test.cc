// The layer registry as a program that calls no layer builder sees it: each
// kind's file is linked through the generated list of built-in kinds, not
// through a reference from the program (a static library drops objects
// nothing refers to).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/layers.h"

namespace graphgc {
namespace {

using ::testing::IsSupersetOf;

std::vector<std::string> ClassNames() {
  std::vector<std::string> names;
  for (const layers::LayerKindInfo& kind : layers::RegisteredKinds()) {
    names.push_back(kind.class_name);
  }
  return names;
}

TEST(LayerRegistryTest, HoldsEveryBuiltInKindWithoutABuilderCalled) {
  EXPECT_THAT(ClassNames(),
              IsSupersetOf({"InputLayer", "Dense", "Conv2D", "MaxPooling2D",
                            "Flatten", "Dropout", "BatchNormalization",
                            "Reshape", "Activation", "LeakyReLU"}));
}

TEST(LayerRegistryTest, MakesAKindNoBuilderNamesFromItsConfig) {
  absl::StatusOr<Layer> layer =
      layers::FromConfig("LeakyReLU", R"({"negative_slope": 0.2})");
  ASSERT_TRUE(layer.ok()) << layer.status();
  EXPECT_EQ(layer->kind(), "LeakyReLU");
}

TEST(LayerRegistryTest, RefusesAnUnknownClassNamingTheKnownOnes) {
  absl::StatusOr<Layer> layer = layers::FromConfig("Conv3D", "{}");
  ASSERT_FALSE(layer.ok());
  EXPECT_THAT(std::string(layer.status().message()),
              ::testing::HasSubstr("LeakyReLU"));
}

}  // namespace
}  // namespace graphgc
