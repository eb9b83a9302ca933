// models/model_data.h
//
// A model's data in the list forms of Functional's Fit, Evaluate and
// Predict: one x per input and one y per output, checked against the model
// and its compiled losses before anything runs. Private to models/.
#ifndef GRAPHGC_MODELS_MODEL_DATA_H_
#define GRAPHGC_MODELS_MODEL_DATA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/model_state.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {

// Checked data: every tensor's first dimension is `samples`.
struct ModelData {
  std::vector<Tensor> x;       // one per input, in the model's order
  std::vector<Tensor> labels;  // one per trained output (`outputs` below)
  // Each sample's loss weight, float [samples] (or [samples, 1]), shared
  // by every trained output's loss; none: every weight is 1.
  std::optional<Tensor> sample_weight;
  int64_t samples = 0;
};

// Checks `xs` against the model's inputs: as many as it has, each float
// [samples, <its Input shape>], all with the same sample count.
// InvalidArgument naming `where`, the input ("input 'title' (x[0])") and
// both counts.
absl::StatusOr<ModelData> CheckInputs(const ModelState& m,
                                      std::vector<Tensor> xs,
                                      const std::string& where);

// CheckInputs, then `ys` against the trained outputs `outputs`: one per
// model output (an untrained output's is not read) or one per trained
// output, each with the sample count of x and labels its loss takes; then
// `sample_weight`, when given, against the sample count
// (CheckSampleWeight, models/sample_weights.h).
absl::StatusOr<ModelData> CheckData(
    const ModelState& m, const std::vector<OutputNodes>& outputs,
    std::vector<Tensor> xs, std::vector<Tensor> ys, const std::string& where,
    std::optional<Tensor> sample_weight = std::nullopt);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_MODEL_DATA_H_
