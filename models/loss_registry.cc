// The loss registry, BuildLoss (labels, per-sample values through the
// kind, reduction, accuracy) and the helpers the kinds' files share.
#include "models/loss_registry.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "models/kind_registry.h"
#include "ops/ops.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

const KindRegistry<LossKind, &LossKind::name>& GlobalRegistry() {
  return GlobalKindRegistry<LossKind, &LossKind::name>("loss",
                                                       BuiltinLossKinds);
}

absl::StatusOr<Output> FractionEqual(const Output& a, const Output& b,
                                     const std::string& scope) {
  GG_ASSIGN_OR_RETURN(Output eq, ops::Equal(a, b, {.name = scope + "/Equal"}));
  GG_ASSIGN_OR_RETURN(Output f,
                      ops::Cast(eq, DT_FLOAT, {.name = scope + "/Cast"}));
  return ops::Mean(f, {.name = scope + "/Mean"});
}

// Keras 3's "accuracy" for these labels and this output (see BuildLoss).
absl::StatusOr<Output> Accuracy(const LossKind& kind, const LossInputs& in,
                                const Output& labels, const std::string& ms) {
  if (kind.sparse_labels) {
    GG_ASSIGN_OR_RETURN(Output pred, ops::ArgMax(in.output, 1,
                                                 {.name = ms + "/ArgMax",
                                                  .output_type = DT_INT32}));
    return FractionEqual(pred, labels, ms);
  }
  if (in.units == 1) {
    GG_ASSIGN_OR_RETURN(
        Output half,
        ops::ScalarLike(in.output, 0.5, {.name = ms + "/threshold"}));
    GG_ASSIGN_OR_RETURN(
        Output gt, ops::Greater(in.output, half, {.name = ms + "/Greater"}));
    GG_ASSIGN_OR_RETURN(Output pred,
                        ops::Cast(gt, DT_FLOAT, {.name = ms + "/Cast_1"}));
    return FractionEqual(pred, labels, ms);
  }
  GG_ASSIGN_OR_RETURN(Output pred,
                      ops::ArgMax(in.output, 1, {.name = ms + "/ArgMax"}));
  GG_ASSIGN_OR_RETURN(Output truth,
                      ops::ArgMax(labels, 1, {.name = ms + "/ArgMax_1"}));
  return FractionEqual(pred, truth, ms);
}

absl::Status Refuse(const LossKind& kind, const std::string& option,
                    const std::string& value) {
  return absl::InvalidArgumentError(
      absl::StrCat(kind.class_name, ": ", option, " is ", value, " but ",
                   kind.name, " takes no ", option));
}

}  // namespace

const LossKind* FindLossKind(const std::string& name) {
  return GlobalRegistry().Find(name);
}

std::vector<const LossKind*> LossKinds() { return GlobalRegistry().kinds(); }

std::string KnownLosses() { return GlobalRegistry().Names(); }

absl::StatusOr<const LossKind*> CheckLoss(const Loss& loss) {
  if (loss.kind.empty()) return absl::InvalidArgumentError("no loss");
  const LossKind* kind = FindLossKind(loss.kind);
  if (kind == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown loss '", loss.kind, "' (known: ", KnownLosses(), ")"));
  }
  if (loss.from_logits && !kind->takes_from_logits) {
    return Refuse(*kind, "from_logits", "true");
  }
  if (loss.label_smoothing != 0.f && !kind->takes_label_smoothing) {
    return Refuse(*kind, "label_smoothing", absl::StrCat(loss.label_smoothing));
  }
  if (loss.delta != 1.f && !kind->takes_delta) {
    return Refuse(*kind, "delta", absl::StrCat(loss.delta));
  }
  // Written so that NaN fails too.
  if (!(loss.label_smoothing >= 0.f && loss.label_smoothing <= 1.f)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind->class_name,
                     ": label_smoothing must be in [0, 1], "
                     "got ",
                     loss.label_smoothing));
  }
  if (!std::isfinite(loss.delta) || !(loss.delta > 0.f)) {
    return absl::InvalidArgumentError(absl::StrCat(
        kind->class_name, ": delta must be finite and > 0, got ", loss.delta));
  }
  const std::string& r = loss.reduction;
  if (r != "sum_over_batch_size" && r != "mean" && r != "sum" &&
      r != "mean_with_sample_weight") {
    return absl::InvalidArgumentError(absl::StrCat(
        kind->class_name, ": reduction '", r,
        "' is not supported (use \"sum_over_batch_size\", \"mean\" or "
        "\"sum\"; training needs a scalar loss)"));
  }
  return kind;
}

