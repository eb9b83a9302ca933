#include "models/optimizer_base.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

std::string Shown(const std::optional<float>& v) {
  return v.has_value() ? absl::StrCat(*v) : "None";
}

absl::Status CheckPositive(const std::string& class_name, const char* option,
                           const std::optional<float>& v, bool zero_ok) {
  if (!v.has_value()) return absl::OkStatus();
  // Written so that NaN fails too.
  if (!std::isfinite(*v) || !(*v > 0 || (zero_ok && *v == 0))) {
    return absl::InvalidArgumentError(
        absl::StrCat(class_name, " ", option, " must be finite and ",
                     zero_ok ? ">= 0" : "> 0", ", got ", *v));
  }
  return absl::OkStatus();
}

// values * clip / max(norm, clip), as Keras's clip_by_norm and
// clip_by_global_norm scale.
absl::StatusOr<Output> ScaleToNorm(const Output& g, const Output& norm,
                                   const Output& clip,
                                   const std::string& name) {
  GG_ASSIGN_OR_RETURN(Output bound,
                      ops::Maximum(norm, clip, {.name = name + "/Maximum"}));
  GG_ASSIGN_OR_RETURN(Output scaled,
                      ops::Mul(g, clip, {.name = name + "/mul"}));
  return ops::RealDiv(scaled, bound, {.name = name + "/truediv"});
}

absl::StatusOr<Output> SquaredNorm(const Output& g, const std::string& name) {
  GG_ASSIGN_OR_RETURN(Output sq, ops::Square(g, {.name = name + "/Square"}));
  return ops::Sum(sq, {.name = name + "/Sum"});
}

}  // namespace

absl::Status CheckBaseOptions(const std::string& class_name,
                              const BaseOptimizerOptions& base) {
  const int clips = base.clipnorm.has_value() + base.clipvalue.has_value() +
                    base.global_clipnorm.has_value();
  if (clips > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be "
        "set. Received: clipnorm=",
        Shown(base.clipnorm), ", clipvalue=", Shown(base.clipvalue),
        ", global_clipnorm=", Shown(base.global_clipnorm)));
  }
  GG_RETURN_IF_ERROR(
      CheckPositive(class_name, "weight_decay", base.weight_decay, true));
  GG_RETURN_IF_ERROR(CheckPositive(class_name, "clipnorm", base.clipnorm,
                                   /*zero_ok=*/false));
  GG_RETURN_IF_ERROR(CheckPositive(class_name, "clipvalue", base.clipvalue,
                                   /*zero_ok=*/true));
  return CheckPositive(class_name, "global_clipnorm", base.global_clipnorm,
                       /*zero_ok=*/false);
}

void WriteBaseConfig(const BaseOptimizerOptions& base, Json& object) {
  Json& config = object["config"];
  const auto put = [&](const char* key, const std::optional<float>& v) {
    if (v.has_value()) config[key] = FloatJson(*v);
  };
  put("weight_decay", base.weight_decay);
  put("clipnorm", base.clipnorm);
  put("global_clipnorm", base.global_clipnorm);
  put("clipvalue", base.clipvalue);
}

absl::StatusOr<BaseOptimizerOptions> ReadBaseConfig(const ConfigObject& c) {
  BaseOptimizerOptions base;
  const auto get = [&](const char* key,
                       std::optional<float>& out) -> absl::Status {
    const Json* j = c.Find(key);
    if (j == nullptr || j->is_null()) return absl::OkStatus();
    GG_ASSIGN_OR_RETURN(const float v, c.Float(key, 0.f));
    out = v;
    return absl::OkStatus();
  };
  GG_RETURN_IF_ERROR(get("weight_decay", base.weight_decay));
  GG_RETURN_IF_ERROR(get("clipnorm", base.clipnorm));
  GG_RETURN_IF_ERROR(get("global_clipnorm", base.global_clipnorm));
  GG_RETURN_IF_ERROR(get("clipvalue", base.clipvalue));
  return base;
}

