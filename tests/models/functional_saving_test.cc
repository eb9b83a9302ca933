// models/saving.h for functional models: Functional::Save writes Keras 3's
// Functional config and weights layout, LoadFunctional and LoadAnyModel
// read it (and a file Keras 3 writes) back, the reader refuses hostile
// graphs, and the callbacks that save work on a functional model.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/functional.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving.h"
#include "nlohmann/json.hpp"
#include "serialize/event.pb.h"
#include "serialize/event_file.h"
#include "serialize/keras_weights.h"
#include "serialize/summary.pb.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using ::testing::HasSubstr;

Tensor X() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xs(32 * 4);
  for (float& v : xs) v = u(rng);
  return Tensor::FromData<float>({32, 4}, xs).value();
}

Tensor Y() {
  std::vector<int32_t> ys(32);
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<int32_t>(i % 2);
  return Tensor::FromData<int32_t>({32}, ys).value();
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data<float>().data(), b.data<float>().data(),
                     a.num_elements() * sizeof(float)) == 0;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

class FunctionalSavingTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = TestTempPath(); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // x -> shared -> shared (a layer called twice) -> Add of both calls and
  // x -> Dense(2, softmax): a node_index 1 and a merge layer's list;
  // compiled and trained one epoch.
  Functional Model(Graph& g) {
    KerasTensor x = Input({4}, "x");
    Layer shared = layers::Dense(4, {.activation = "relu", .name = "shared"});
    KerasTensor a = shared(x);
    KerasTensor b = shared(a);
    KerasTensor s = layers::Add({"sum"})({a, b, x});
    KerasTensor y =
        layers::Dense(2, {.activation = "softmax", .name = "out"})(s);
    Functional m =
        Functional::Create({x}, {y}, {.name = "residual", .graph = &g}).value();
    EXPECT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                           .loss = losses::SparseCategoricalCrossentropy(),
                           .metrics = {"accuracy"}})
                    .ok());
    EXPECT_TRUE(m.Fit(X(), Y(), {.verbose = 0}).ok());
    return m;
  }

  std::string dir_;
};

TEST_F(FunctionalSavingTest, SaveThenLoadGivesTheSamePredictionsAndWeights) {
  Graph g;
  Functional m = Model(g);
  ASSERT_TRUE(m.Save(dir_).ok());
  Graph other;
  absl::StatusOr<Functional> loaded = LoadFunctional(dir_, {.graph = &other});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->compiled());
  EXPECT_EQ(loaded->name(), "residual");
  ASSERT_EQ(loaded->layers().size(), m.layers().size());
  const std::vector<Tensor> want = m.GetWeights();
  const std::vector<Tensor> got = loaded->GetWeights();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(SameBits(got[i], want[i])) << "weight " << i;
  }
  EXPECT_TRUE(SameBits(loaded->Predict(X()).value(), m.Predict(X()).value()));
  // Compiled with the saved settings: it trains on.
  EXPECT_TRUE(loaded->Fit(X(), Y(), {.verbose = 0}).ok());
}

TEST_F(FunctionalSavingTest, ConfigIsKerasThreesFunctionalGraph) {
  Graph g;
  Functional m = Model(g);
  ASSERT_TRUE(m.Save(dir_).ok());
  const Json root = Json::parse(ReadFileBytes(dir_ + "/config.json"));
  EXPECT_EQ(root["class_name"], "Functional");
  EXPECT_EQ(root["module"], "keras.src.models.functional");
  const Json& config = root["config"];
  EXPECT_EQ(config["name"], "residual");
  EXPECT_EQ(config["input_layers"], Json::parse(R"(["x", 0, 0])"));
  EXPECT_EQ(config["output_layers"], Json::parse(R"(["out", 0, 0])"));
  const Json& layers = config["layers"];
  ASSERT_EQ(layers.size(), 4u);
  EXPECT_EQ(layers[0]["class_name"], "InputLayer");
  EXPECT_EQ(layers[0]["inbound_nodes"], Json::array());
  // The shared layer: two nodes, the second reading the first.
  EXPECT_EQ(layers[1]["name"], "shared");
  ASSERT_EQ(layers[1]["inbound_nodes"].size(), 2u);
  const Json& second = layers[1]["inbound_nodes"][1];
  EXPECT_EQ(second["kwargs"], Json::object());
  EXPECT_EQ(second["args"][0]["class_name"], "__keras_tensor__");
  EXPECT_EQ(second["args"][0]["config"]["keras_history"],
            Json::parse(R"(["shared", 0, 0])"));
  EXPECT_EQ(second["args"][0]["config"]["shape"], Json::parse("[null, 4]"));
  // The merge layer's node reads a list.
  EXPECT_EQ(layers[2]["class_name"], "Add");
  const Json& merged = layers[2]["inbound_nodes"][0]["args"][0];
  ASSERT_TRUE(merged.is_array());
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[1]["config"]["keras_history"],
            Json::parse(R"(["shared", 1, 0])"));
  EXPECT_EQ(merged[2]["config"]["keras_history"],
            Json::parse(R"(["x", 0, 0])"));
  EXPECT_TRUE(root["compile_config"].is_object());
}

