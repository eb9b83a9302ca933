// models/learning_rate_schedule_config.h: a schedule written as Keras 3
// serialises it, and read back; and a compile_config whose optimizer's
// learning_rate is one.
#include "models/learning_rate_schedule_config.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "models/compile_config.h"
#include "models/keras_json.h"
#include "models/learning_rate_schedule.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving_access.h"

namespace graphgc {
namespace models_internal {
namespace {

bool Mentions(const absl::Status& s, const std::string& text) {
  return s.message().find(text) != absl::string_view::npos;
}

LearningRateSchedule Make(LearningRateSchedule::Options o) {
  return LearningRateSchedule::Create(std::move(o)).value();
}

absl::StatusOr<LearningRateSchedule> Read(const Json& j) {
  return ReadSchedule(ConfigObject(j, "config.json: optimizer learning_rate"));
}

TEST(ScheduleJson, IsKerasSerializedObject) {
  const Json j = ScheduleJson(
      Make(schedules::ExponentialDecay{.initial_learning_rate = 0.1,
                                       .decay_steps = 100000,
                                       .decay_rate = 0.96,
                                       .staircase = true}));
  EXPECT_EQ(j["module"], "keras.optimizers.schedules");
  EXPECT_EQ(j["class_name"], "ExponentialDecay");
  EXPECT_TRUE(j["registered_name"].is_null());
  const Json& c = j["config"];
  EXPECT_EQ(c["initial_learning_rate"], 0.1);
  EXPECT_TRUE(c["decay_steps"].is_number_integer());
  EXPECT_EQ(c["decay_steps"], 100000);
  EXPECT_EQ(c["decay_rate"], 0.96);
  EXPECT_EQ(c["staircase"], true);
  EXPECT_EQ(c["name"], "ExponentialDecay");
}

TEST(ScheduleJson, EveryScheduleReadsBackTheSame) {
  const std::vector<LearningRateSchedule> all = {
      Make(schedules::ExponentialDecay{
          .initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = 0.5}),
      Make(schedules::PiecewiseConstantDecay{.boundaries = {10, 20.5},
                                             .values = {1.0, 0.5, 0.1}}),
      Make(schedules::InverseTimeDecay{.initial_learning_rate = 0.1,
                                       .decay_steps = 1.5,
                                       .decay_rate = 0.5,
                                       .staircase = true,
                                       .name = "itd"}),
      Make(schedules::PolynomialDecay{.initial_learning_rate = 0.1,
                                      .decay_steps = 10,
                                      .end_learning_rate = 0.01,
                                      .power = 0.5,
                                      .cycle = true}),
      Make(schedules::CosineDecay{.initial_learning_rate = 0.0,
                                  .decay_steps = 10,
                                  .alpha = 0.1,
                                  .warmup_target = 0.1,
                                  .warmup_steps = 5}),
      Make(schedules::CosineDecay{.initial_learning_rate = 0.1,
                                  .decay_steps = 10}),
      Make(schedules::CosineDecayRestarts{.initial_learning_rate = 0.1,
                                          .first_decay_steps = 10,
                                          .t_mul = 1.5,
                                          .m_mul = 0.5,
                                          .alpha = 0.2}),
  };
  for (const LearningRateSchedule& s : all) {
    absl::StatusOr<LearningRateSchedule> back = Read(ScheduleJson(s));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, s) << s.class_name();
  }
}

TEST(ReadSchedule, ReadsWhatKerasWritesWithItsDefaults) {
  // keras.optimizers.schedules.serialize(CosineDecay(0.1, 1000)).
  const Json j = Json::parse(R"({
      "module": "keras.optimizers.schedules", "class_name": "CosineDecay",
      "config": {"initial_learning_rate": 0.1, "decay_steps": 1000,
                 "alpha": 0.0, "name": "CosineDecay", "warmup_target": null,
                 "warmup_steps": 0},
      "registered_name": null})");
  absl::StatusOr<LearningRateSchedule> s = Read(j);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, Make(schedules::CosineDecay{.initial_learning_rate = 0.1,
                                            .decay_steps = 1000}));
}

TEST(ReadSchedule, RefusesAnUnknownScheduleNamingIt) {
  const absl::Status s =
      Read(Json::parse(R"({"class_name": "OneCycle", "config": {}})")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "unknown learning-rate schedule 'OneCycle'")) << s;
}

TEST(ReadSchedule, RefusesAMissingOrBadArgumentNamingIt) {
  const absl::Status missing =
      Read(Json::parse(R"({"class_name": "ExponentialDecay", "config":
                          {"initial_learning_rate": 0.1, "decay_rate": 0.5}})"))
          .status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(missing, "decay_steps")) << missing;
  const absl::Status zero =
      Read(Json::parse(R"({"class_name": "ExponentialDecay", "config":
                          {"initial_learning_rate": 0.1, "decay_steps": 0,
                           "decay_rate": 0.5}})"))
          .status();
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(zero, "config.json: optimizer learning_rate")) << zero;
  EXPECT_TRUE(Mentions(zero, "Argument `decay_steps` must be > 0")) << zero;
  const absl::Status text =
      Read(Json::parse(R"({"class_name": "PiecewiseConstantDecay", "config":
                          {"boundaries": ["10"], "values": [1.0, 0.5]}})"))
          .status();
  EXPECT_TRUE(Mentions(text, "boundaries")) << text;
}

TEST(CompileConfig, WritesAndReadsAScheduleAsTheOptimizersRate) {
  SavedCompile compile{.optimizer = optimizers::SGD({.momentum = 0.5f}),
                       .loss = losses::MeanSquaredError()};
  compile.optimizer.learning_rate_schedule =
      Make(schedules::PiecewiseConstantDecay{.boundaries = {4},
                                             .values = {0.2, 0.02}});
  const Json j = CompileJson(compile);
  const Json& rate = j["optimizer"]["config"]["learning_rate"];
  EXPECT_EQ(rate["class_name"], "PiecewiseConstantDecay");
  absl::StatusOr<CompileOptions> back =
      ReadCompile(ConfigObject(j, "config.json: compile_config"));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->optimizer.learning_rate_schedule.has_value());
  EXPECT_EQ(*back->optimizer.learning_rate_schedule,
            *compile.optimizer.learning_rate_schedule);
  EXPECT_EQ(std::get<SGDOptions>(back->optimizer.options).momentum, 0.5f);
}

TEST(CompileConfig, AFloatRateReadsBackWithoutASchedule) {
  const SavedCompile compile{.optimizer = optimizers::Adam(),
                             .loss = losses::MeanSquaredError()};
  absl::StatusOr<CompileOptions> back = ReadCompile(
      ConfigObject(CompileJson(compile), "config.json: compile_config"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->optimizer.learning_rate_schedule.has_value());
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
