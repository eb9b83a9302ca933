// models/optimizers/adam.h
//
// Adam's checks, config and update, shared by Adam (adam.cc) and AdamW
// (adamw.cc), which differs only by its weight decay. Private to models/.
#ifndef GRAPHGC_MODELS_OPTIMIZERS_ADAM_H_
#define GRAPHGC_MODELS_OPTIMIZERS_ADAM_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/keras_json.h"
#include "models/optimizer_registry.h"
#include "models/optimizers.h"

namespace graphgc {
namespace models_internal {

// Refuses options that can only make NaN weights, named "<class_name> ...".
absl::Status CheckAdamOptions(const std::string& class_name,
                              const AdamOptions& o);

// Keras's serialised optimizer of class `class_name` named `name`.
Json AdamConfig(const char* class_name, const char* name, const AdamOptions& o);

// Adam's fields of a compile_config "config" (absent: Keras's defaults).
absl::StatusOr<AdamOptions> ReadAdamOptions(const ConfigObject& c);

// Adam's update under "<scope>/<class_name>".
// The variables keras/src/optimizers/adam.py's build adds: momentums and
// velocities interleaved per weight, then (amsgrad) the velocity_hats; the
// beta powers ResourceApplyAdam takes are Keras's power(beta, t).
OptimizerStateLayout AdamStateLayout(const AdamOptions& o);

absl::StatusOr<OptimizerUpdates> BuildAdamUpdates(const AdamOptions& o,
                                                  const std::string& class_name,
                                                  const UpdateInputs& in);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_OPTIMIZERS_ADAM_H_
