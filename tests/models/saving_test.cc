#include "models/saving.h"

#include <sys/resource.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "nlohmann/json.hpp"
#include "runtime/session.h"
#include "serialize/graph.pb.h"
#include "serialize/graph_def.h"
#include "serialize/keras_weights.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/temp_path.h"
#include "tests/util/fifo.h"

namespace graphgc {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Tensor X() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xs(64 * 4);
  for (float& v : xs) v = u(rng);
  return Tensor::FromData<float>({64, 4}, xs).value();
}

Tensor Y() {
  std::vector<int32_t> ys(64);
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<int32_t>(i % 3);
  return Tensor::FromData<int32_t>({64}, ys).value();
}

// Input(4) -> Dense(8, relu) -> Dense(3, softmax), compiled with Adam and
// accuracy, trained one epoch so its weights are not the initial ones.
Sequential TrainedModel(Graph& g) {
  Sequential m =
      Sequential::Create(
          {layers::Input({4}), layers::Dense(8, {.activation = "relu"}),
           layers::Dense(3, {.activation = "softmax"})},
          {.graph = &g})
          .value();
  EXPECT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                         .loss = losses::SparseCategoricalCrossentropy(),
                         .metrics = {"accuracy"}})
                  .ok());
  EXPECT_TRUE(m.Fit(X(), Y(), {.verbose = 0}).ok());
  return m;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data<float>().data(), b.data<float>().data(),
                     a.num_elements() * sizeof(float)) == 0;
}

Json ReadJson(const std::string& path) {
  return Json::parse(ReadFileBytes(path));
}

// Live nodes of `g` after a full collection.
int64_t LiveAfterCollect(Graph& g) {
  g.Collect();
  return g.num_nodes();
}

// A saved model in `dir`, its graph gone.
void SaveAModel(const std::string& dir) {
  Graph g;
  ASSERT_TRUE(TrainedModel(g).Save(dir).ok());
}

// ---------------------------------------------------------------------------
// Save: a safe point

TEST(Save, CollectsGarbageFirst) {
  Graph g;
  Sequential m = TrainedModel(g);
  // A policy under which any safe point collects.
  g.set_gc_policy(GcPolicy{.growth_ratio = 0, .min_new_nodes = 0});
  WeakNodeHandle garbage;
  {
    Sequential dropped =
        Sequential::Create({layers::Input({4}), layers::Dense(2)},
                           {.graph = &g})
            .value();
    garbage = WeakNodeHandle(dropped.GraphRoots().front());
  }
  ASSERT_FALSE(garbage.expired());
  ASSERT_TRUE(m.Save(TestTempPath()).ok());
  EXPECT_TRUE(garbage.expired());
}

// ---------------------------------------------------------------------------
// Save: what it writes

TEST(Save, WritesTheConfigTheWeightsTheFrozenGraphAndItsSignature) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"config.json", "model.pb",
                                      "model.weights.h5", "signature.json"}));
}

TEST(Save, ConfigIsKerasSequentialJson) {
  const std::string dir = TestTempPath();
  Graph g;
  Sequential m = TrainedModel(g);
  ASSERT_TRUE(m.Save(dir).ok());
  const Json c = ReadJson(dir + "/config.json");
  EXPECT_EQ(c["class_name"], "Sequential");
  EXPECT_EQ(c["config"]["name"], m.name());
  const Json& layers = c["config"]["layers"];
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0]["class_name"], "InputLayer");
  EXPECT_EQ(layers[0]["config"]["batch_input_shape"], Json::parse("[null, 4]"));
  EXPECT_EQ(layers[0]["config"]["batch_shape"], Json::parse("[null, 4]"));
  EXPECT_EQ(layers[1]["class_name"], "Dense");
  EXPECT_EQ(layers[1]["config"]["name"], m.layers()[1].name());
  EXPECT_EQ(layers[1]["config"]["units"], 8);
  EXPECT_EQ(layers[1]["config"]["activation"], "relu");
  EXPECT_EQ(layers[1]["config"]["use_bias"], true);
  EXPECT_EQ(layers[2]["config"]["activation"], "softmax");
}

TEST(Save, ConfigHoldsTheCompileSettingsAsKerasCompileConfig) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  const Json cc = ReadJson(dir + "/config.json")["compile_config"];
  EXPECT_EQ(cc["optimizer"]["class_name"], "Adam");
  // Floats are written as their shortest decimal.
  EXPECT_EQ(cc["optimizer"]["config"]["learning_rate"].dump(), "0.001");
  EXPECT_EQ(cc["optimizer"]["config"]["beta_2"].dump(), "0.999");
  EXPECT_EQ(cc["optimizer"]["config"]["epsilon"].dump(), "1e-07");
  EXPECT_EQ(cc["loss"]["class_name"], "SparseCategoricalCrossentropy");
  EXPECT_EQ(cc["loss"]["config"]["from_logits"], false);
  EXPECT_EQ(cc["metrics"], Json::parse(R"(["accuracy"])"));
}

