// models/sample_weights.h
//
// Per-sample loss weights as Keras's fit and evaluate take them:
// sample_weight arrays checked against the data, class_weight maps turned
// into per-sample weights from the labels, and a batch's weights gathered
// for the compiled step's weight placeholder (all ones when no weights are
// given). Private to models/.
#ifndef GRAPHGC_MODELS_SAMPLE_WEIGHTS_H_
#define GRAPHGC_MODELS_SAMPLE_WEIGHTS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {

// Checks that `w` is float [samples] or [samples, 1]: InvalidArgument
// naming `where` otherwise.
absl::Status CheckSampleWeight(const Tensor& w, int64_t samples,
                               const std::string& where);

// Keras's class_weight_to_sample_weights: float [samples], each sample's
// weight class_weight[its class] (1 for a class not listed), its class
// being the argmax of a row of y when y has rows of several values, else
// y's value rounded half to even. `y` was checked by CheckLabels.
absl::StatusOr<Tensor> ClassWeightsToSampleWeights(
    const Tensor& y, const std::map<int64_t, float>& class_weight,
    const std::string& where);

// The weights of `rows` as float [rows.size()]: ones when `w` is null.
absl::StatusOr<Tensor> GatherWeights(const Tensor* w,
                                     absl::Span<const int64_t> rows);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_SAMPLE_WEIGHTS_H_