TEST_F(FunctionalSavingTest, WeightsFileHasKerasFunctionalGroups) {
  Graph g;
  Functional m = Model(g);
  ASSERT_TRUE(m.Save(dir_).ok());
  const std::string h5 = ReadFileBytes(dir_ + "/model.weights.h5");
  std::vector<std::string> names;
  absl::StatusOr<std::vector<std::vector<Tensor>>> values = DecodeKerasWeights(
      h5, {{.path = "layers/dense", .shapes = {{4, 4}, {4}}}}, "w.h5",
      {.check_layers =
           [&](const KerasWeightsLayers& saved) {
             names = saved.names;
             return absl::OkStatus();
           },
       .max_layer_names = 10});
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("input_layer", "dense",
                                                     "add", "dense_1"));
  EXPECT_TRUE(SameBits((*values)[0][0], m.GetWeights()[0]));
}

// Keras orders a Functional's layers by depth from the outputs (ties in
// the order its walk from the outputs reaches them), rebuilds that order
// from the config and names weights groups by it: the config lists the
// layers, and the weights file names their groups, in that order, which
// here differs from the model's order of first call (x, c, a, b, sum).
TEST_F(FunctionalSavingTest, LayersAndGroupsAreInKerasLayerOrder) {
  Graph g;
  KerasTensor x = Input({4}, "x");
  Layer a = layers::Dense(4, {.name = "a"});
  Layer b = layers::Dense(4, {.name = "b"});
  Layer c = layers::Dense(4, {.name = "c"});
  Functional m =
      Functional::Create({x}, {layers::Add({"sum"})({c(x), b(a(x))})},
                         {.graph = &g})
          .value();
  ASSERT_TRUE(m.Save(dir_).ok());
  const Json config = Json::parse(ReadFileBytes(dir_ + "/config.json"));
  std::vector<std::string> names;
  for (const Json& l : config["config"]["layers"]) names.push_back(l["name"]);
  EXPECT_THAT(names, ::testing::ElementsAre("x", "a", "c", "b", "sum"));
  const std::string h5 = ReadFileBytes(dir_ + "/model.weights.h5");
  absl::StatusOr<std::vector<std::vector<Tensor>>> groups =
      DecodeKerasWeights(h5,
                         {{.path = "layers/dense", .shapes = {{4, 4}, {4}}},
                          {.path = "layers/dense_1", .shapes = {{4, 4}, {4}}},
                          {.path = "layers/dense_2", .shapes = {{4, 4}, {4}}}},
                         "w.h5");
  ASSERT_TRUE(groups.ok()) << groups.status();
  // GetWeights is in the model's order: c, a, b.
  const std::vector<Tensor> w = m.GetWeights();
  EXPECT_TRUE(SameBits((*groups)[0][0], w[2]));  // a
  EXPECT_TRUE(SameBits((*groups)[1][0], w[0]));  // c
  EXPECT_TRUE(SameBits((*groups)[2][0], w[4]));  // b
  Graph other;
  absl::StatusOr<Functional> loaded = LoadFunctional(dir_, {.graph = &other});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(SameBits(loaded->Predict(X()).value(), m.Predict(X()).value()));
}

TEST_F(FunctionalSavingTest, SaveWeightsWritesTheSameWeightsFile) {
  Graph g;
  Functional m = Model(g);
  ASSERT_TRUE(m.Save(dir_).ok());
  const std::string path = dir_ + ".weights.h5";
  ASSERT_TRUE(SaveWeights(m, path).ok());
  EXPECT_EQ(ReadFileBytes(path), ReadFileBytes(dir_ + "/model.weights.h5"));
  fs::remove(path);
}

TEST_F(FunctionalSavingTest, ModelToJsonIsTheCompactConfig) {
  Graph g;
  Functional m = Model(g);
  absl::StatusOr<std::string> json = ModelToJson(m);
  ASSERT_TRUE(json.ok()) << json.status();
  ASSERT_TRUE(m.Save(dir_).ok());
  EXPECT_EQ(Json::parse(*json),
            Json::parse(ReadFileBytes(dir_ + "/config.json")));
}