TEST(Save, AnUncompiledModelHasANullCompileConfig) {
  const std::string dir = TestTempPath();
  Graph g;
  Sequential m =
      Sequential::Create({layers::Input({2}), layers::Dense(1)}, {.graph = &g})
          .value();
  ASSERT_TRUE(m.Save(dir).ok());
  EXPECT_TRUE(ReadJson(dir + "/config.json")["compile_config"].is_null());
}

// Keras 3 names weight groups by class, uniqued per model, whatever the
// layers' own names.
TEST(Save, WeightsAreInKerasGroupsWhateverTheLayerNames) {
  const std::string dir = TestTempPath();
  Graph g;
  // Other layers take "dense" and "dense_1" first.
  Sequential other = TrainedModel(g);
  Sequential m = TrainedModel(g);
  ASSERT_EQ(m.layers()[1].name(), "dense_2");
  ASSERT_TRUE(m.Save(dir).ok());
  auto values =
      DecodeKerasWeights(ReadFileBytes(dir + "/model.weights.h5"),
                         {{.path = "layers/dense", .shapes = {{4, 8}, {8}}},
                          {.path = "layers/dense_1", .shapes = {{8, 3}, {3}}}},
                         "w.h5");
  ASSERT_TRUE(values.ok()) << values.status();
  const std::vector<Tensor> weights = m.GetWeights();
  EXPECT_TRUE(SameBits((*values)[0][0], weights[0]));
  EXPECT_TRUE(SameBits((*values)[0][1], weights[1]));
  EXPECT_TRUE(SameBits((*values)[1][0], weights[2]));
  EXPECT_TRUE(SameBits((*values)[1][1], weights[3]));
}

TEST(Save, SignatureNamesThePlaceholderAndThePrediction) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  absl::StatusOr<Signature> sig = ReadSignature(dir);
  ASSERT_TRUE(sig.ok()) << sig.status();
  EXPECT_EQ(sig->input.name, "input:0");
  EXPECT_EQ(sig->input.shape, TensorShape({-1, 4}));
  EXPECT_EQ(sig->output.name, "dense_1/Softmax:0");
  EXPECT_EQ(sig->output.shape, TensorShape({-1, 3}));
}

TEST(Save, TheFrozenGraphHasNoVariablesAndPredictsBitForBitTheSame) {
  const std::string dir = TestTempPath();
  Graph g;
  Sequential m = TrainedModel(g);
  ASSERT_TRUE(m.Save(dir).ok());
  const Tensor expected = m.Predict(X()).value();

  proto::GraphDef def;
  ASSERT_TRUE(def.ParseFromString(ReadFileBytes(dir + "/model.pb")));
  for (const auto& node : def.node()) {
    EXPECT_NE(node.op(), "VarHandleOp") << node.name();
    EXPECT_NE(node.op(), "ReadVariableOp") << node.name();
  }
  const Signature sig = ReadSignature(dir).value();
  Graph fresh;
  auto nodes = ImportGraphDef(def, fresh);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  Output x, y;
  for (size_t i = 0; i < nodes->size(); ++i) {
    const std::string name = def.node(i).name();
    if (name + ":0" == sig.input.name) x = Output((*nodes)[i], 0);
    if (name + ":0" == sig.output.name) y = Output((*nodes)[i], 0);
  }
  ASSERT_TRUE(x.handle().valid() && y.handle().valid());
  Session session(fresh);
  auto out = session.Run({{x, X()}}, {y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(SameBits((*out)[0], expected));
}

// ---------------------------------------------------------------------------
// Save: where it writes

TEST(Save, ReplacesAnEarlierSaveWholeAndLeavesNoStagingBehind) {
  const std::string dir = TestTempPath() + "/model";
  Graph g;
  Sequential first = TrainedModel(g);
  ASSERT_TRUE(first.Save(dir).ok());
  Sequential second =
      Sequential::Create({layers::Input({4}), layers::Dense(2)}, {.graph = &g})
          .value();
  ASSERT_TRUE(second.Save(dir).ok());
  Sequential loaded = LoadModel(dir, {.graph = &g}).value();
  EXPECT_TRUE(
      SameBits(loaded.Predict(X()).value(), second.Predict(X()).value()));
  int entries = 0;
  for (const auto& e : fs::directory_iterator(fs::path(dir).parent_path())) {
    EXPECT_EQ(e.path().filename(), "model");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(Save, CreatesMissingParentDirectories) {
  const std::string dir = TestTempPath() + "/a/b/model";
  SaveAModel(dir);
  EXPECT_TRUE(fs::exists(dir + "/config.json"));
}

TEST(Save, RefusesADirectoryHoldingOtherFilesAndLeavesItAlone) {
  const std::string dir = TestTempPath() + "/model";
  fs::create_directories(dir);
  WriteFileBytes(dir + "/notes.txt", "mine");
  Graph g;
  const absl::Status s = TrainedModel(g).Save(dir);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(s.message(), "notes.txt")) << s;
  EXPECT_EQ(ReadFileBytes(dir + "/notes.txt"), "mine");
  EXPECT_FALSE(fs::exists(dir + "/config.json"));
  int siblings = 0;
  for (const auto& e : fs::directory_iterator(fs::path(dir).parent_path())) {
    (void)e;
    ++siblings;
  }
  EXPECT_EQ(siblings, 1);  // no staging directory left
}

TEST(Save, RefusesAnEmptyPath) {
  Graph g;
  const absl::Status s = TrainedModel(g).Save("");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "empty path")) << s;
}

TEST(Save, RefusesAPathWithANulByteAndCreatesNothing) {
  const std::string dir = TestTempPath();
  Graph g;
  const absl::Status s = TrainedModel(g).Save(dir + std::string("\0x", 2));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "NUL")) << s;
  EXPECT_FALSE(fs::exists(dir));
}