absl::StatusOr<LossNodes> BuildLoss(const Loss& loss, const LossInputs& in,
                                    const std::string& scope,
                                    bool with_accuracy) {
  absl::StatusOr<const LossKind*> checked = CheckLoss(loss);
  if (!checked.ok()) return Annotate(checked.status(), "Compile");
  const LossKind& kind = **checked;
  Graph& g = *in.output.graph();
  LossNodes out;
  // The labels: the given placeholder (an inference loss sharing the
  // training loss's labels), else a new one: class ids [batch] for a
  // sparse loss, rows [batch, units] for the others.
  if (in.labels.has_value()) {
    out.labels = *in.labels;
  } else if (kind.sparse_labels) {
    GG_ASSIGN_OR_RETURN(
        out.labels,
        ops::Placeholder(g, DT_INT32, {-1}, {.name = scope + "/labels"}));
  } else {
    GG_ASSIGN_OR_RETURN(out.labels,
                        ops::Placeholder(g, DT_FLOAT, {-1, in.units},
                                         {.name = scope + "/labels"}));
  }
  const LossContext ctx{.loss = loss,
                        .y_pred = in.output,
                        .softmax_logits = in.softmax_logits,
                        .y_true = out.labels,
                        .units = in.units,
                        .scope = scope + "/loss"};
  GG_ASSIGN_OR_RETURN(Output per_sample, kind.per_sample(ctx));
  if (in.sample_weighted) {
    if (in.sample_weight.has_value()) {
      out.sample_weight = *in.sample_weight;
    } else {
      GG_ASSIGN_OR_RETURN(out.sample_weight,
                          ops::Placeholder(g, DT_FLOAT, {-1},
                                           {.name = scope + "/sample_weight"}));
    }
    // Keras: the reduction is over the weighted values, so
    // sum_over_batch_size is sum(w * loss) / batch size.
    GG_ASSIGN_OR_RETURN(per_sample, ops::Mul(per_sample, *out.sample_weight,
                                             {.name = ctx.Name("weighted")}));
  }
  if (loss.reduction == "sum") {
    GG_ASSIGN_OR_RETURN(out.loss,
                        ops::Sum(per_sample, {.name = ctx.Name("value")}));
  } else if (loss.reduction == "mean_with_sample_weight" &&
             out.sample_weight.has_value()) {
    // sum(w * loss) / sum(w).
    GG_ASSIGN_OR_RETURN(Output total,
                        ops::Sum(per_sample, {.name = ctx.Name("total")}));
    GG_ASSIGN_OR_RETURN(
        Output weights,
        ops::Sum(*out.sample_weight, {.name = ctx.Name("weights_total")}));
    GG_ASSIGN_OR_RETURN(
        out.loss, ops::RealDiv(total, weights, {.name = ctx.Name("value")}));
  } else {
    GG_ASSIGN_OR_RETURN(out.loss,
                        ops::Mean(per_sample, {.name = ctx.Name("value")}));
  }
  if (with_accuracy) {
    GG_ASSIGN_OR_RETURN(out.accuracy, Accuracy(kind, in, out.labels,
                                               scope + "/metrics/accuracy"));
  }
  return out;
}

absl::StatusOr<Output> LossScalar(const LossContext& ctx, double value,
                                  const std::string& name) {
  return ops::ScalarLike(ctx.y_pred, value, {.name = ctx.Name(name)});
}

