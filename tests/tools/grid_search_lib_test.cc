// tests/tools/grid_search_lib_test.cc: tools/grid_search_lib.h.
#include "tools/grid_search_lib.h"

#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/saving.h"
#include "serialize/event.pb.h"
#include "serialize/event_file.h"
#include "serialize/hparams_summary.h"
#include "tests/testing/temp_path.h"

namespace graphgc::grid {
namespace {

namespace fs = std::filesystem;

// `rows` rows of `classes` well-separated clusters in 4 features (values
// 0..16 like the digits), labels dealt in turn.
data::CsvDataset Clusters(int rows, int classes, uint64_t seed) {
  data::CsvDataset d;
  d.rows = rows;
  d.features = 4;
  d.num_classes = classes;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0, 1);
  for (int r = 0; r < rows; ++r) {
    const int label = r % classes;
    for (int c = 0; c < 4; ++c) {
      d.x.push_back(c == label % 4 ? 12 + noise(rng) : 4 + noise(rng));
    }
    d.labels.push_back(label);
  }
  return d;
}

// The events of every events file under `dir` (recursively), by path.
std::map<std::string, std::vector<proto::Event>> EventsUnder(
    const std::string& dir) {
  std::map<std::string, std::vector<proto::Event>> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() ||
        !IsEventFileName(e.path().filename().string())) {
      continue;
    }
    absl::StatusOr<std::vector<proto::Event>> events =
        EventFileReader::ReadAll(e.path().string());
    EXPECT_TRUE(events.ok()) << events.status();
    if (events.ok()) out[e.path().string()] = *events;
  }
  return out;
}

// The hparams plugin data of the summaries tagged `tag` in `events`.
std::vector<hparams::HParamsPluginData> PluginData(
    const std::vector<proto::Event>& events, const std::string& tag) {
  std::vector<hparams::HParamsPluginData> out;
  for (const proto::Event& e : events) {
    for (const proto::Summary::Value& v : e.summary().value()) {
      if (v.tag() != tag) continue;
      absl::StatusOr<hparams::HParamsPluginData> d =
          hparams::DecodePluginData(v);
      EXPECT_TRUE(d.ok()) << d.status();
      if (d.ok()) out.push_back(*d);
    }
  }
  return out;
}

TEST(GridSpec, SetParsesEachKeysList) {
  GridSpec spec;
  ASSERT_TRUE(spec.Set("architecture", "dense, conv").ok());
  ASSERT_TRUE(spec.Set("units", "8,16").ok());
  ASSERT_TRUE(spec.Set("dropout", "0,0.5").ok());
  ASSERT_TRUE(spec.Set("learning_rate", "1e-3").ok());
  ASSERT_TRUE(spec.Set("batch_size", "16,64").ok());
  EXPECT_EQ(spec.architectures, (std::vector<std::string>{"dense", "conv"}));
  EXPECT_EQ(spec.units, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(spec.dropouts, (std::vector<double>{0, 0.5}));
  EXPECT_EQ(spec.learning_rates, (std::vector<double>{0.001}));
  EXPECT_EQ(spec.batch_sizes, (std::vector<int>{16, 64}));
}

TEST(GridSpec, SetRefusesBadValuesNamingKeyAndValueAndChangesNothing) {
  GridSpec spec;
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{
           {"architecture", "rnn"},
           {"units", "0"},
           {"units", "8,x"},
           {"dropout", "1"},
           {"learning_rate", "-1"},
           {"learning_rate", "nan"},
           {"batch_size", "0"},
           {"units", ""},
           {"colour", "red"}}) {
    absl::Status s = spec.Set(key, value);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << key << value;
    EXPECT_NE(s.message().find(key), absl::string_view::npos) << s;
  }
  EXPECT_EQ(spec.units, (std::vector<int64_t>{64}));
}

TEST(ParseGridText, ReadsKeyValueLinesWithCommentsAndNamesTheBadLine) {
  absl::StatusOr<GridSpec> spec =
      ParseGridText("# a grid\nunits = 8, 16  # two\n\ndropout=0.25\n", "g");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->units, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(spec->dropouts, (std::vector<double>{0.25}));
  absl::StatusOr<GridSpec> bad = ParseGridText("units = 8\nunits 16\n", "g");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("g:2:"), absl::string_view::npos)
      << bad.status();
}