TEST(Save, OfAMovedFromModelIsRefused) {
  Graph g;
  Sequential m = TrainedModel(g);
  Sequential taken = std::move(m);
  EXPECT_EQ(m.Save(TestTempPath()).code(),  // NOLINT(bugprone-use-after-move)
            absl::StatusCode::kFailedPrecondition);
}

// What ModelCheckpoint will do: save from a callback of the model's own fit.
TEST(Save, WorksFromACallbackOfTheModelsOwnFit) {
  class SaveEachEpoch : public Callback {
   public:
    explicit SaveEachEpoch(std::string dir) : dir_(std::move(dir)) {}
    absl::Status OnTrainBegin(const Sequential& model,
                              const TrainInfo&) override {
      model_ = &model;
      return absl::OkStatus();
    }
    absl::Status OnEpochEnd(int epoch, const Logs&) override {
      return model_->Save(absl::StrCat(dir_, "/", epoch));
    }

   private:
    std::string dir_;
    const Sequential* model_ = nullptr;
  };
  const std::string dir = TestTempPath();
  Graph g;
  Sequential m = TrainedModel(g);
  ASSERT_TRUE(m.Fit(X(), Y(),
                    {.epochs = 2,
                     .verbose = 0,
                     .callbacks = {std::make_shared<SaveEachEpoch>(dir)}})
                  .ok());
  Sequential last = LoadModel(dir + "/1", {.graph = &g}).value();
  EXPECT_TRUE(SameBits(last.Predict(X()).value(), m.Predict(X()).value()));
}

// ---------------------------------------------------------------------------
// LoadModel

TEST(LoadModel, PredictsBitForBitWhatTheSavedModelPredicted) {
  const std::string dir = TestTempPath();
  Graph g;
  Sequential m = TrainedModel(g);
  ASSERT_TRUE(m.Save(dir).ok());
  Graph other;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &other});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(SameBits(loaded->Predict(X()).value(), m.Predict(X()).value()));
}

// Images [32, 8, 8, 1] and 3 classes, for the model with every layer kind.
Tensor Images() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> xs(32 * 8 * 8);
  for (float& v : xs) v = u(rng);
  return Tensor::FromData<float>({32, 8, 8, 1}, xs).value();
}

Tensor ImageLabels() {
  std::vector<int32_t> ys(32);
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<int32_t>(i % 3);
  return Tensor::FromData<int32_t>({32}, ys).value();
}