TEST_F(FunctionalSavingTest, LoadModelRefusesAFunctionalNamingLoadAnyModel) {
  Graph g;
  ASSERT_TRUE(Model(g).Save(dir_).ok());
  absl::StatusOr<Sequential> s = LoadModel(dir_, {.graph = &g});
  ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(s.status()), HasSubstr("config.json"));
  EXPECT_THAT(Message(s.status()), HasSubstr("LoadAnyModel"));
}

TEST_F(FunctionalSavingTest, LoadAnyModelReturnsTheSavedKind) {
  Graph g;
  ASSERT_TRUE(Model(g).Save(dir_).ok());
  absl::StatusOr<LoadedModel> any = LoadAnyModel(dir_, {.graph = &g});
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_TRUE(std::holds_alternative<Functional>(*any));
  Sequential seq =
      Sequential::Create({layers::Input({4}), layers::Dense(2)}, {.graph = &g})
          .value();
  const std::string seq_dir = dir_ + "_seq";
  ASSERT_TRUE(seq.Save(seq_dir).ok());
  any = LoadAnyModel(seq_dir, {.graph = &g});
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_TRUE(std::holds_alternative<Sequential>(*any));
  absl::StatusOr<Functional> f = LoadFunctional(seq_dir, {.graph = &g});
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  fs::remove_all(seq_dir);
}

// A file as Keras 3 writes it for
//   x = keras.Input((3,), name="x"); shared = Dense(3, name="shared")
//   a = shared(x); b = shared(a); s = Add(name="sum")([a, b])
//   keras.Model(x, Dense(2, activation="softmax", name="out")(s))
// (config.json hand-written from keras/src/models/functional.py's
// get_config; the weights in saving_lib's layout, made here).
TEST_F(FunctionalSavingTest, LoadsAFileKerasThreeWrites) {
  fs::create_directories(dir_);
  fs::copy_file("tests/models/testdata/keras_functional/config.json",
                dir_ + "/config.json");
  auto tensor = [](TensorShape shape, std::vector<float> v) {
    return Tensor::FromData<float>(shape, v).value();
  };
  const Tensor k1 = tensor({3, 3}, {1, 0, 0, 0, 2, 0, 0, 0, -1});
  const Tensor b1 = tensor({3}, {0.5f, 0, 0});
  const Tensor k2 = tensor({3, 2}, {1, -1, 0, 1, 2, 0});
  const Tensor b2 = tensor({2}, {0, 0.25f});
  WriteFileBytes(dir_ + "/model.weights.h5",
                 EncodeKerasWeights({{"layers/input_layer", {}},
                                     {"layers/dense", {k1, b1}},
                                     {"layers/add", {}},
                                     {"layers/dense_1", {k2, b2}}})
                     .value());
  Graph g;
  absl::StatusOr<LoadedModel> any = LoadAnyModel(dir_, {.graph = &g});
  ASSERT_TRUE(any.ok()) << any.status();
  ASSERT_TRUE(std::holds_alternative<Functional>(*any));
  Functional& m = std::get<Functional>(*any);
  EXPECT_EQ(m.name(), "golden");
  EXPECT_FALSE(m.compiled());
  // a = x k1 + b1; b = a k1 + b1; s = a + b; out = softmax(s k2 + b2).
  const std::vector<float> x = {1, 1, 1};
  std::vector<float> a(3), b(3), s(3);
  const float kk1[3][3] = {{1, 0, 0}, {0, 2, 0}, {0, 0, -1}};
  const float bb1[3] = {0.5f, 0, 0};
  for (int j = 0; j < 3; ++j) {
    a[j] = bb1[j];
    for (int i = 0; i < 3; ++i) a[j] += x[i] * kk1[i][j];
  }
  for (int j = 0; j < 3; ++j) {
    b[j] = bb1[j];
    for (int i = 0; i < 3; ++i) b[j] += a[i] * kk1[i][j];
    s[j] = a[j] + b[j];
  }
  const float kk2[3][2] = {{1, -1}, {0, 1}, {2, 0}};
  float z[2] = {0, 0.25f};
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 3; ++i) z[j] += s[i] * kk2[i][j];
  }
  const float e0 = std::exp(z[0]), e1 = std::exp(z[1]);
  absl::StatusOr<Tensor> y = m.Predict(tensor({1, 3}, x));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_NEAR(y->data<float>()[0], e0 / (e0 + e1), 1e-5);
  EXPECT_NEAR(y->data<float>()[1], e1 / (e0 + e1), 1e-5);
}

