// tests/serialize/hparams_summary_test.cc: serialize/hparams_summary.h.
#include "serialize/hparams_summary.h"

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "serialize/event.pb.h"
#include "serialize/event_file.h"
#include "tests/testing/temp_path.h"

namespace graphgc::hparams {
namespace {

// The events of the one events file in `dir`.
std::vector<proto::Event> ReadDir(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    files.push_back(e.path().string());
  }
  EXPECT_EQ(files.size(), 1u) << dir;
  if (files.size() != 1) return {};
  absl::StatusOr<std::vector<proto::Event>> events =
      EventFileReader::ReadAll(files[0]);
  EXPECT_TRUE(events.ok()) << events.status();
  return events.ok() ? *events : std::vector<proto::Event>{};
}

TEST(ExperimentSummary, CarriesEveryHParamWithItsDomainAndEveryMetric) {
  absl::StatusOr<proto::Summary> s = ExperimentSummary(
      {{"units", {64.0, 128.0}}, {"architecture", {std::string("dense")}}},
      {{"validation", "epoch_accuracy", "val acc", DATASET_VALIDATION}}, 123.5);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->value_size(), 1);
  const proto::Summary::Value& v = s->value(0);
  EXPECT_EQ(v.tag(), "_hparams_/experiment");
  EXPECT_EQ(v.metadata().plugin_data().plugin_name(), "hparams");
  // TensorBoard's NULL_TENSOR: an empty float vector.
  EXPECT_EQ(v.tensor().dtype(), proto::DT_FLOAT);
  ASSERT_EQ(v.tensor().tensor_shape().dim_size(), 1);
  EXPECT_EQ(v.tensor().tensor_shape().dim(0).size(), 0);
  absl::StatusOr<HParamsPluginData> data = DecodePluginData(v);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->version(), 0);
  ASSERT_TRUE(data->has_experiment());
  const Experiment& e = data->experiment();
  EXPECT_EQ(e.time_created_secs(), 123.5);
  ASSERT_EQ(e.hparam_infos_size(), 2);
  EXPECT_EQ(e.hparam_infos(0).name(), "units");
  EXPECT_EQ(e.hparam_infos(0).type(), DATA_TYPE_FLOAT64);
  ASSERT_EQ(e.hparam_infos(0).domain_discrete().values_size(), 2);
  EXPECT_EQ(e.hparam_infos(0).domain_discrete().values(1).number_value(), 128);
  EXPECT_EQ(e.hparam_infos(1).type(), DATA_TYPE_STRING);
  EXPECT_EQ(e.hparam_infos(1).domain_discrete().values(0).string_value(),
            "dense");
  ASSERT_EQ(e.metric_infos_size(), 1);
  EXPECT_EQ(e.metric_infos(0).name().group(), "validation");
  EXPECT_EQ(e.metric_infos(0).name().tag(), "epoch_accuracy");
  EXPECT_EQ(e.metric_infos(0).display_name(), "val acc");
  EXPECT_EQ(e.metric_infos(0).dataset_type(), DATASET_VALIDATION);
}

TEST(ExperimentSummary, RefusesMixedTypesRepeatedNamesAndEmptyDomains) {
  EXPECT_EQ(ExperimentSummary({{"u", {1.0, std::string("x")}}}, {}, 0)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ExperimentSummary({{"u", {1.0}}, {"u", {2.0}}}, {}, 0).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExperimentSummary({{"u", {}}}, {}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExperimentSummary({}, {{"g", ""}}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExperimentSummary({}, {{"g", "t"}, {"g", "t"}}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SessionSummaries, StartHoldsTheValuesAndGroupAndEndTheStatus) {
  proto::Summary start = SessionStartSummary(
      {{"units", 64.0}, {"architecture", std::string("conv")}, {"bn", true}},
      "c3", 10.0);
  ASSERT_EQ(start.value_size(), 1);
  EXPECT_EQ(start.value(0).tag(), "_hparams_/session_start_info");
  absl::StatusOr<HParamsPluginData> s = DecodePluginData(start.value(0));
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(s->has_session_start_info());
  const SessionStartInfo& info = s->session_start_info();
  EXPECT_EQ(info.group_name(), "c3");
  EXPECT_EQ(info.start_time_secs(), 10.0);
  EXPECT_EQ(info.hparams().at("units").number_value(), 64);
  EXPECT_EQ(info.hparams().at("architecture").string_value(), "conv");
  EXPECT_TRUE(info.hparams().at("bn").bool_value());

  proto::Summary end = SessionEndSummary(STATUS_SUCCESS, 20.0);
  EXPECT_EQ(end.value(0).tag(), "_hparams_/session_end_info");
  absl::StatusOr<HParamsPluginData> e = DecodePluginData(end.value(0));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->session_end_info().status(), STATUS_SUCCESS);
  EXPECT_EQ(e->session_end_info().end_time_secs(), 20.0);
}

TEST(SessionSummaries, EndInfoHasTensorBoardsFieldNumbers) {
  // TensorBoard's plugin_data.proto: SessionEndInfo { Status status = 1;
  // double end_time_secs = 2; }, inside HParamsPluginData field 4.
  SessionEndInfo end;
  end.set_status(STATUS_FAILURE);
  end.set_end_time_secs(0.5);
  const std::string bytes = end.SerializeAsString();
  ASSERT_EQ(bytes.size(), 11u);
  EXPECT_EQ(bytes[0], '\x08');  // field 1, varint
  EXPECT_EQ(bytes[1], '\x02');  // STATUS_FAILURE
  EXPECT_EQ(bytes[2], '\x11');  // field 2, 64-bit
  double d = 0;
  std::memcpy(&d, bytes.data() + 3, 8);
  EXPECT_EQ(d, 0.5);
  HParamsPluginData data;
  *data.mutable_session_end_info() = end;
  EXPECT_EQ(data.SerializeAsString()[0], '\x22');  // field 4, bytes
}

TEST(DecodePluginData, RefusesAnotherPluginsSummary) {
  proto::Summary::Value v;
  v.set_tag("epoch_loss");
  v.set_simple_value(1);
  absl::StatusOr<HParamsPluginData> d = DecodePluginData(v);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  v.mutable_metadata()->mutable_plugin_data()->set_plugin_name("hparams");
  v.mutable_metadata()->mutable_plugin_data()->set_content("\xff\xff");
  EXPECT_EQ(DecodePluginData(v).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(WriteSummaries, WritesOneEventPerSummaryAfterTheFileVersion) {
  const std::string dir = TestTempPath();
  ASSERT_TRUE(WriteSummaries(dir,
                             {SessionStartSummary({{"u", 1.0}}, "", 5),
                              SessionEndSummary(STATUS_SUCCESS, 6)},
                             7.0)
                  .ok());
  std::vector<proto::Event> events = ReadDir(dir);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_EQ(events[1].wall_time(), 7.0);
  EXPECT_EQ(events[1].summary().value(0).tag(), kSessionStartInfoTag);
  EXPECT_EQ(events[2].summary().value(0).tag(), kSessionEndInfoTag);
}

TEST(WriteSummaries, AnEmptyDirectoryIsRefused) {
  EXPECT_EQ(WriteSummaries("", {}, 0).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphgc::hparams
