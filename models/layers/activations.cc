// The activations layers take by name (Dense's and Conv2D's activation=,
// the Activation layer): Keras 3's formulas (keras.activations) built from
// ops whose gradients ops/ has, so every one trains. At a kink the
// derivative is the one the composition gives (Maximum and Minimum pass a
// tie to their first input), which is not always TensorFlow's kernel's:
// leaky_relu and selu at 0 and relu6 at 6 differ.
#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/layer_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

// TensorFlow's (and Keras's) SELU constants.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
// keras.activations.leaky_relu's default slope.
constexpr float kLeakyReluSlope = 0.2f;

// Names each node "<scope>/<op>", "<scope>/<op>_1", ...
class Namer {
 public:
  explicit Namer(std::string scope) : scope_(std::move(scope)) {}
  ops::OpOptions operator()(const std::string& op) {
    const int n = counts_[op]++;
    return {.name = n == 0 ? absl::StrCat(scope_, "/", op)
                           : absl::StrCat(scope_, "/", op, "_", n)};
  }

 private:
  std::string scope_;
  absl::flat_hash_map<std::string, int> counts_;
};

absl::StatusOr<Output> Scalar(const Output& x, double v, Namer& n) {
  return ops::ScalarLike(x, v, n("Const"));
}

// max(x, 0) with gradient 1 at 0 (Maximum ties to x).
absl::StatusOr<Output> PositivePart(const Output& x, Namer& n) {
  GG_ASSIGN_OR_RETURN(Output zero, Scalar(x, 0, n));
  return ops::Maximum(x, zero, n("Maximum"));
}

absl::StatusOr<Output> Abs(const Output& x, Namer& n) {
  GG_ASSIGN_OR_RETURN(Output neg, ops::Neg(x, n("Neg")));
  return ops::Maximum(x, neg, n("Maximum"));
}

// relu6: min(relu(x), 6).
absl::StatusOr<Output> Relu6(const Output& x, Namer& n) {
  GG_ASSIGN_OR_RETURN(Output r, ops::Relu(x, n("Relu")));
  GG_ASSIGN_OR_RETURN(Output six, Scalar(x, 6, n));
  return ops::Minimum(r, six, n("Minimum"));
}

absl::StatusOr<Output> Elu(const Output& x, double alpha, Namer& n) {
  // x > 0: x; else alpha * (exp(x) - 1).
  GG_ASSIGN_OR_RETURN(Output zero, Scalar(x, 0, n));
  GG_ASSIGN_OR_RETURN(Output pos, ops::Relu(x, n("Relu")));
  GG_ASSIGN_OR_RETURN(Output low, ops::Minimum(x, zero, n("Minimum")));
  GG_ASSIGN_OR_RETURN(Output e, ops::Exp(low, n("Exp")));
  GG_ASSIGN_OR_RETURN(Output one, Scalar(x, 1, n));
  GG_ASSIGN_OR_RETURN(Output em1, ops::Sub(e, one, n("Sub")));
  GG_ASSIGN_OR_RETURN(Output a, Scalar(x, alpha, n));
  GG_ASSIGN_OR_RETURN(Output neg, ops::Mul(a, em1, n("Mul")));
  return ops::AddV2(pos, neg, n("AddV2"));
}

absl::StatusOr<Output> LeakyRelu(const Output& x, double slope, Namer& n) {
  GG_ASSIGN_OR_RETURN(Output a, Scalar(x, slope, n));
  GG_ASSIGN_OR_RETURN(Output scaled, ops::Mul(x, a, n("Mul")));
  return slope <= 1 ? ops::Maximum(x, scaled, n("Maximum"))
                    : ops::Minimum(x, scaled, n("Minimum"));
}