absl::StatusOr<std::vector<Output>> ClipGradients(
    const BaseOptimizerOptions& base, const std::vector<Output>& grads,
    const std::string& s) {
  if (grads.empty()) return grads;
  Graph& g = *grads[0].graph();
  const std::string c = s + "/clip";
  std::vector<Output> out;
  if (base.clipvalue.has_value()) {
    GG_ASSIGN_OR_RETURN(Output hi,
                        ops::Const(g, *base.clipvalue, {.name = c + "/max"}));
    GG_ASSIGN_OR_RETURN(Output lo,
                        ops::Const(g, -*base.clipvalue, {.name = c + "/min"}));
    for (size_t i = 0; i < grads.size(); ++i) {
      const std::string name = absl::StrCat(c, "/", i);
      GG_ASSIGN_OR_RETURN(
          Output below,
          ops::Minimum(grads[i], hi, {.name = name + "/Minimum"}));
      GG_ASSIGN_OR_RETURN(Output clipped,
                          ops::Maximum(below, lo, {.name = name + "/Maximum"}));
      out.push_back(clipped);
    }
    return out;
  }
  if (base.clipnorm.has_value()) {
    GG_ASSIGN_OR_RETURN(
        Output clip, ops::Const(g, *base.clipnorm, {.name = c + "/clipnorm"}));
    for (size_t i = 0; i < grads.size(); ++i) {
      const std::string name = absl::StrCat(c, "/", i);
      GG_ASSIGN_OR_RETURN(Output sum, SquaredNorm(grads[i], name));
      GG_ASSIGN_OR_RETURN(Output norm,
                          ops::Sqrt(sum, {.name = name + "/Sqrt"}));
      GG_ASSIGN_OR_RETURN(Output clipped,
                          ScaleToNorm(grads[i], norm, clip, name));
      out.push_back(clipped);
    }
    return out;
  }
  if (base.global_clipnorm.has_value()) {
    GG_ASSIGN_OR_RETURN(
        Output clip,
        ops::Const(g, *base.global_clipnorm, {.name = c + "/global_clipnorm"}));
    std::vector<Output> sums;
    for (size_t i = 0; i < grads.size(); ++i) {
      GG_ASSIGN_OR_RETURN(Output sum,
                          SquaredNorm(grads[i], absl::StrCat(c, "/", i)));
      sums.push_back(sum);
    }
    GG_ASSIGN_OR_RETURN(Output total,
                        ops::AddN(sums, {.name = c + "/global_norm/AddN"}));
    GG_ASSIGN_OR_RETURN(Output norm,
                        ops::Sqrt(total, {.name = c + "/global_norm"}));
    for (size_t i = 0; i < grads.size(); ++i) {
      GG_ASSIGN_OR_RETURN(
          Output clipped,
          ScaleToNorm(grads[i], norm, clip, absl::StrCat(c, "/", i, "/scale")));
      out.push_back(clipped);
    }
    return out;
  }
  return grads;
}

absl::StatusOr<std::vector<NodeHandle>> WeightDecayUpdates(
    float weight_decay, const Output& lr, const std::vector<Output>& variables,
    const std::vector<NodeHandle>& after, const std::string& s) {
  std::vector<NodeHandle> out;
  if (weight_decay == 0.f || variables.empty()) return out;
  Graph& g = *variables[0].graph();
  const std::string d = s + "/weight_decay";
  GG_ASSIGN_OR_RETURN(Output wd, ops::Const(g, weight_decay, {.name = d}));
  GG_ASSIGN_OR_RETURN(Output wd_lr, ops::Mul(wd, lr, {.name = d + "/mul"}));
  for (size_t i = 0; i < variables.size(); ++i) {
    const std::string name = absl::StrCat(d, "/", variables[i].node_name());
    GG_ASSIGN_OR_RETURN(
        Output w, ops::ReadVariableOp(variables[i], {.name = name + "/Read",
                                                     .control_inputs = after}));
    GG_ASSIGN_OR_RETURN(Output delta,
                        ops::Mul(w, wd_lr, {.name = name + "/mul"}));
    GG_ASSIGN_OR_RETURN(
        Output decay, ops::AssignSubVariableOp(
                          variables[i], delta,
                          {.name = name + "/Update", .control_inputs = after}));
    out.push_back(decay.handle());
  }
  return out;
}

}  // namespace models_internal
}  // namespace graphgc