// --- The reader refuses hostile graphs, naming the file and the field. ---

// The golden config, to be broken by each test.
Json GoldenConfig() {
  return Json::parse(
      ReadFileBytes("tests/models/testdata/keras_functional/config.json"));
}

absl::Status Parse(const Json& config) {
  return ParseModelConfig(config.dump(), "dir/config.json").status();
}

void ExpectRefused(const Json& config, const std::string& what) {
  const absl::Status s = Parse(config);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(Message(s), HasSubstr("dir/config.json")) << s;
  EXPECT_THAT(Message(s), HasSubstr(what)) << s;
}

Json& History(Json& config, int layer, int node, int arg = -1) {
  Json& args = config["config"]["layers"][layer]["inbound_nodes"][node]["args"];
  return arg < 0 ? args[0]["config"]["keras_history"]
                 : args[0][arg]["config"]["keras_history"];
}

TEST(FunctionalConfigTest, TheGoldenConfigParses) {
  absl::StatusOr<ModelConfigSummary> s =
      ParseModelConfig(GoldenConfig().dump(), "dir/config.json");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "golden");
  EXPECT_EQ(s->num_layers, 4);
  // shared: 3x3 + 3, once although called twice; out: 3x2 + 2.
  EXPECT_EQ(s->weights_bytes, (9 + 3 + 6 + 2) * 4);
}

TEST(FunctionalConfigTest, AnUnknownLayerInInboundNodesIsRefused) {
  Json c = GoldenConfig();
  History(c, 3, 0) = Json::parse(R"(["nowhere", 0, 0])");
  ExpectRefused(c, "names layer 'nowhere', which is not in the config");
  ExpectRefused(c, "layers[3] ('out') inbound_nodes[0] args[0]");
}

TEST(FunctionalConfigTest, ANodeIndexOutOfRangeIsRefused) {
  Json c = GoldenConfig();
  History(c, 2, 0, 1) = Json::parse(R"(["shared", 2, 0])");
  ExpectRefused(c, "node_index 2 is out of range: layer 'shared' has 2");
  c = GoldenConfig();
  History(c, 2, 0, 1) = Json::parse(R"(["shared", -1, 0])");
  ExpectRefused(c, "node_index -1 is out of range");
}

TEST(FunctionalConfigTest, ATensorIndexOtherThanZeroIsRefused) {
  Json c = GoldenConfig();
  History(c, 3, 0) = Json::parse(R"(["sum", 0, 1])");
  ExpectRefused(c, "tensor_index 1 is out of range");
}

TEST(FunctionalConfigTest, ACycleIsRefused) {
  Json c = GoldenConfig();
  // shared's first call reads sum, which reads shared's calls.
  History(c, 1, 0) = Json::parse(R"(["sum", 0, 0])");
  ExpectRefused(c, "cycle");
  // A node reading itself.
  c = GoldenConfig();
  History(c, 3, 0) = Json::parse(R"(["out", 0, 0])");
  ExpectRefused(c,
                "layers[3] ('out') inbound_nodes[0]: its inputs form a "
                "cycle");
}

TEST(FunctionalConfigTest, ADuplicateLayerNameIsRefused) {
  Json c = GoldenConfig();
  c["config"]["layers"][3]["name"] = "sum";
  ExpectRefused(c, "'sum' is the name of layers[2] too");
}

TEST(FunctionalConfigTest, FieldsOfTheWrongTypeAreRefused) {
  Json c = GoldenConfig();
  c["config"]["layers"][1]["inbound_nodes"] = "x";
  ExpectRefused(c, "field 'inbound_nodes' must be a list of nodes");
  c = GoldenConfig();
  c["config"]["layers"][1].erase("name");
  ExpectRefused(c, "layers[1]: field 'name' is missing");
  c = GoldenConfig();
  // Keras 2's list form of a node.
  c["config"]["layers"][3]["inbound_nodes"][0] =
      Json::parse(R"([["sum", 0, 0, {}]])");
  ExpectRefused(c, "must be an object {\"args\"");
  c = GoldenConfig();
  History(c, 3, 0) = Json::parse(R"(["sum", "0", 0])");
  ExpectRefused(c, "must be [layer_name, node_index, tensor_index]");
  c = GoldenConfig();
  c["config"]["layers"][3]["inbound_nodes"][0]["args"][0]["class_name"] =
      "__tensor__";
  ExpectRefused(c, "class_name is '__tensor__', not '__keras_tensor__'");
  c = GoldenConfig();
  c["config"]["layers"][3]["inbound_nodes"][0]["kwargs"] =
      Json::parse(R"({"mask": [1, 2]})");
  ExpectRefused(c, "field 'kwargs' holds 'mask'");
  c = GoldenConfig();
  c["config"]["layers"][3]["inbound_nodes"][0]["args"].push_back(1);
  ExpectRefused(c, "field 'args' must hold one value");
  c = GoldenConfig();
  c["config"]["output_layers"] = 3;
  ExpectRefused(c, "field 'output_layers' must be [layer_name");
}