absl::StatusOr<Output> ClippedLog(const Output& p, const std::string& scope) {
  GG_ASSIGN_OR_RETURN(
      Output hi,
      ops::ScalarLike(p, 1.0 - kLossEpsilon, {.name = scope + "/clip_max"}));
  GG_ASSIGN_OR_RETURN(
      Output lo,
      ops::ScalarLike(p, kLossEpsilon, {.name = scope + "/clip_min"}));
  GG_ASSIGN_OR_RETURN(Output c,
                      ops::Minimum(p, hi, {.name = scope + "/Minimum"}));
  GG_ASSIGN_OR_RETURN(c, ops::Maximum(c, lo, {.name = scope + "/Maximum"}));
  return ops::Log(c, {.name = scope + "/Log"});
}

absl::StatusOr<Output> Abs(const Output& x, const std::string& scope) {
  GG_ASSIGN_OR_RETURN(Output pos, ops::Relu(x, {.name = scope + "/Relu"}));
  GG_ASSIGN_OR_RETURN(Output neg_x, ops::Neg(x, {.name = scope + "/Neg"}));
  GG_ASSIGN_OR_RETURN(Output neg,
                      ops::Relu(neg_x, {.name = scope + "/Relu_1"}));
  return ops::AddV2(pos, neg, {.name = scope + "/Abs"});
}

absl::StatusOr<Output> Softplus(const Output& x, const std::string& scope) {
  // Maximum sends a tie's gradient to its first input, x.
  GG_ASSIGN_OR_RETURN(Output neg_x, ops::Neg(x, {.name = scope + "/Neg"}));
  GG_ASSIGN_OR_RETURN(Output abs,
                      ops::Maximum(x, neg_x, {.name = scope + "/Abs"}));
  GG_ASSIGN_OR_RETURN(Output neg_abs,
                      ops::Neg(abs, {.name = scope + "/Neg_1"}));
  GG_ASSIGN_OR_RETURN(Output e, ops::Exp(neg_abs, {.name = scope + "/Exp"}));
  GG_ASSIGN_OR_RETURN(Output one,
                      ops::ScalarLike(x, 1.0, {.name = scope + "/one"}));
  GG_ASSIGN_OR_RETURN(Output sum, ops::AddV2(one, e, {.name = scope + "/add"}));
  GG_ASSIGN_OR_RETURN(Output log, ops::Log(sum, {.name = scope + "/Log"}));
  GG_ASSIGN_OR_RETURN(Output zero,
                      ops::ScalarLike(x, 0.0, {.name = scope + "/zero"}));
  GG_ASSIGN_OR_RETURN(Output pos,
                      ops::Maximum(x, zero, {.name = scope + "/Maximum"}));
  return ops::AddV2(pos, log, {.name = scope + "/Softplus"});
}

absl::StatusOr<Output> MeanLastAxis(const Output& x, const std::string& name) {
  return ops::Mean(x, {.name = name, .axes = {-1}});
}

absl::StatusOr<Output> SumLastAxis(const Output& x, const std::string& name) {
  return ops::Sum(x, {.name = name, .axes = {-1}});
}