TEST(Expand, IsTheProductWithBatchSizeFastest) {
  GridSpec spec;
  spec.units = {8, 16};
  spec.batch_sizes = {16, 32, 64};
  std::vector<Config> configs = Expand(spec);
  ASSERT_EQ(configs.size(), 6u);
  EXPECT_EQ(configs[1].units, 8);
  EXPECT_EQ(configs[1].batch_size, 32);
  EXPECT_EQ(configs[3].units, 16);
  EXPECT_EQ(ConfigLabel(configs[3]), "dense u16 d0 lr0.001 b16");
}

TEST(StratifiedFolds, SpreadsEveryClassEvenlyAndIsReproducible) {
  std::vector<int32_t> labels;
  for (int i = 0; i < 103; ++i) labels.push_back(i % 3 == 0 ? 0 : i % 7);
  absl::StatusOr<std::vector<int>> folds = StratifiedFolds(labels, 5, 42);
  ASSERT_TRUE(folds.ok());
  std::map<int32_t, std::vector<int>> per_class;
  std::vector<int> sizes(5);
  for (size_t i = 0; i < labels.size(); ++i) {
    per_class[labels[i]].resize(5);
    ++per_class[labels[i]][(*folds)[i]];
    ++sizes[(*folds)[i]];
  }
  for (const auto& [label, counts] : per_class) {
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    EXPECT_LE(*hi - *lo, 1) << "class " << label;
  }
  const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
  EXPECT_LE(*hi - *lo, 1);
  EXPECT_EQ(*StratifiedFolds(labels, 5, 42), *folds);
  EXPECT_NE(*StratifiedFolds(labels, 5, 43), *folds);
}

TEST(StratifiedFolds, RefusesFewerThanTwoFoldsOrRows) {
  EXPECT_EQ(StratifiedFolds({0, 1, 0}, 1, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StratifiedFolds({0, 1}, 3, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GridSearchCreate, RefusesConvWithoutImageShapeAndAShapeOfTheWrongSize) {
  Config conv{.architecture = "conv"};
  absl::StatusOr<GridSearch> s =
      GridSearch::Create(Clusters(30, 3, 1), {conv}, {.folds = 3});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("image_shape"), absl::string_view::npos);
  s = GridSearch::Create(Clusters(30, 3, 1), {conv},
                         {.folds = 3, .image_shape = {2, 3, 1}});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(GridSearch::Create(Clusters(30, 3, 1), {conv},
                                 {.folds = 3, .image_shape = {2, 2, 1}})
                  .ok());
}

TEST(GridSearchCreate, RefusesAnEmptyGridAndOneClass) {
  EXPECT_FALSE(GridSearch::Create(Clusters(30, 3, 1), {}, {.folds = 3}).ok());
  EXPECT_FALSE(
      GridSearch::Create(Clusters(30, 1, 1), {Config{}}, {.folds = 3}).ok());
}

TEST(GridSearchCreate, RefusesAHugeLabelNamingItsRow) {
  // One label of 2^31 - 2 would size the output layer at 2^31 - 1 units.
  data::CsvDataset d = Clusters(40, 2, 1);
  d.labels[16] = 2147483646;
  d.num_classes = 2147483647;
  absl::StatusOr<GridSearch> s = GridSearch::Create(d, {Config{}}, {});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("data row 17: label 2147483646"),
            std::string::npos)
      << s.status();
}

TEST(CheckLabels, RefusesALabelAtOrOverTheLimitNamingItsRow) {
  absl::Status s = CheckLabels({0, 1, 100, 2}, 100);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("data row 3: label 100 is not in [0, 100)"),
            std::string::npos)
      << s;
}

TEST(CheckLabels, RefusesLabelsWhereFewerThanHalfOfTheIdsOccur) {
  std::vector<int32_t> labels;
  for (int32_t i = 0; i < 20; ++i) labels.push_back(i);
  EXPECT_TRUE(CheckLabels(labels, 10000).ok());  // 20 of 20 ids
  labels.push_back(40);                          // 21 of 41 ids
  EXPECT_TRUE(CheckLabels(labels, 10000).ok());
  labels.push_back(44);  // 22 of 45 ids
  absl::Status s = CheckLabels(labels, 10000);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("data row 22: label 44"), std::string::npos) << s;
  // Below 16 classes, any spread is accepted.
  EXPECT_TRUE(CheckLabels({0, 15}, 10000).ok());
}

