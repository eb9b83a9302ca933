#include "models/training.h"

#include <unistd.h>

#include <cmath>
#include <variant>

#include "absl/strings/str_cat.h"
#include "models/losses.h"
#include "ops/ops.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {

std::string Loss::name() const {
  switch (kind) {
    case Kind::kSparseCategoricalCrossentropy:
      return "sparse_categorical_crossentropy";
    case Kind::kCategoricalCrossentropy:
      return "categorical_crossentropy";
    case Kind::kMeanSquaredError:
      return "mean_squared_error";
    case Kind::kNone:
      break;
  }
  return "none";
}

namespace losses {
Loss SparseCategoricalCrossentropy(CrossentropyOptions options) {
  return Loss{.kind = Loss::Kind::kSparseCategoricalCrossentropy,
              .from_logits = options.from_logits};
}
Loss CategoricalCrossentropy(CrossentropyOptions options) {
  return Loss{.kind = Loss::Kind::kCategoricalCrossentropy,
              .from_logits = options.from_logits};
}
Loss MeanSquaredError() { return Loss{.kind = Loss::Kind::kMeanSquaredError}; }
}  // namespace losses

namespace models_internal {
absl::Status CheckFits(DataType dtype, const TensorShape& shape, int64_t copies,
                       const std::string& what) {
  absl::Status valid = TensorShape::Validate(shape.dim_sizes(), false);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", valid.message()));
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(shape.num_elements(), DataTypeSize(dtype),
                             &bytes) ||
      __builtin_mul_overflow(bytes, copies, &bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", copies, " x ", DataTypeString(dtype), " ",
                     shape.DebugString(), " is too many bytes to count"));
  }
  const int64_t limit = MaxTensorBytes();
  if (limit > 0 && bytes > limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": ", copies, " x ", DataTypeString(dtype), " ",
        shape.DebugString(), " needs ", bytes, " bytes, more than the ", limit,
        " a tensor may take (MaxTensorBytes: by default this "
        "machine's memory)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> NewTensor(DataType dtype, const TensorShape& shape,
                                 bool zero, const std::string& what) {
  GG_RETURN_IF_ERROR(CheckFits(dtype, shape, 1, what));
  absl::StatusOr<Tensor> t =
      zero ? Tensor::Zeros(dtype, shape) : Tensor::Uninitialized(dtype, shape);
  if (!t.ok()) {
    return Annotate(t.status(), what);
  }
  return t;
}

namespace {

// Keras' backend epsilon, used to clip probabilities before a log.
constexpr double kEpsilon = 1e-7;

// log(clip(p, eps, 1 - eps)).
absl::StatusOr<Output> ClippedLog(const Output& p, const std::string& scope) {
  GG_ASSIGN_OR_RETURN(
      Output hi,
      ops::ScalarLike(p, 1.0 - kEpsilon, {.name = scope + "/clip_max"}));
  GG_ASSIGN_OR_RETURN(
      Output lo, ops::ScalarLike(p, kEpsilon, {.name = scope + "/clip_min"}));
  GG_ASSIGN_OR_RETURN(Output c,
                      ops::Minimum(p, hi, {.name = scope + "/Minimum"}));
  GG_ASSIGN_OR_RETURN(c, ops::Maximum(c, lo, {.name = scope + "/Maximum"}));
  return ops::Log(c, {.name = scope + "/Log"});
}

// Mean over the batch of a per-example quantity.
absl::StatusOr<Output> BatchMean(const Output& per_example,
                                 const std::string& name) {
  return ops::Mean(per_example, {.name = name});
}

absl::StatusOr<Output> FractionEqual(const Output& a, const Output& b,
                                     const std::string& scope) {
  GG_ASSIGN_OR_RETURN(Output eq, ops::Equal(a, b, {.name = scope + "/Equal"}));
  GG_ASSIGN_OR_RETURN(Output f,
                      ops::Cast(eq, DT_FLOAT, {.name = scope + "/Cast"}));
  return ops::Mean(f, {.name = scope + "/Mean"});
}

}  // namespace