absl::StatusOr<Output> HingeLabels(const LossContext& ctx) {
  const Output& y = ctx.y_true;
  GG_ASSIGN_OR_RETURN(Output zero, LossScalar(ctx, 0.0, "labels/zero"));
  GG_ASSIGN_OR_RETURN(Output one, LossScalar(ctx, 1.0, "labels/one"));
  GG_ASSIGN_OR_RETURN(Output is0,
                      ops::Equal(y, zero, {.name = ctx.Name("labels/Equal")}));
  GG_ASSIGN_OR_RETURN(Output is1,
                      ops::Equal(y, one, {.name = ctx.Name("labels/Equal_1")}));
  GG_ASSIGN_OR_RETURN(
      Output f0, ops::Cast(is0, DT_FLOAT, {.name = ctx.Name("labels/Cast")}));
  GG_ASSIGN_OR_RETURN(
      Output f1, ops::Cast(is1, DT_FLOAT, {.name = ctx.Name("labels/Cast_1")}));
  GG_ASSIGN_OR_RETURN(Output binary,
                      ops::AddV2(f0, f1, {.name = ctx.Name("labels/add")}));
  // 1 when every label is 0 or 1, else 0: y + flag * (y - 1) is 2y - 1 or y.
  GG_ASSIGN_OR_RETURN(Output frac,
                      ops::Mean(binary, {.name = ctx.Name("labels/Mean")}));
  GG_ASSIGN_OR_RETURN(
      Output all, ops::Equal(frac, one, {.name = ctx.Name("labels/Equal_2")}));
  GG_ASSIGN_OR_RETURN(
      Output flag,
      ops::Cast(all, DT_FLOAT, {.name = ctx.Name("labels/Cast_2")}));
  GG_ASSIGN_OR_RETURN(Output ym1,
                      ops::Sub(y, one, {.name = ctx.Name("labels/sub")}));
  GG_ASSIGN_OR_RETURN(Output shift,
                      ops::Mul(flag, ym1, {.name = ctx.Name("labels/mul")}));
  return ops::AddV2(y, shift, {.name = ctx.Name("labels/hinge")});
}

absl::StatusOr<Output> HingeMargin(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output y, HingeLabels(ctx));
  GG_ASSIGN_OR_RETURN(Output one, LossScalar(ctx, 1.0, "one"));
  GG_ASSIGN_OR_RETURN(Output prod,
                      ops::Mul(y, ctx.y_pred, {.name = ctx.Name("mul")}));
  GG_ASSIGN_OR_RETURN(Output margin,
                      ops::Sub(one, prod, {.name = ctx.Name("sub")}));
  return ops::Relu(margin, {.name = ctx.Name("Relu")});
}

}  // namespace models_internal

std::string Loss::name() const { return kind.empty() ? "none" : kind; }

namespace losses {

Loss SparseCategoricalCrossentropy(CrossentropyOptions options) {
  return Loss{.kind = "sparse_categorical_crossentropy",
              .from_logits = options.from_logits,
              .label_smoothing = options.label_smoothing,
              .reduction = options.reduction};
}

Loss CategoricalCrossentropy(CrossentropyOptions options) {
  return Loss{.kind = "categorical_crossentropy",
              .from_logits = options.from_logits,
              .label_smoothing = options.label_smoothing,
              .reduction = options.reduction};
}

Loss BinaryCrossentropy(CrossentropyOptions options) {
  return Loss{.kind = "binary_crossentropy",
              .from_logits = options.from_logits,
              .label_smoothing = options.label_smoothing,
              .reduction = options.reduction};
}

Loss MeanSquaredError(ReductionOptions options) {
  return Loss{.kind = "mean_squared_error", .reduction = options.reduction};
}

absl::StatusOr<Loss> Get(const std::string& identifier, LossOptions options) {
  const models_internal::LossKind* kind =
      models_internal::FindLossKind(identifier);
  if (kind == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown loss '", identifier,
                     "' (known: ", models_internal::KnownLosses(), ")"));
  }
  Loss loss{.kind = kind->name,
            .from_logits = options.from_logits,
            .label_smoothing = options.label_smoothing,
            .delta = options.delta,
            .reduction = options.reduction};
  GG_RETURN_IF_ERROR(models_internal::CheckLoss(loss).status());
  return loss;
}

std::vector<LossInfo> RegisteredLosses() {
  std::vector<LossInfo> out;
  for (const models_internal::LossKind* kind : models_internal::LossKinds()) {
    out.push_back(LossInfo{.name = kind->name,
                           .class_name = kind->class_name,
                           .object_name = kind->object_name.empty()
                                              ? kind->name
                                              : kind->object_name,
                           .aliases = kind->aliases,
                           .takes_from_logits = kind->takes_from_logits,
                           .takes_label_smoothing = kind->takes_label_smoothing,
                           .takes_delta = kind->takes_delta});
  }
  return out;
}

}  // namespace losses
}  // namespace graphgc
