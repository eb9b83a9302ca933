// The API.md seed program, run as a test: ten unrelated models on the
// default graph, one epoch each, each with a TensorBoard callback. Every
// event file must hold the same number of graph nodes and graph bytes that
// do not grow with i, with the models dropped as in the seed and also when
// every model is kept alive; and nothing may be left behind.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "runtime/tensor.h"
#include "serialize/event_file.h"
#include "serialize/graph.pb.h"
#include "tests/testing/temp_path.h"

namespace gg = graphgc;

namespace {

// --- the seed program, as in API.md ---

gg::Sequential ModelFn() {
  gg::Sequential model =
      gg::Sequential::Create(
          {
              gg::layers::Input({10}),
              gg::layers::Dense(64, {.activation = "relu"}),
              gg::layers::Dense(10, {.activation = "softmax"}),
          })
          .value();
  absl::Status s =
      model.Compile({.optimizer = gg::optimizers::Adam(),
                     .loss = gg::losses::SparseCategoricalCrossentropy()});
  if (!s.ok()) std::abort();
  return model;
}

struct SeedData {
  gg::Tensor x, y;
};

SeedData MakeData() {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(0, 1);
  std::uniform_int_distribution<int32_t> label(0, 9);
  std::vector<float> xs(1000 * 10);
  std::vector<int32_t> ys(1000);
  for (float& v : xs) v = u(rng);
  for (int32_t& v : ys) v = label(rng);
  return {gg::Tensor::FromData<float>({1000, 10}, xs).value(),
          gg::Tensor::FromData<int32_t>({1000}, ys).value()};
}

// --- what the test reads back ---

struct GraphFacts {
  int nodes = 0;
  size_t bytes = 0;
  int batch_loss = 0;
  int epoch_loss = 0;
  float first_loss = 0;
};

GraphFacts ReadFacts(const std::string& dir) {
  GraphFacts facts;
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
    std::vector<gg::proto::Event> events =
        gg::EventFileReader::ReadAll(e.path().string()).value();
    EXPECT_EQ(events.at(0).file_version(), "brain.Event:2");
    for (const gg::proto::Event& ev : events) {
      if (ev.has_graph_def()) {
        gg::proto::GraphDef g;
        EXPECT_TRUE(g.ParseFromString(ev.graph_def()));
        facts.nodes = g.node_size();
        facts.bytes = ev.graph_def().size();
      }
      for (const auto& v : ev.summary().value()) {
        if (v.tag() == "batch_loss") ++facts.batch_loss;
        if (v.tag() == "epoch_loss") {
          ++facts.epoch_loss;
          facts.first_loss = v.simple_value();
        }
      }
    }
  }
  EXPECT_EQ(files, 1) << dir;
  return facts;
}

class SeedProgram : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = gg::TestTempPath();
    std::filesystem::create_directories(dir_);
    ASSERT_EQ(chdir(dir_.c_str()), 0);
  }
  std::string dir_;
};

TEST_P(SeedProgram, EveryExportHoldsTheSameGraph) {
  const bool keep_alive = GetParam();
  SeedData data = MakeData();
  gg::Graph& g = gg::Graph::Default();
  g.Collect();
  const int64_t before = g.num_nodes();
  std::vector<gg::Sequential> alive;
  for (int i = 0; i < 10; ++i) {
    gg::Sequential model = ModelFn();
    auto tensorboard = gg::callbacks::TensorBoard::Create(
        {.log_dir = absl::StrCat("logs/", i), .update_freq = 600});
    gg::History history =
        model.Fit(data.x, data.y, {.verbose = 0, .callbacks = {tensorboard}})
            .value();
    // Random labels: one epoch's loss stays near ln 10 ~ 2.30.
    EXPECT_NEAR(history.values("loss")[0], std::log(10.0), 0.1) << i;
    if (keep_alive) alive.push_back(model);
  }
  GraphFacts first = ReadFacts("logs/0/train");
  EXPECT_GT(first.nodes, 50);
  EXPECT_EQ(first.epoch_loss, 1);
  EXPECT_EQ(first.batch_loss, 0);  // 32 batches < update_freq 600
  for (int i = 1; i < 10; ++i) {
    GraphFacts facts = ReadFacts(absl::StrCat("logs/", i, "/train"));
    EXPECT_EQ(facts.nodes, first.nodes) << i;
    // Model-local names: the same bytes, not just the same node count.
    EXPECT_EQ(facts.bytes, first.bytes) << i;
  }
  alive.clear();
  g.Collect();
  EXPECT_EQ(g.num_nodes(), before);
}

INSTANTIATE_TEST_SUITE_P(DroppedOrKeptAlive, SeedProgram, ::testing::Bool());

}  // namespace
