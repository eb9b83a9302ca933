#include "models/load_weights.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "models/functional.h"
#include "models/layers.h"
#include "models/model_from_json.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

Sequential Mlp(Graph& g, int hidden, const std::string& name = "",
               const std::string& model_name = "") {
  return Sequential::Create(
             {layers::Input({4}),
              layers::Dense(hidden, {.activation = "relu", .name = name}),
              layers::Dense(3)},
             {.name = model_name, .graph = &g})
      .value();
}

bool SameWeights(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape() ||
        std::memcmp(a[i].data<float>().data(), b[i].data<float>().data(),
                    a[i].num_elements() * sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

TEST(LoadWeightsTest, SequentialRoundTripSetsTheSavedWeights) {
  Graph g;
  Sequential saved = Mlp(g, 8);
  Sequential loaded = Mlp(g, 8);
  const std::string path = TestTempPath(".weights.h5");
  ASSERT_TRUE(SaveWeights(saved, path).ok());
  ASSERT_FALSE(SameWeights(saved.GetWeights(), loaded.GetWeights()));
  ASSERT_TRUE(LoadWeights(loaded, path).ok());
  EXPECT_TRUE(SameWeights(saved.GetWeights(), loaded.GetWeights()));
}

TEST(LoadWeightsTest, FunctionalRoundTripSetsTheSavedWeights) {
  Graph g;
  auto make = [&g] {
    KerasTensor x = Input({4});
    KerasTensor h = layers::Dense(5)(x);
    KerasTensor y = layers::Dense(2)(h);
    return Functional::Create({x}, {y}, {.graph = &g}).value();
  };
  Functional saved = make();
  Functional loaded = make();
  const std::string path = TestTempPath(".weights.h5");
  ASSERT_TRUE(SaveWeights(saved, path).ok());
  ASSERT_TRUE(LoadWeights(loaded, path).ok());
  EXPECT_TRUE(SameWeights(saved.GetWeights(), loaded.GetWeights()));
}

TEST(LoadWeightsTest, MismatchedShapeIsRefusedNamingTheLayerAndChangesNothing) {
  Graph g;
  Sequential saved = Mlp(g, 8);
  Sequential other = Mlp(g, 6, "hidden");
  const std::string path = TestTempPath(".weights.h5");
  ASSERT_TRUE(SaveWeights(saved, path).ok());
  const std::vector<Tensor> before = other.GetWeights();
  absl::Status s = LoadWeights(other, path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "layer 'hidden'")) << s;
  EXPECT_TRUE(SameWeights(before, other.GetWeights()));
}

TEST(LoadWeightsTest, ExtraLayerInTheFileIsRefusedAndChangesNothing) {
  Graph g;
  Sequential bigger = Sequential::Create({layers::Input({4}), layers::Dense(8),
                                          layers::Dense(3), layers::Dense(3)},
                                         {.graph = &g})
                          .value();
  Sequential model = Mlp(g, 8);
  const std::string path = TestTempPath(".weights.h5");
  ASSERT_TRUE(SaveWeights(bigger, path).ok());
  const std::vector<Tensor> before = model.GetWeights();
  absl::Status s = LoadWeights(model, path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "Layer count mismatch")) << s;
  EXPECT_TRUE(SameWeights(before, model.GetWeights()));
}

TEST(LoadWeightsTest, MissingFileIsNotFound) {
  Graph g;
  Sequential model = Mlp(g, 8);
  EXPECT_EQ(LoadWeights(model, TestTempPath(".weights.h5")).code(),
            absl::StatusCode::kNotFound);
}

TEST(LoadWeightsTest, NotHdf5IsDataLossAndChangesNothing) {
  Graph g;
  Sequential model = Mlp(g, 8);
  const std::string path = TestTempPath(".weights.h5");
  std::ofstream(path) << "not an HDF5 file";
  const std::vector<Tensor> before = model.GetWeights();
  EXPECT_EQ(LoadWeights(model, path).code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(SameWeights(before, model.GetWeights()));
}

TEST(LoadWeightsTest, FileLargerThanTheModelCanHoldIsRefusedBeforeReading) {
  Graph g;
  Sequential model = Mlp(g, 8);
  const std::string path = TestTempPath(".weights.h5");
  // 8 MiB: more than 4 times the model's 268 bytes plus the metadata margin.
  std::ofstream(path) << std::string(size_t{8} << 20, 'x');
  absl::Status s = LoadWeights(model, path);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

// MaxWeightsFileBytes is the bound LoadWeights reads within: a file of
// that many bytes is read (and refused as not HDF5), one byte more is not.
TEST(LoadWeightsTest, MaxWeightsFileBytesIsTheBoundTheLoadReadsWithin) {
  Graph g;
  Sequential model = Mlp(g, 8);
  absl::StatusOr<int64_t> bound = MaxWeightsFileBytes(model);
  ASSERT_TRUE(bound.ok()) << bound.status();
  // The 268 bytes of weights and three optimizer slots for each, plus
  // 1 MiB and 64 KiB for each of the 3 layers.
  EXPECT_EQ(*bound, 4 * 268 + (1 << 20) + 3 * (64 << 10));
  const std::string path = TestTempPath(".weights.h5");
  std::ofstream(path) << std::string(static_cast<size_t>(*bound), 'x');
  EXPECT_EQ(LoadWeights(model, path).code(), absl::StatusCode::kDataLoss);
  std::ofstream(path) << std::string(static_cast<size_t>(*bound) + 1, 'x');
  EXPECT_EQ(LoadWeights(model, path).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(LoadWeightsTest, MaxWeightsFileBytesOverTheBudgetNamesTheModel) {
  Graph g;
  Sequential model = Mlp(g, 8, "", "tiny");
  absl::StatusOr<int64_t> bound = MaxWeightsFileBytes(model, /*max_bytes=*/64);
  EXPECT_EQ(bound.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(bound.status().message(), "model 'tiny'"))
      << bound.status();
}

TEST(LoadWeightsTest, ModelOverTheBudgetIsRefused) {
  Graph g;
  Sequential model = Mlp(g, 8);
  const std::string path = TestTempPath(".weights.h5");
  ASSERT_TRUE(SaveWeights(model, path).ok());
  absl::Status s = LoadWeights(model, path, /*max_bytes=*/64);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

// A weights file SaveWeights wrote earlier (the committed golden files)
// loads into a model rebuilt from its config as LoadModel reads the
// directory's model.weights.h5.
TEST(LoadWeightsTest, GoldenWeightsFileLoadsAsTheModelDirectory) {
  const std::string dir =
      "tests/models/testdata/save_golden/cnn_sgd_categorical_fit";
  Graph g;
  Sequential saved = LoadModel(dir, {.graph = &g, .compile = false}).value();
  std::ifstream config(dir + "/config.json");
  const std::string json((std::istreambuf_iterator<char>(config)),
                         std::istreambuf_iterator<char>());
  Sequential fresh =
      std::get<Sequential>(ModelFromJson(json, {.graph = &g}).value());
  ASSERT_FALSE(SameWeights(saved.GetWeights(), fresh.GetWeights()));
  absl::Status s = LoadWeights(fresh, dir + "/save_weights.weights.h5");
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(SameWeights(saved.GetWeights(), fresh.GetWeights()));
}

TEST(LoadWeightsTest, DirectoryIsRefused) {
  Graph g;
  Sequential model = Mlp(g, 8);
  const std::string dir = TestTempPath(".weights.h5");
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(LoadWeights(model, dir).ok());
}

}  // namespace
}  // namespace graphgc
