#include "models/model_from_json.h"

#include <string>
#include <variant>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/functional.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving.h"
#include "models/sequential.h"

namespace graphgc {
namespace {

TEST(ModelFromJsonTest, SequentialConfigRebuildsTheSameConfig) {
  Graph g;
  Sequential model =
      Sequential::Create(
          {layers::Input({4}), layers::Dense(8, {.activation = "relu"}),
           layers::Dense(3)},
          {.name = "mlp", .graph = &g})
          .value();
  const std::string json = ModelToJson(model).value();
  // A graph of its own, where no name is taken.
  Graph fresh;
  absl::StatusOr<LoadedModel> copy = ModelFromJson(json, {.graph = &fresh});
  ASSERT_TRUE(copy.ok()) << copy.status();
  ASSERT_TRUE(std::holds_alternative<Sequential>(*copy));
  EXPECT_EQ(ModelToJson(std::get<Sequential>(*copy)).value(), json);
}

TEST(ModelFromJsonTest, CompileConfigCompilesTheModel) {
  Graph g;
  Sequential model =
      Sequential::Create({layers::Input({4}), layers::Dense(3)}, {.graph = &g})
          .value();
  ASSERT_TRUE(model
                  .Compile({.optimizer = optimizers::Adam(),
                            .loss = losses::MeanSquaredError()})
                  .ok());
  absl::StatusOr<LoadedModel> copy =
      ModelFromJson(ModelToJson(model).value(), {.graph = &g});
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_TRUE(std::get<Sequential>(*copy).compiled());
}

TEST(ModelFromJsonTest, FunctionalConfigGivesAFunctional) {
  Graph g;
  KerasTensor x = Input({4});
  KerasTensor y = layers::Dense(2)(x);
  Functional model = Functional::Create({x}, {y}, {.graph = &g}).value();
  const std::string json = ModelToJson(model).value();
  // A graph of its own, where no name is taken.
  Graph fresh;
  absl::StatusOr<LoadedModel> copy = ModelFromJson(json, {.graph = &fresh});
  ASSERT_TRUE(copy.ok()) << copy.status();
  ASSERT_TRUE(std::holds_alternative<Functional>(*copy));
  EXPECT_EQ(ModelToJson(std::get<Functional>(*copy)).value(), json);
}

TEST(ModelFromJsonTest, NotJsonIsInvalidArgumentNamingTheText) {
  absl::StatusOr<LoadedModel> m = ModelFromJson("{", {}, "my.json");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(m.status().message(), "my.json"));
}

TEST(ModelFromJsonTest, WeightsOverTheBudgetAreRefusedBeforeBuilding) {
  Graph g;
  Sequential model =
      Sequential::Create({layers::Input({400}), layers::Dense(400)},
                         {.graph = &g})
          .value();
  absl::StatusOr<LoadedModel> m = ModelFromJson(
      ModelToJson(model).value(), {.graph = &g, .max_bytes = 1024});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace graphgc