// Every layer kind, non-default options where the kind has them, compiled
// and trained one epoch (so BatchNormalization's moving statistics are not
// their initial values).
Sequential EveryKindModel(Graph& g) {
  Sequential m =
      Sequential::Create(
          {layers::Input({8, 8, 1}),
           layers::Conv2D(4, {3, 3}, {.padding = "same", .activation = "relu"}),
           layers::BatchNormalization({.momentum = 0.9f, .epsilon = 1e-2f}),
           layers::MaxPooling2D({2, 2}, {.strides = {2, 1}}),
           layers::Dropout(0.25f, "", 1234), layers::Reshape({28, 4}),
           layers::Flatten(), layers::Dense(8, {.use_bias = false}),
           layers::Activation("tanh"),
           layers::Dense(3, {.activation = "softmax"})},
          {.graph = &g})
          .value();
  EXPECT_TRUE(m.Compile({.optimizer = optimizers::Adam(),
                         .loss = losses::SparseCategoricalCrossentropy(),
                         .metrics = {"accuracy"}})
                  .ok());
  EXPECT_TRUE(
      m.Fit(Images(), ImageLabels(), {.batch_size = 8, .verbose = 0}).ok());
  return m;
}

TEST(LoadModel, RoundTripsEveryLayerKindBitForBit) {
  const std::string dir = TestTempPath();
  Graph g;
  Sequential m = EveryKindModel(g);
  ASSERT_TRUE(m.Save(dir).ok());
  Graph other;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &other});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::vector<std::string> kinds;
  for (const Layer& l : loaded->layers()) kinds.push_back(l.kind());
  EXPECT_EQ(kinds, (std::vector<std::string>{
                       "InputLayer", "Conv2D", "BatchNormalization",
                       "MaxPooling2D", "Dropout", "Reshape", "Flatten", "Dense",
                       "Activation", "Dense"}));
  EXPECT_EQ(loaded->Summary(), m.Summary());
  // Every weight, the moving statistics included, and the predictions.
  const std::vector<Tensor> saved = m.GetWeights();
  const std::vector<Tensor> got = loaded->GetWeights();
  ASSERT_EQ(got.size(), saved.size());
  for (size_t i = 0; i < saved.size(); ++i) {
    EXPECT_TRUE(SameBits(got[i], saved[i])) << "weight " << i;
  }
  EXPECT_TRUE(
      SameBits(loaded->Predict(Images()).value(), m.Predict(Images()).value()));
}

TEST(LoadModel, KeepsEveryLayerKindsOptions) {
  // Saving the loaded model writes the same config.json byte for byte
  // (names included: the loaded graph is fresh, like the saved one's).
  const std::string dir = TestTempPath();
  const std::string again = TestTempPath("_again");
  {
    Graph g;
    ASSERT_TRUE(EveryKindModel(g).Save(dir).ok());
  }
  Graph other;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &other});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->Save(again).ok());
  EXPECT_EQ(ReadFileBytes(again + "/config.json"),
            ReadFileBytes(dir + "/config.json"));
  const Json c = ReadJson(dir + "/config.json");
  const Json& conv = c["config"]["layers"][1]["config"];
  EXPECT_EQ(conv["kernel_size"], Json({3, 3}));
  EXPECT_EQ(conv["padding"], "same");
  EXPECT_EQ(c["config"]["layers"][3]["config"]["strides"], Json({2, 1}));
  EXPECT_EQ(c["config"]["layers"][4]["config"]["seed"], 1234);
  EXPECT_EQ(c["config"]["layers"][5]["config"]["target_shape"], Json({28, 4}));
  EXPECT_EQ(c["config"]["layers"][2]["config"]["momentum"], 0.9);
}

TEST(LoadModel, ALoadedModelWithEveryLayerKindContinuesTraining) {
  const std::string dir = TestTempPath();
  {
    Graph g;
    ASSERT_TRUE(EveryKindModel(g).Save(dir).ok());
  }
  Graph other;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &other});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::vector<Tensor> before = loaded->GetWeights();
  absl::StatusOr<History> h =
      loaded->Fit(Images(), ImageLabels(), {.batch_size = 8, .verbose = 0});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_FALSE(SameBits(loaded->GetWeights()[0], before[0]));
}

TEST(LoadModel, UsesTheDefaultGraphUnlessGivenOne) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  absl::StatusOr<Sequential> on_default = LoadModel(dir);
  ASSERT_TRUE(on_default.ok()) << on_default.status();
  EXPECT_EQ(&on_default->graph(), &Graph::Default());
  Graph g;
  absl::StatusOr<Sequential> on_g = LoadModel(dir, {.graph = &g});
  ASSERT_TRUE(on_g.ok()) << on_g.status();
  EXPECT_EQ(&on_g->graph(), &g);
}