absl::StatusOr<LossNodes> BuildLoss(const Loss& loss, const LossInputs& in,
                                    const std::string& scope,
                                    bool with_accuracy) {
  Graph& g = *in.output.graph();
  const std::string ls = scope + "/loss";
  const std::string ms = scope + "/metrics/accuracy";
  if (loss.kind == Loss::Kind::kNone) {
    return absl::InvalidArgumentError("Compile: no loss given");
  }
  LossNodes out;
  // The labels: the given placeholder (an inference loss sharing the
  // training loss's labels), else a new one: class ids [batch] for the
  // sparse loss, rows [batch, units] for the others.
  if (in.labels.has_value()) {
    out.labels = *in.labels;
  } else if (loss.kind == Loss::Kind::kSparseCategoricalCrossentropy) {
    GG_ASSIGN_OR_RETURN(
        out.labels,
        ops::Placeholder(g, DT_INT32, {-1}, {.name = scope + "/labels"}));
  } else {
    GG_ASSIGN_OR_RETURN(out.labels,
                        ops::Placeholder(g, DT_FLOAT, {-1, in.units},
                                         {.name = scope + "/labels"}));
  }
  switch (loss.kind) {
    case Loss::Kind::kSparseCategoricalCrossentropy: {
      Output logits;
      if (loss.from_logits) {
        logits = in.output;
      } else if (in.softmax_logits.has_value()) {
        logits = *in.softmax_logits;
      } else {
        GG_ASSIGN_OR_RETURN(logits, ClippedLog(in.output, ls));
      }
      GG_ASSIGN_OR_RETURN(
          ops::SoftmaxCrossEntropyOutputs xent,
          ops::SparseSoftmaxCrossEntropyWithLogits(
              logits, out.labels,
              {.name = ls + "/SparseSoftmaxCrossEntropyWithLogits"}));
      GG_ASSIGN_OR_RETURN(out.loss, BatchMean(xent.loss, ls + "/value"));
      if (with_accuracy) {
        GG_ASSIGN_OR_RETURN(
            Output pred,
            ops::ArgMax(in.output, 1,
                        {.name = ms + "/ArgMax", .output_type = DT_INT32}));
        GG_ASSIGN_OR_RETURN(out.accuracy, FractionEqual(pred, out.labels, ms));
      }
      return out;
    }
    case Loss::Kind::kCategoricalCrossentropy: {
      Output log_p;
      if (loss.from_logits || in.softmax_logits.has_value()) {
        GG_ASSIGN_OR_RETURN(
            log_p,
            ops::LogSoftmax(loss.from_logits ? in.output : *in.softmax_logits,
                            {.name = ls + "/LogSoftmax"}));
      } else {
        // Keras normalises probabilities that do not sum to one.
        GG_ASSIGN_OR_RETURN(
            Output total,
            ops::Sum(in.output,
                     {.name = ls + "/Sum", .axes = {-1}, .keep_dims = true}));
        GG_ASSIGN_OR_RETURN(Output p, ops::RealDiv(in.output, total,
                                                   {.name = ls + "/truediv"}));
        GG_ASSIGN_OR_RETURN(log_p, ClippedLog(p, ls));
      }
      GG_ASSIGN_OR_RETURN(Output prod,
                          ops::Mul(out.labels, log_p, {.name = ls + "/mul"}));
      GG_ASSIGN_OR_RETURN(
          Output per_example,
          ops::Sum(prod, {.name = ls + "/Sum_1", .axes = {-1}}));
      GG_ASSIGN_OR_RETURN(per_example,
                          ops::Neg(per_example, {.name = ls + "/Neg"}));
      GG_ASSIGN_OR_RETURN(out.loss, BatchMean(per_example, ls + "/value"));
      if (with_accuracy) {
        GG_ASSIGN_OR_RETURN(
            Output pred, ops::ArgMax(in.output, 1, {.name = ms + "/ArgMax"}));
        GG_ASSIGN_OR_RETURN(
            Output truth,
            ops::ArgMax(out.labels, 1, {.name = ms + "/ArgMax_1"}));
        GG_ASSIGN_OR_RETURN(out.accuracy, FractionEqual(pred, truth, ms));
      }
      return out;
    }
    case Loss::Kind::kMeanSquaredError: {
      GG_ASSIGN_OR_RETURN(
          Output diff, ops::Sub(in.output, out.labels, {.name = ls + "/sub"}));
      GG_ASSIGN_OR_RETURN(Output sq,
                          ops::Square(diff, {.name = ls + "/Square"}));
      GG_ASSIGN_OR_RETURN(out.loss, BatchMean(sq, ls + "/value"));
      if (with_accuracy) {
        if (in.units == 1) {
          // Keras' binary accuracy: prediction > 0.5 against the target.
          GG_ASSIGN_OR_RETURN(
              Output half,
              ops::ScalarLike(in.output, 0.5, {.name = ms + "/threshold"}));
          GG_ASSIGN_OR_RETURN(
              Output gt,
              ops::Greater(in.output, half, {.name = ms + "/Greater"}));
          GG_ASSIGN_OR_RETURN(
              Output pred, ops::Cast(gt, DT_FLOAT, {.name = ms + "/Cast_1"}));
          GG_ASSIGN_OR_RETURN(out.accuracy,
                              FractionEqual(pred, out.labels, ms));
        } else {
          GG_ASSIGN_OR_RETURN(
              Output pred, ops::ArgMax(in.output, 1, {.name = ms + "/ArgMax"}));
          GG_ASSIGN_OR_RETURN(
              Output truth,
              ops::ArgMax(out.labels, 1, {.name = ms + "/ArgMax_1"}));
          GG_ASSIGN_OR_RETURN(out.accuracy, FractionEqual(pred, truth, ms));
        }
      }
      return out;
    }
    case Loss::Kind::kNone:
      break;
  }
  return absl::InvalidArgumentError("Compile: no loss given");
}

}  // namespace models_internal
}  // namespace graphgc
