// models/learning_rate_schedule_config.h
//
// A learning-rate schedule in a compile_config: the optimizer's
// "learning_rate" written as Keras 3 serialises a schedule
// (keras.optimizers.schedules.serialize: {"module":
// "keras.optimizers.schedules", "class_name": "ExponentialDecay", "config":
// {...}, "registered_name": null}) and read back. Private to models/.
#ifndef GRAPHGC_MODELS_LEARNING_RATE_SCHEDULE_CONFIG_H_
#define GRAPHGC_MODELS_LEARNING_RATE_SCHEDULE_CONFIG_H_

#include "absl/status/statusor.h"
#include "models/keras_json.h"
#include "models/learning_rate_schedule.h"

namespace graphgc {
namespace models_internal {

// Keras's serialised schedule: its get_config() fields under "config".
Json ScheduleJson(const LearningRateSchedule& schedule);

// The schedule a serialised one describes (absent fields take Keras's
// defaults; the arguments Keras requires are required). Errors name the
// field, as ConfigObject's do, or the schedule's argument (Create's).
absl::StatusOr<LearningRateSchedule> ReadSchedule(const ConfigObject& object);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_LEARNING_RATE_SCHEDULE_CONFIG_H_