TEST(LoadModel, KeepsEveryDenseOption) {
  const std::string dir = TestTempPath();
  Graph g;
  Sequential m =
      Sequential::Create(
          {layers::Input({4}, "features"),
           layers::Dense(
               5, {.activation = "tanh", .use_bias = false, .name = "hidden"}),
           layers::Dense(2, {.activation = "sigmoid"})},
          {.name = "net", .graph = &g})
          .value();
  ASSERT_TRUE(m.Save(dir).ok());
  Graph other;
  Sequential loaded = LoadModel(dir, {.graph = &other}).value();
  EXPECT_EQ(loaded.name(), "net");
  ASSERT_EQ(loaded.layers().size(), 3u);
  EXPECT_EQ(loaded.layers()[0].name(), "features");
  EXPECT_EQ(loaded.layers()[1].name(), "hidden");
  EXPECT_EQ(loaded.layers()[1].units(), 5);
  EXPECT_EQ(loaded.GetWeights().size(), 3u);  // no bias in "hidden"
  EXPECT_TRUE(SameBits(loaded.Predict(X()).value(), m.Predict(X()).value()));
  // Saved again, it writes the same config.
  const std::string again = TestTempPath("_again");
  ASSERT_TRUE(loaded.Save(again).ok());
  EXPECT_EQ(ReadFileBytes(again + "/config.json"),
            ReadFileBytes(dir + "/config.json"));
}

TEST(LoadModel, ACompiledModelCanContinueTraining) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  Graph g;
  Sequential loaded = LoadModel(dir, {.graph = &g}).value();
  ASSERT_TRUE(loaded.compiled());
  const std::vector<Tensor> before = loaded.GetWeights();
  absl::StatusOr<History> h = loaded.Fit(X(), Y(), {.epochs = 2, .verbose = 0});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->values("accuracy").size(), 2u);  // the metric came back too
  EXPECT_FALSE(SameBits(loaded.GetWeights()[0], before[0]));
}

TEST(LoadModel, KeepsSgdSettingsAndMeanSquaredError) {
  const std::string dir = TestTempPath();
  Graph g;
  Sequential m =
      Sequential::Create({layers::Input({4}), layers::Dense(3)}, {.graph = &g})
          .value();
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD({.learning_rate = 0.05f,
                                                       .momentum = 0.9f,
                                                       .nesterov = true}),
                         .loss = losses::MeanSquaredError()})
                  .ok());
  ASSERT_TRUE(m.Save(dir).ok());
  const Json cc = ReadJson(dir + "/config.json")["compile_config"];
  EXPECT_EQ(cc["optimizer"]["class_name"], "SGD");
  EXPECT_EQ(cc["optimizer"]["config"]["learning_rate"].dump(), "0.05");
  EXPECT_EQ(cc["optimizer"]["config"]["nesterov"], true);
  EXPECT_EQ(cc["loss"]["class_name"], "MeanSquaredError");
  Sequential loaded = LoadModel(dir, {.graph = &g}).value();
  ASSERT_TRUE(loaded.compiled());
  std::vector<float> targets(64 * 3, 0.5f);
  Tensor y = Tensor::FromData<float>({64, 3}, targets).value();
  // Same weights, same settings: the same loss.
  EXPECT_EQ(loaded.Evaluate(X(), y).value().at("loss"),
            m.Evaluate(X(), y).value().at("loss"));
}

TEST(LoadModel, KeepsARegisteredLossWithItsOptions) {
  const std::string dir = TestTempPath("_huber");
  Graph g;
  Sequential m =
      Sequential::Create({layers::Input({4}), layers::Dense(3)}, {.graph = &g})
          .value();
  ASSERT_TRUE(m.Compile({.optimizer = optimizers::SGD(),
                         .loss = losses::Get("huber", {.delta = 0.25f,
                                                       .reduction = "sum"})
                                     .value()})
                  .ok());
  ASSERT_TRUE(m.Save(dir).ok());
  const Json loss = ReadJson(dir + "/config.json")["compile_config"]["loss"];
  EXPECT_EQ(loss["class_name"], "Huber");
  EXPECT_EQ(loss["config"]["name"], "huber_loss");
  EXPECT_EQ(loss["config"]["delta"].dump(), "0.25");
  EXPECT_EQ(loss["config"]["reduction"], "sum");
  Sequential loaded = LoadModel(dir, {.graph = &g}).value();
  std::vector<float> targets(64 * 3, 0.5f);
  Tensor y = Tensor::FromData<float>({64, 3}, targets).value();
  EXPECT_EQ(loaded.Evaluate(X(), y).value().at("loss"),
            m.Evaluate(X(), y).value().at("loss"));
}