// softplus(x) = max(x, 0) + log(1 + exp(-|x|)), stable for large |x|.
absl::StatusOr<Output> Softplus(const Output& x, Namer& n) {
  GG_ASSIGN_OR_RETURN(Output pos, PositivePart(x, n));
  GG_ASSIGN_OR_RETURN(Output abs, Abs(x, n));
  GG_ASSIGN_OR_RETURN(Output neg, ops::Neg(abs, n("Neg")));
  GG_ASSIGN_OR_RETURN(Output e, ops::Exp(neg, n("Exp")));
  GG_ASSIGN_OR_RETURN(Output one, Scalar(x, 1, n));
  GG_ASSIGN_OR_RETURN(Output sum, ops::AddV2(one, e, n("AddV2")));
  GG_ASSIGN_OR_RETURN(Output log, ops::Log(sum, n("Log")));
  return ops::AddV2(pos, log, n("AddV2"));
}

// gelu(x) = x * Phi(x) = x * (1 + erf(x / sqrt(2))) / 2, Keras 3's default
// (approximate=False). With erfc(z) for z >= 0 by Abramowitz and Stegun
// 7.1.26 (absolute error <= 1.5e-7, below float32's resolution of erf near
// 1), x * Phi(x) = max(x, 0) - |x| * erfc(|x| / sqrt(2)) / 2 for either sign
// of x.
absl::StatusOr<Output> Gelu(const Output& x, Namer& n) {
  static constexpr double kP = 0.3275911;
  static constexpr double kA[] = {0.254829592, -0.284496736, 1.421413741,
                                  -1.453152027, 1.061405429};
  GG_ASSIGN_OR_RETURN(Output pos, PositivePart(x, n));
  GG_ASSIGN_OR_RETURN(Output abs, Abs(x, n));
  GG_ASSIGN_OR_RETURN(Output inv_sqrt2, Scalar(x, 1 / std::sqrt(2.0), n));
  GG_ASSIGN_OR_RETURN(Output z, ops::Mul(abs, inv_sqrt2, n("Mul")));
  GG_ASSIGN_OR_RETURN(Output p, Scalar(x, kP, n));
  GG_ASSIGN_OR_RETURN(Output pz, ops::Mul(p, z, n("Mul")));
  GG_ASSIGN_OR_RETURN(Output one, Scalar(x, 1, n));
  GG_ASSIGN_OR_RETURN(Output denom, ops::AddV2(one, pz, n("AddV2")));
  GG_ASSIGN_OR_RETURN(Output t, ops::RealDiv(one, denom, n("RealDiv")));
  // Horner: t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5)))).
  GG_ASSIGN_OR_RETURN(Output poly, Scalar(x, kA[4], n));
  for (int i = 3; i >= 0; --i) {
    GG_ASSIGN_OR_RETURN(poly, ops::Mul(poly, t, n("Mul")));
    GG_ASSIGN_OR_RETURN(Output a, Scalar(x, kA[i], n));
    GG_ASSIGN_OR_RETURN(poly, ops::AddV2(poly, a, n("AddV2")));
  }
  GG_ASSIGN_OR_RETURN(poly, ops::Mul(poly, t, n("Mul")));
  GG_ASSIGN_OR_RETURN(Output z2, ops::Square(z, n("Square")));
  GG_ASSIGN_OR_RETURN(Output nz2, ops::Neg(z2, n("Neg")));
  GG_ASSIGN_OR_RETURN(Output e, ops::Exp(nz2, n("Exp")));
  GG_ASSIGN_OR_RETURN(Output erfc, ops::Mul(poly, e, n("Mul")));
  GG_ASSIGN_OR_RETURN(Output half, Scalar(x, 0.5, n));
  GG_ASSIGN_OR_RETURN(Output habs, ops::Mul(abs, half, n("Mul")));
  GG_ASSIGN_OR_RETURN(Output tail, ops::Mul(habs, erfc, n("Mul")));
  return ops::Sub(pos, tail, n("Sub"));
}

using ActivationFn = absl::StatusOr<Output> (*)(const Output& x, Namer& n);

struct NamedActivation {
  const char* name;
  ActivationFn fn;
};