TEST(CountTrials, CountsInInt64AndRefusesOverTheMaximum) {
  GridSpec spec;
  spec.units.clear();
  spec.dropouts.clear();
  for (int i = 1; i <= 65536; ++i) spec.units.push_back(i);
  for (int i = 0; i < 32768; ++i) spec.dropouts.push_back(i / 32768.0);
  // 2^16 x 2^15 configurations x 2 folds = 2^32 trials: 0 in an int.
  absl::StatusOr<int64_t> n = CountTrials(spec, 2, int64_t{1} << 40);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, int64_t{1} << 32);
  absl::StatusOr<int64_t> refused = CountTrials(spec, 2, 100000);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find(
                "= 4294967296 trials, over the maximum of 100000"),
            std::string::npos)
      << refused.status();
}

TEST(CountTrials, RefusesACountThatOverflowsInt64) {
  GridSpec spec;
  spec.architectures.assign(1 << 13, "dense");
  spec.units.assign(1 << 13, 1);
  spec.dropouts.assign(1 << 13, 0);
  spec.learning_rates.assign(1 << 13, 0.1);
  spec.batch_sizes.assign(1 << 13, 1);
  absl::StatusOr<int64_t> n = CountTrials(spec, 2, 100000);
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(n.status().message().find("more than 2^63"), std::string::npos)
      << n.status();
}

TEST(GridSearchCreate, RefusesMoreTrialsThanMaxTrials) {
  SearchOptions options;
  options.folds = 3;
  options.max_trials = 5;
  absl::StatusOr<GridSearch> s =
      GridSearch::Create(Clusters(30, 3, 1), {Config{}, Config{}}, options);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  options.max_trials = 6;
  EXPECT_TRUE(
      GridSearch::Create(Clusters(30, 3, 1), {Config{}, Config{}}, options)
          .ok());
}