TEST(LoadModel, ReadsKerasLossAliases) {
  const std::string dir = TestTempPath("_alias");
  SaveAModel(dir);
  Json c = ReadJson(dir + "/config.json");
  c["compile_config"]["loss"] = "kld";
  c["compile_config"]["metrics"] = nullptr;
  WriteFileBytes(dir + "/config.json", c.dump());
  Graph g;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->compiled());
}

TEST(LoadModel, WithCompileFalseGivesAnUncompiledModel) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  Graph g;
  Sequential loaded = LoadModel(dir, {.graph = &g, .compile = false}).value();
  EXPECT_FALSE(loaded.compiled());
}

TEST(LoadModel, ReadsKerasStringsForOptimizerAndLoss) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  Json c = ReadJson(dir + "/config.json");
  c["compile_config"]["optimizer"] = "sgd";
  c["compile_config"]["loss"] = "mse";
  c["compile_config"]["metrics"] = nullptr;
  // Keras 3 writes only batch_shape.
  c["config"]["layers"][0]["config"].erase("batch_input_shape");
  WriteFileBytes(dir + "/config.json", c.dump());
  Graph g;
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->compiled());
}

// ---------------------------------------------------------------------------
// LoadModel: bad files. Each names the file and what is wrong, and leaves
// nothing in the graph once collected.

class BadFileTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = TestTempPath();
    SaveAModel(dir_);
    baseline_ = LiveAfterCollect(g_);
  }
  // Loads dir_ into g_, expecting failure.
  absl::Status Load() {
    absl::StatusOr<Sequential> m = LoadModel(dir_, {.graph = &g_});
    return m.status();
  }
  void ExpectGraphUnchanged() { EXPECT_EQ(LiveAfterCollect(g_), baseline_); }
  std::string config() const { return dir_ + "/config.json"; }
  std::string weights() const { return dir_ + "/model.weights.h5"; }
  void EditConfig(const std::function<void(Json&)>& edit) {
    Json c = ReadJson(config());
    edit(c);
    WriteFileBytes(config(), c.dump());
  }

  std::string dir_;
  Graph g_;
  int64_t baseline_ = 0;
};

TEST_F(BadFileTest, AMissingConfigIsNotFoundNamingIt) {
  fs::remove(config());
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(s.message(), config())) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, AMissingWeightsFileIsNotFoundNamingIt) {
  fs::remove(weights());
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(s.message(), weights())) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, ATruncatedWeightsFileIsDataLossNamingIt) {
  const std::string bytes = ReadFileBytes(weights());
  WriteFileBytes(weights(), bytes.substr(0, bytes.size() / 2));
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StartsWith(s.message(), weights())) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, ACorruptWeightsFileIsRefusedNamingIt) {
  std::string bytes = ReadFileBytes(weights());
  // Overwrite the superblock and the object headers after it.
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 2048); ++i) {
    bytes[i] = static_cast<char>(0x5A ^ i);
  }
  WriteFileBytes(weights(), bytes);
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), weights())) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, ConfigThatIsNotJsonIsRefusedNamingIt) {
  WriteFileBytes(config(), "{\"class_name\": \"Sequential\", ");
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), config())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "not valid JSON")) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, AFieldOfTheWrongTypeIsRefusedNamingTheFieldAndTheFile) {
  EditConfig(
      [](Json& c) { c["config"]["layers"][1]["config"]["units"] = "8"; });
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), config())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "layers[1]")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(),
                                "field 'units' must be an integer, got "
                                "string \"8\""))
      << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, ACompileSettingOfTheWrongTypeIsRefused) {
  EditConfig([](Json& c) {
    c["compile_config"]["optimizer"]["config"]["learning_rate"] = "fast";
  });
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "learning_rate")) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, LayersThatAreNotAListAreRefused) {
  EditConfig([](Json& c) { c["config"]["layers"] = Json::object(); });
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "field 'layers'")) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, AnUnknownLayerClassIsRefusedNamingIt) {
  EditConfig(
      [](Json& c) { c["config"]["layers"][1]["class_name"] = "Conv3D"; });
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), config())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "unknown layer class 'Conv3D'"))
      << s;
  ExpectGraphUnchanged();
}