TEST(FunctionalConfigTest, InputLayersMustNameAnInputLayer) {
  Json c = GoldenConfig();
  c["config"]["input_layers"] = Json::parse(R"([["shared", 0, 0]])");
  ExpectRefused(c,
                "input_layers[0]: names layer 'shared', which is not an "
                "InputLayer");
}

TEST(FunctionalConfigTest, AnUncalledLayerIsRefused) {
  Json c = GoldenConfig();
  c["config"]["layers"][3]["inbound_nodes"] = Json::array();
  ExpectRefused(c, "field 'inbound_nodes' is empty");
}

TEST(FunctionalConfigTest, ARefusedCallNamesTheNode) {
  Json c = GoldenConfig();
  // A merge layer given one value, not a list.
  Json& args = c["config"]["layers"][2]["inbound_nodes"][0]["args"];
  args[0] = Json(args[0][0]);
  ExpectRefused(c, "layers[2] ('sum') inbound_nodes[0]: ");
}

TEST(FunctionalConfigTest, WeightsOverTheBudgetAreRefusedBeforeBuilding) {
  Json c = GoldenConfig();
  c["config"]["layers"][3]["config"]["units"] = 1 << 24;
  absl::StatusOr<ModelConfigSummary> s =
      ParseModelConfig(c.dump(), "dir/config.json", int64_t{64} << 20);
  ASSERT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Message(s.status()), HasSubstr("dir/config.json"));
}

// --- Callbacks that save, on a functional model. ---

TEST_F(FunctionalSavingTest, ModelCheckpointSavesTheFunctionalModel) {
  Graph g;
  Functional m = Model(g);
  auto checkpoint =
      callbacks::ModelCheckpoint::Create({.filepath = dir_ + "/ckpt_{epoch}"})
          .value();
  ASSERT_TRUE(
      m.Fit(X(), Y(), {.epochs = 2, .verbose = 0, .callbacks = {checkpoint}})
          .ok());
  Graph other;
  absl::StatusOr<Functional> loaded =
      LoadFunctional(dir_ + "/ckpt_2", {.graph = &other});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(SameBits(loaded->Predict(X()).value(), m.Predict(X()).value()));
}

TEST_F(FunctionalSavingTest, ModelCheckpointSavesFunctionalWeightsOnly) {
  Graph g;
  Functional m = Model(g);
  const std::string path = dir_ + "/w.weights.h5";
  auto checkpoint = callbacks::ModelCheckpoint::Create(
                        {.filepath = path, .save_weights_only = true})
                        .value();
  ASSERT_TRUE(m.Fit(X(), Y(), {.verbose = 0, .callbacks = {checkpoint}}).ok());
  const std::string saved = dir_ + "/saved";
  ASSERT_TRUE(m.Save(saved).ok());
  EXPECT_EQ(ReadFileBytes(path), ReadFileBytes(saved + "/model.weights.h5"));
}

TEST_F(FunctionalSavingTest, TensorBoardWritesTheFunctionalKerasConfig) {
  Graph g;
  Functional m = Model(g);
  auto board = callbacks::TensorBoard::Create({.log_dir = dir_});
  ASSERT_TRUE(m.Fit(X(), Y(), {.verbose = 0, .callbacks = {board}}).ok());
  auto events = EventFileReader::ReadAll(board->train_path());
  ASSERT_TRUE(events.ok()) << events.status();
  int found = 0;
  for (const proto::Event& e : *events) {
    for (const proto::Summary::Value& v : e.summary().value()) {
      if (v.tag() != "keras") continue;
      ++found;
      ASSERT_EQ(v.tensor().string_val_size(), 1);
      const Json config = Json::parse(v.tensor().string_val(0));
      EXPECT_EQ(config["class_name"], "Functional");
      EXPECT_EQ(config["config"]["layers"][1]["inbound_nodes"].size(), 2u);
    }
  }
  EXPECT_EQ(found, 1);
  EXPECT_GT(board->graph_nodes(), 0);
}

}  // namespace
}  // namespace graphgc