TEST(CheckOutputPath, RefusesAPathThatCannotBeCreatedOrIsOfTheWrongKind) {
  const std::string dir = TestTempPath();
  fs::create_directories(dir);
  const std::string file = dir + "/a_file";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  EXPECT_TRUE(
      CheckOutputPath(dir + "/new/model", "--save_best", OutputKind::kDirectory)
          .ok());
  EXPECT_TRUE(CheckOutputPath(dir, "--logdir", OutputKind::kDirectory).ok());
  EXPECT_TRUE(CheckOutputPath(file, "--write_folds", OutputKind::kFile).ok());
  absl::Status under_file =
      CheckOutputPath(file + "/model", "--save_best", OutputKind::kDirectory);
  EXPECT_EQ(under_file.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(under_file.message().find("--save_best " + file + "/model"),
            std::string::npos)
      << under_file;
  EXPECT_EQ(CheckOutputPath(file, "--logdir", OutputKind::kDirectory).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CheckOutputPath(dir, "--write_folds", OutputKind::kFile).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CheckOutputPath("", "--logdir", OutputKind::kDirectory).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RunTrial, LearnsSeparableClusters) {
  Graph g;
  absl::StatusOr<GridSearch> s = GridSearch::Create(
      Clusters(240, 4, 1), {{.units = 16, .learning_rate = 0.01}},
      {.folds = 3, .max_epochs = 40, .graph = &g});
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<TrialResult> r = s->RunTrial(1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config, 0);
  EXPECT_EQ(r->fold, 1);
  EXPECT_GT(r->val_accuracy, 0.95f);
  EXPECT_GE(r->epochs, 1);
}

TEST(RunTrial, GivesTheSameResultBitForBitInAnyOrder) {
  Graph g;
  std::vector<Config> configs = {
      {.units = 8, .dropout = 0.2},
      {.architecture = "conv", .units = 4, .learning_rate = 0.01}};
  absl::StatusOr<GridSearch> s = GridSearch::Create(
      Clusters(90, 3, 2), configs,
      {.folds = 3, .max_epochs = 5, .image_shape = {2, 2, 1}, .graph = &g});
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<TrialResult> forward, backward(s->num_trials());
  for (int i = 0; i < s->num_trials(); ++i) {
    absl::StatusOr<TrialResult> r = s->RunTrial(i);
    ASSERT_TRUE(r.ok()) << r.status();
    forward.push_back(*r);
  }
  for (int i = s->num_trials() - 1; i >= 0; --i) {
    absl::StatusOr<TrialResult> r = s->RunTrial(i);
    ASSERT_TRUE(r.ok()) << r.status();
    backward[i] = *r;
  }
  for (int i = 0; i < s->num_trials(); ++i) {
    EXPECT_EQ(std::memcmp(&forward[i].val_accuracy, &backward[i].val_accuracy,
                          sizeof(float)),
              0)
        << i;
    EXPECT_EQ(
        std::memcmp(&forward[i].val_loss, &backward[i].val_loss, sizeof(float)),
        0)
        << i;
    EXPECT_EQ(forward[i].epochs, backward[i].epochs) << i;
  }
}

TEST(RunTrial, AnInjectedFailureNamesTheTrial) {
  Graph g;
  absl::StatusOr<GridSearch> s = GridSearch::Create(
      Clusters(30, 3, 1), {Config{}},
      {.folds = 3, .max_epochs = 1, .graph = &g, .fail_trial = 2});
  ASSERT_TRUE(s.ok());
  absl::StatusOr<TrialResult> r = s->RunTrial(2);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("trial 2 (c00_f2)"),
            absl::string_view::npos)
      << r.status();
  EXPECT_EQ(s->RunTrial(3).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RunTrial, OverAHundredTrialsTheGraphAndRssStayBounded) {
  Graph g;
  GridSpec spec;
  spec.units = {4, 8, 12, 16, 20};
  spec.dropouts = {0, 0.1, 0.2, 0.3, 0.4};
  absl::StatusOr<GridSearch> s =
      GridSearch::Create(Clusters(60, 3, 3), Expand(spec),
                         {.folds = 4, .max_epochs = 2, .graph = &g});
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_GE(s->num_trials(), 100);
  std::vector<TrialResult> results;
  int64_t one_model = 0;
  for (int i = 0; i < s->num_trials(); ++i) {
    absl::StatusOr<TrialResult> r = s->RunTrial(i);
    ASSERT_TRUE(r.ok()) << r.status();
    if (i == 0) one_model = r->live_nodes;
    results.push_back(*r);
  }
  const ProcessStats stats = StatsOf(0, results, g, 0);
  EXPECT_EQ(stats.trials, s->num_trials());
  // At most the model being fit and the garbage of a few before it.
  EXPECT_LE(stats.live_nodes_max, 4 * one_model) << "one model: " << one_model;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // Sanitizers keep freed memory in quarantine, so RSS says nothing there.
  EXPECT_LE(static_cast<double>(stats.rss_last_kb) / stats.rss_first_kb, 1.05);
#endif
}

TEST(RunTrial, WritesTensorBoardRunsAndHParamsSessionsTheExperimentToo) {
  Graph g;
  const std::string logdir = TestTempPath();
  std::vector<Config> configs = {{.units = 8}, {.units = 16, .dropout = 0.5}};
  absl::StatusOr<GridSearch> s = GridSearch::Create(
      Clusters(60, 3, 1), configs,
      {.folds = 2, .max_epochs = 2, .logdir = logdir, .graph = &g});
  ASSERT_TRUE(s.ok());
  for (int i = 0; i < s->num_trials(); ++i) ASSERT_TRUE(s->RunTrial(i).ok());
  ASSERT_TRUE(s->WriteExperiment().ok());

  // The experiment, in the root run only.
  std::vector<proto::Event> root;
  for (const auto& e : fs::directory_iterator(logdir)) {
    if (e.is_regular_file()) {
      root = *EventFileReader::ReadAll(e.path().string());
    }
  }
  std::vector<hparams::HParamsPluginData> experiment =
      PluginData(root, hparams::kExperimentTag);
  ASSERT_EQ(experiment.size(), 1u);
  const hparams::Experiment& e = experiment[0].experiment();
  ASSERT_EQ(e.hparam_infos_size(), 5);
  EXPECT_EQ(e.hparam_infos(1).name(), "units");
  EXPECT_EQ(e.hparam_infos(1).domain_discrete().values_size(), 2);
  ASSERT_GE(e.metric_infos_size(), 2);
  EXPECT_EQ(e.metric_infos(0).name().tag(), "fold_accuracy");
  EXPECT_EQ(e.metric_infos(1).name().group(), "validation");
  EXPECT_EQ(e.metric_infos(1).name().tag(), "epoch_accuracy");

  // Per trial: session start and end, fold_accuracy, train/ and validation/.
  for (int i = 0; i < s->num_trials(); ++i) {
    const std::string dir = logdir + "/" + s->TrialName(i);
    std::vector<proto::Event> session;
    for (const auto& f : fs::directory_iterator(dir)) {
      if (f.is_regular_file()) {
        session = *EventFileReader::ReadAll(f.path().string());
      }
    }
    std::vector<hparams::HParamsPluginData> start =
        PluginData(session, hparams::kSessionStartInfoTag);
    ASSERT_EQ(start.size(), 1u) << dir;
    const hparams::SessionStartInfo& info = start[0].session_start_info();
    EXPECT_EQ(info.hparams().at("units").number_value(), configs[i / 2].units);
    EXPECT_EQ(info.hparams().at("dropout").number_value(),
              configs[i / 2].dropout);
    EXPECT_EQ(info.hparams().at("architecture").string_value(), "dense");
    EXPECT_EQ(info.group_name(), i < 2 ? "c00" : "c01");
    std::vector<hparams::HParamsPluginData> end =
        PluginData(session, hparams::kSessionEndInfoTag);
    ASSERT_EQ(end.size(), 1u);
    EXPECT_EQ(end[0].session_end_info().status(), hparams::STATUS_SUCCESS);
    bool fold_accuracy = false;
    for (const proto::Event& ev : session) {
      for (const auto& v : ev.summary().value()) {
        fold_accuracy |= v.tag() == "fold_accuracy";
      }
    }
    EXPECT_TRUE(fold_accuracy) << dir;
    EXPECT_FALSE(EventsUnder(dir + "/train").empty());
    bool val_accuracy = false;
    for (const auto& [path, events] : EventsUnder(dir + "/validation")) {
      for (const proto::Event& ev : events) {
        for (const auto& v : ev.summary().value()) {
          val_accuracy |= v.tag() == "epoch_accuracy";
        }
      }
    }
    EXPECT_TRUE(val_accuracy) << dir;
  }
}

TEST(TrainAndSave, SavesAModelThatLoadsBack) {
  Graph g;
  const std::string dir = TestTempPath();
  absl::StatusOr<GridSearch> s = GridSearch::Create(
      Clusters(60, 3, 1), {{.units = 8}}, {.folds = 2, .graph = &g});
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->TrainAndSave(s->configs()[0], 2, dir).ok());
  absl::StatusOr<Sequential> loaded = LoadModel(dir, {.graph = &g});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->layers().size(), 3u);
}

TEST(SummarizeConfigs, MeanAndPopulationStdOverFoldsAndTheBest) {
  std::vector<TrialResult> results = {
      {.index = 0, .config = 0, .fold = 0, .epochs = 2, .val_accuracy = 0.5f},
      {.index = 1, .config = 0, .fold = 1, .epochs = 4, .val_accuracy = 0.7f},
      {.index = 2, .config = 1, .fold = 0, .epochs = 3, .val_accuracy = 0.9f},
      {.index = 3, .config = 1, .fold = 1, .epochs = 3, .val_accuracy = 0.9f}};
  std::vector<ConfigSummary> s = SummarizeConfigs(3, results);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0].mean_accuracy, 0.6, 1e-6);
  EXPECT_NEAR(s[0].std_accuracy, 0.1, 1e-6);
  EXPECT_EQ(s[0].mean_epochs, 3);
  EXPECT_EQ(s[1].folds, 2);
  EXPECT_NEAR(s[1].std_accuracy, 0, 1e-9);
  EXPECT_EQ(s[2].folds, 0);
  EXPECT_EQ(BestConfig(s), 1);
  EXPECT_EQ(BestConfig({}), -1);
}

}  // namespace
}  // namespace graphgc::grid