TEST(LoadModelConfig, AKerasOptionGraphgcLacksIsRefusedNamingTheFile) {
  // channels_first images, dilated convolutions: Keras options graphgc
  // does not implement are refused, not silently changed.
  const std::string dir = TestTempPath();
  {
    Graph g;
    ASSERT_TRUE(EveryKindModel(g).Save(dir).ok());
  }
  for (const auto& [key, value] : std::vector<std::pair<std::string, Json>>{
           {"data_format", "channels_first"}, {"dilation_rate", {2, 2}}}) {
    Json c = ReadJson(dir + "/config.json");
    const Json saved = c;
    c["config"]["layers"][1]["config"][key] = value;
    WriteFileBytes(dir + "/config.json", c.dump());
    Graph g;
    absl::StatusOr<Sequential> m = LoadModel(dir, {.graph = &g});
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_TRUE(absl::StartsWith(m.status().message(), dir + "/config.json"))
        << m.status();
    EXPECT_TRUE(absl::StrContains(m.status().message(), key)) << m.status();
    g.Collect();
    EXPECT_EQ(g.num_nodes(), 0);
    WriteFileBytes(dir + "/config.json", saved.dump());
  }
}

TEST_F(BadFileTest, AnUnknownActivationIsRefusedNamingTheFile) {
  EditConfig([](Json& c) {
    c["config"]["layers"][1]["config"]["activation"] = "mish";
  });
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), config())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "mish")) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, WeightsWhoseShapesDoNotMatchTheConfigAreRefused) {
  EditConfig([](Json& c) { c["config"]["layers"][1]["config"]["units"] = 9; });
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), weights())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "layers/dense/vars/0")) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, AConfigThatIsADirectoryIsRefused) {
  fs::remove(config());
  fs::create_directory(config());
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), config())) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, AWeightsFifoIsRefusedWithoutWaitingForAWriter) {
  fs::remove(weights());
  ASSERT_TRUE(MakeFifo(weights()));
  std::optional<absl::Status> s =
      CallUnlessItBlocks(weights(), [&] { return Load(); });
  ASSERT_TRUE(s.has_value()) << "LoadModel blocked on a FIFO";
  EXPECT_EQ(s->code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s->message(), "not a regular file")) << *s;
  ExpectGraphUnchanged();
}

TEST(LoadModelPath, AnEmptyOrNulPathIsRefused) {
  EXPECT_EQ(LoadModel("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadModel(std::string("m\0x", 3)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// LoadModel: the memory budget and what the config implies

// The largest resident set this process has had, in bytes.
int64_t PeakResidentBytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return int64_t{usage.ru_maxrss} * 1024;
}

TEST_F(BadFileTest, AConfigDeclaringWeightsOverTheBudgetIsRefusedUnbuilt) {
  // Dense(4 -> 2^25) and Dense(2^25 -> 3): 1 GiB of weights, whose load
  // takes 4 GiB, over the default budget of 2 GiB.
  EditConfig([](Json& c) {
    c["config"]["layers"][1]["config"]["units"] = int64_t{1} << 25;
  });
  const int64_t peak_before = PeakResidentBytes();
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), config())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "LoadOptions::max_bytes")) << s;
  EXPECT_LT(PeakResidentBytes() - peak_before, int64_t{64} << 20);
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, AConfigDeclaringUncountableWeightsIsResourceExhausted) {
  EditConfig([](Json& c) {
    c["config"]["layers"][1]["config"]["units"] = int64_t{1} << 62;
  });
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), config())) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, ASmallerBudgetRefusesWhatTheDefaultLoads) {
  absl::StatusOr<Sequential> m =
      LoadModel(dir_, {.graph = &g_, .max_bytes = 1024});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kResourceExhausted)
      << m.status();
  EXPECT_TRUE(absl::StrContains(m.status().message(), "1024 bytes"))
      << m.status();
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, AWeightsFileFarLargerThanTheConfigImpliesIsNotRead) {
  // Sparse: 64 MiB long, nothing on disk.
  fs::resize_file(weights(), int64_t{64} << 20);
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), weights())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "LoadOptions::max_bytes")) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, AWeightsFileWithMoreLayersThanTheConfigIsRefused) {
  // The config keeps Input and the first Dense; the file has dense_1 too.
  EditConfig([](Json& c) {
    c["config"]["layers"].erase(2);
    c["compile_config"] = nullptr;
  });
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), weights())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "Layer count mismatch")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "'layers/dense_1'")) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, KerasOptimizerStateInTheWeightsFileIsIgnored) {
  Graph g;
  absl::StatusOr<Sequential> saved = LoadModel(dir_, {.graph = &g});
  ASSERT_TRUE(saved.ok()) << saved.status();
  std::vector<LayerWeights> layers = {{.path = "layers/dense", .values = {}},
                                      {.path = "layers/dense_1", .values = {}},
                                      {.path = "optimizer", .values = {}}};
  const std::vector<Tensor> w = saved->GetWeights();
  layers[0].values = {w[0], w[1]};
  layers[1].values = {w[2], w[3]};
  layers[2].values = {w[0], w[1], w[2], w[3]};  // Adam's m, say
  absl::StatusOr<std::string> h5 = EncodeKerasWeights(layers);
  ASSERT_TRUE(h5.ok()) << h5.status();
  WriteFileBytes(weights(), *h5);
  absl::StatusOr<Sequential> m = LoadModel(dir_, {.graph = &g_});
  EXPECT_TRUE(m.ok()) << m.status();
}

