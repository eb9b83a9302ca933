// categorical_hinge: maximum(neg - pos + 1, 0) with pos = sum(y_true *
// y_pred) and neg = max((1 - y_true) * y_pred) over the last axis.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<Output> PerSample(const LossContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output one, LossScalar(ctx, 1.0, "one"));
  GG_ASSIGN_OR_RETURN(Output pos_prod, ops::Mul(ctx.y_true, ctx.y_pred,
                                                {.name = ctx.Name("mul")}));
  GG_ASSIGN_OR_RETURN(Output pos, SumLastAxis(pos_prod, ctx.Name("Sum")));
  GG_ASSIGN_OR_RETURN(Output not_true,
                      ops::Sub(one, ctx.y_true, {.name = ctx.Name("sub")}));
  GG_ASSIGN_OR_RETURN(Output neg_all, ops::Mul(not_true, ctx.y_pred,
                                               {.name = ctx.Name("mul_1")}));
  // The max over the last axis: the Maximum of its columns, each picked out
  // by a constant one-hot row (gradients reach no constant, so the max's
  // gradient goes to the largest column, as with TensorFlow's Max).
  Graph& g = *ctx.y_pred.graph();
  Output neg;
  for (int64_t j = 0; j < ctx.units; ++j) {
    const std::string col = absl::StrCat("max/col_", j);
    std::vector<float> one_hot(static_cast<size_t>(ctx.units), 0.f);
    one_hot[static_cast<size_t>(j)] = 1.f;
    GG_ASSIGN_OR_RETURN(
        Tensor t, Tensor::FromData<float>({ctx.units}, std::move(one_hot)));
    GG_ASSIGN_OR_RETURN(Output pick,
                        ops::Const(g, t, {.name = ctx.Name(col + "/one_hot")}));
    GG_ASSIGN_OR_RETURN(
        Output masked,
        ops::Mul(neg_all, pick, {.name = ctx.Name(col + "/mul")}));
    GG_ASSIGN_OR_RETURN(Output value, SumLastAxis(masked, ctx.Name(col)));
    if (j == 0) {
      neg = value;
    } else {
      GG_ASSIGN_OR_RETURN(
          neg, ops::Maximum(neg, value, {.name = ctx.Name(col + "/Maximum")}));
    }
  }
  GG_ASSIGN_OR_RETURN(Output d,
                      ops::Sub(neg, pos, {.name = ctx.Name("sub_1")}));
  GG_ASSIGN_OR_RETURN(Output m, ops::AddV2(d, one, {.name = ctx.Name("add")}));
  return ops::Relu(m, {.name = ctx.Name("Relu")});
}

const LossKind& CategoricalHingeKind() {
  static const LossKind kind{.name = "categorical_hinge",
                             .class_name = "CategoricalHinge",
                             .order = 20,
                             .per_sample = PerSample};
  return kind;
}

}  // namespace

GG_REGISTER_LOSS_KIND(CategoricalHingeKind);

}  // namespace models_internal
}  // namespace graphgc