// Keras 3's names, in the order messages list them.
const std::vector<NamedActivation>& Activations() {
  static const auto* table = new std::vector<NamedActivation>{
      {"linear",
       [](const Output& x, Namer&) -> absl::StatusOr<Output> { return x; }},
      {"relu",
       [](const Output& x, Namer& n) { return ops::Relu(x, n("Relu")); }},
      {"sigmoid",
       [](const Output& x, Namer& n) { return ops::Sigmoid(x, n("Sigmoid")); }},
      {"tanh",
       [](const Output& x, Namer& n) { return ops::Tanh(x, n("Tanh")); }},
      {"softmax",
       [](const Output& x, Namer& n) { return ops::Softmax(x, n("Softmax")); }},
      {"elu", [](const Output& x, Namer& n) { return Elu(x, 1.0, n); }},
      {"selu",
       [](const Output& x, Namer& n) -> absl::StatusOr<Output> {
         GG_ASSIGN_OR_RETURN(Output e, Elu(x, kSeluAlpha, n));
         GG_ASSIGN_OR_RETURN(Output s, Scalar(x, kSeluScale, n));
         return ops::Mul(s, e, n("Mul"));
       }},
      {"leaky_relu", [](const Output& x,
                        Namer& n) { return LeakyRelu(x, kLeakyReluSlope, n); }},
      {"gelu", Gelu},
      {"silu",
       [](const Output& x, Namer& n) -> absl::StatusOr<Output> {
         GG_ASSIGN_OR_RETURN(Output s, ops::Sigmoid(x, n("Sigmoid")));
         return ops::Mul(x, s, n("Mul"));
       }},
      {"softplus", Softplus},
      {"softsign",
       [](const Output& x, Namer& n) -> absl::StatusOr<Output> {
         GG_ASSIGN_OR_RETURN(Output abs, Abs(x, n));
         GG_ASSIGN_OR_RETURN(Output one, Scalar(x, 1, n));
         GG_ASSIGN_OR_RETURN(Output d, ops::AddV2(abs, one, n("AddV2")));
         return ops::RealDiv(x, d, n("RealDiv"));
       }},
      {"relu6", Relu6},
      {"hard_sigmoid",
       [](const Output& x, Namer& n) -> absl::StatusOr<Output> {
         // relu6(x + 3) / 6, as Keras's backends.
         GG_ASSIGN_OR_RETURN(Output three, Scalar(x, 3, n));
         GG_ASSIGN_OR_RETURN(Output s, ops::AddV2(x, three, n("AddV2")));
         GG_ASSIGN_OR_RETURN(Output r, Relu6(s, n));
         GG_ASSIGN_OR_RETURN(Output six, Scalar(x, 6, n));
         return ops::RealDiv(r, six, n("RealDiv"));
       }},
      {"exponential",
       [](const Output& x, Namer& n) { return ops::Exp(x, n("Exp")); }},
  };
  return *table;
}

// Keras's aliases: "swish" is silu.
std::string Canonical(const std::string& act) {
  if (act.empty()) return "linear";
  if (act == "swish") return "silu";
  return act;
}

const NamedActivation* Find(const std::string& act) {
  const std::string name = Canonical(act);
  for (const NamedActivation& a : Activations()) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

}  // namespace

bool KnownActivation(const std::string& act) { return Find(act) != nullptr; }

absl::StatusOr<Output> ApplyActivation(const std::string& act, const Output& x,
                                       const std::string& scope) {
  const NamedActivation* a = Find(act);
  if (a == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(scope, ": unknown activation '", act, "'"));
  }
  Namer n(scope);
  return a->fn(x, n);
}

absl::Status UnknownActivation(const LayerState& layer,
                               const std::string& act) {
  std::vector<std::string> names;
  for (const NamedActivation& a : Activations()) names.push_back(a.name);
  names.push_back("swish");
  return absl::InvalidArgumentError(
      absl::StrCat(LayerLabel(layer), ": unknown activation '", act, "' (use ",
                   absl::StrJoin(names, ", "), ")"));
}

std::string ActivationName(const std::string& activation) {
  return Canonical(activation);
}

absl::StatusOr<Output> EluActivation(const Output& x, float alpha,
                                     const std::string& scope) {
  Namer n(scope);
  return Elu(x, alpha, n);
}

absl::StatusOr<Output> LeakyReluActivation(const Output& x, float slope,
                                           const std::string& scope) {
  Namer n(scope);
  return LeakyRelu(x, slope, n);
}

}  // namespace models_internal
}  // namespace graphgc