TEST_F(BadFileTest, ConfigJsonNestedTooDeeplyIsRefusedBeforeItIsBuilt) {
  Json deep = Json::array();
  for (int i = 0; i < 100; ++i) deep = Json::array({deep});
  EditConfig([&](Json& c) { c["build_config"]["extra"] = deep; });
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), config())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "nested more than 64 deep")) << s;
  ExpectGraphUnchanged();
}

TEST_F(BadFileTest, ConfigJsonOfTooManyValuesIsRefusedBeforeItIsBuilt) {
  EditConfig([](Json& c) {
    c["build_config"]["extra"] = std::vector<int>(300000, 0);
  });
  const absl::Status s = Load();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), config())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "more than 262144 values")) << s;
  ExpectGraphUnchanged();
}

TEST(ReadSignature, AShapeWhoseElementCountOverflowsIsRefused) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  const std::string file = dir + "/signature.json";
  Json sig = ReadJson(file);
  sig["outputs"]["predictions"]["shape"] = {nullptr, int64_t{1} << 62, 8};
  WriteFileBytes(file, sig.dump());
  const absl::StatusOr<Signature> s = ReadSignature(dir);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument)
      << s.status();
  EXPECT_TRUE(absl::StartsWith(s.status().message(), file)) << s.status();
  EXPECT_TRUE(absl::StrContains(s.status().message(), "predictions"))
      << s.status();
  EXPECT_TRUE(absl::StrContains(s.status().message(), "field 'shape'"))
      << s.status();
}

TEST(ParseModelConfig, SumsTheWeightsOfASavedConfig) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  absl::StatusOr<ModelConfigSummary> summary =
      ParseModelConfig(ReadFileBytes(dir + "/config.json"), "config.json");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->num_layers, 3);
  // Dense(4 -> 8) and Dense(8 -> 3), with biases.
  EXPECT_EQ(summary->weights_bytes, (4 * 8 + 8 + 8 * 3 + 3) * 4);
  EXPECT_EQ(summary->load_bytes, 4 * summary->weights_bytes);
}

// ---------------------------------------------------------------------------
// The self-play pattern

TEST(LoadModel, LoadingAndDroppingAModelRepeatedlyKeepsTheGraphBounded) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  Graph g;
  const int64_t baseline = LiveAfterCollect(g);
  int64_t one_model = 0, peak = 0;
  {
    absl::StatusOr<Sequential> model = LoadModel(dir, {.graph = &g});
    ASSERT_TRUE(model.ok()) << model.status();
    one_model = g.num_nodes() - baseline;
    const int64_t collections_before = g.gc_stats().collections;
    // 60 loads: three times the bound below, so loads that were never
    // collected fail it, and several automatic collections in between.
    for (int i = 0; i < 60; ++i) {
      model = LoadModel(dir, {.graph = &g});  // drops the previous one
      ASSERT_TRUE(model.ok()) << model.status();
      peak = std::max(peak, g.num_nodes());
    }
    EXPECT_TRUE(model->Predict(X()).ok());
    EXPECT_GE(g.gc_stats().collections - collections_before, 3);
  }
  EXPECT_EQ(LiveAfterCollect(g), baseline);
  // The automatic collections keep it to a few models' worth at any time.
  EXPECT_LT(peak, baseline + 20 * one_model) << one_model;
}

TEST(LoadModel, ConcurrentLoadsAndSavesAreSafe) {
  const std::string dir = TestTempPath();
  SaveAModel(dir);
  std::vector<std::string> outs;
  for (int t = 0; t < 3; ++t)
    outs.push_back(TestTempPath(absl::StrCat("_", t)));
  std::vector<std::thread> threads;
  std::vector<int> failures(3, 0);
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      Graph g;
      for (int i = 0; i < 5; ++i) {
        absl::StatusOr<Sequential> m = LoadModel(dir, {.graph = &g});
        if (!m.ok() || !m->Save(outs[t]).ok()) {
          ++failures[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

}  // namespace
}  // namespace graphgc
