#include "models/model_data.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "models/batches.h"
#include "models/sample_weights.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

namespace {

std::string InputLabel(const ModelState& m, size_t i) {
  if (m.inputs.size() == 1) return "x";
  return absl::StrCat("input '", m.input_names[i], "' (x[", i, "])");
}

std::string OutputLabel(const ModelState& m, int o) {
  if (m.outputs.size() == 1) return "y";
  return absl::StrCat("output '", m.output_names[o], "' (y[", o, "])");
}

}  // namespace

absl::StatusOr<ModelData> CheckInputs(const ModelState& m,
                                      std::vector<Tensor> xs,
                                      const std::string& where) {
  if (xs.size() != m.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the model has ", m.inputs.size(),
                     " inputs but x has ", xs.size(), " tensors"));
  }
  ModelData data;
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::string what = InputLabel(m, i);
    GG_ASSIGN_OR_RETURN(const int64_t n, CheckInput(m, i, xs[i], where, what));
    if (i == 0) {
      data.samples = n;
    } else if (n != data.samples) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", what, " has ", n, " samples but ",
                       InputLabel(m, 0), " has ", data.samples,
                       "; every input and label needs one row per "
                       "sample"));
    }
  }
  data.x = std::move(xs);
  return data;
}

absl::StatusOr<ModelData> CheckData(const ModelState& m,
                                    const std::vector<OutputNodes>& outputs,
                                    std::vector<Tensor> xs,
                                    std::vector<Tensor> ys,
                                    const std::string& where,
                                    std::optional<Tensor> sample_weight) {
  GG_ASSIGN_OR_RETURN(ModelData data, CheckInputs(m, std::move(xs), where));
  const bool all = ys.size() == m.outputs.size();
  if (!all && ys.size() != outputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": the model has ", m.outputs.size(), " outputs (",
        outputs.size(), " with a loss) but y has ", ys.size(), " tensors"));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const OutputNodes& out = outputs[k];
    Tensor& y = ys[all ? static_cast<size_t>(out.output) : k];
    const std::string what = OutputLabel(m, out.output);
    const int64_t n = y.shape().dims() == 0 ? -1 : y.shape()[0];
    if (n != data.samples) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": ", InputLabel(m, 0), " has ", data.samples, " samples but ",
          what, " has ", n < 0 ? std::string("a scalar") : absl::StrCat(n),
          " (shape ", y.shape().DebugString(), ")"));
    }
    GG_RETURN_IF_ERROR(CheckLabels(
        out.loss, out.units, y, data.samples,
        m.outputs.size() == 1 ? where : absl::StrCat(where, ": ", what)));
    data.labels.push_back(std::move(y));
  }
  if (sample_weight.has_value()) {
    GG_RETURN_IF_ERROR(CheckSampleWeight(*sample_weight, data.samples, where));
    data.sample_weight = std::move(sample_weight);
  }
  return data;
}

}  // namespace models_internal
}  // namespace graphgc
