#include "models/loss_registry.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "models/losses.h"
#include "ops/gradients.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace graphgc {
namespace models_internal {
namespace {

using Rows = std::vector<std::vector<double>>;

bool Mentions(const absl::Status& s, const std::string& text) {
  return s.message().find(text) != absl::string_view::npos;
}

Tensor FloatRows(const Rows& rows) {
  std::vector<float> flat;
  for (const auto& r : rows) {
    for (double v : r) flat.push_back(static_cast<float>(v));
  }
  const int64_t n = static_cast<int64_t>(rows.size());
  const int64_t u = static_cast<int64_t>(rows[0].size());
  return *Tensor::FromData<float>({n, u}, std::move(flat));
}

// The loss `loss` builds on predictions `pred` and float labels `truth`:
// its value, or with `gradient` its derivative by each prediction.
std::vector<float> RunLoss(const Loss& loss, const Rows& truth,
                           const Rows& pred, bool gradient) {
  Graph g;
  const int64_t units = static_cast<int64_t>(pred[0].size());
  Output y = *ops::Placeholder(g, DT_FLOAT, {-1, units});
  absl::StatusOr<LossNodes> nodes =
      BuildLoss(loss, {.output = y, .units = units}, "m", false);
  EXPECT_TRUE(nodes.ok()) << nodes.status();
  if (!nodes.ok()) return {};
  Output fetch = nodes->loss;
  if (gradient) {
    absl::StatusOr<std::vector<Output>> grads = AddGradients(fetch, {y});
    EXPECT_TRUE(grads.ok()) << grads.status();
    if (!grads.ok()) return {};
    fetch = (*grads)[0];
  }
  Session session(g);
  absl::StatusOr<std::vector<Tensor>> out = session.Run(
      {{y, FloatRows(pred)}, {nodes->labels, FloatRows(truth)}}, {fetch});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  absl::Span<const float> v = (*out)[0].data<float>();
  return std::vector<float>(v.begin(), v.end());
}

float LossValue(const Loss& loss, const Rows& truth, const Rows& pred) {
  const std::vector<float> v = RunLoss(loss, truth, pred, false);
  return v.empty() ? NAN : v[0];
}

// The mean over rows of `per_sample(t, p)`, as Keras's default reduction.
double KerasMean(
    const Rows& t, const Rows& p,
    const std::function<double(const std::vector<double>&,
                               const std::vector<double>&)>& per_sample) {
  double sum = 0;
  for (size_t i = 0; i < t.size(); ++i) sum += per_sample(t[i], p[i]);
  return sum / static_cast<double>(t.size());
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Applies f to each pair of elements.
std::vector<double> Zip(const std::vector<double>& t,
                        const std::vector<double>& p,
                        const std::function<double(double, double)>& f) {
  std::vector<double> out;
  for (size_t i = 0; i < t.size(); ++i) out.push_back(f(t[i], p[i]));
  return out;
}

constexpr double kEps = 1e-7;

const Rows kTargets = {{0.5, 1.5, -2.0}, {3.0, 0.2, 1.0}};
const Rows kPreds = {{1.0, 1.0, -1.0}, {0.5, 0.4, 4.0}};
const Rows kProbTargets = {{0.2, 0.7, 0.1}, {0.0, 0.0, 1.0}};
const Rows kProbs = {{0.3, 0.6, 0.1}, {0.25, 0.25, 0.5}};
const Rows kBinary = {{0, 1, 1}, {1, 0, 0}};

TEST(BuildLoss, RefusesNoLoss) {
  Graph g;
  Output y = *ops::Placeholder(g, DT_FLOAT, {-1, 2});
  absl::StatusOr<LossNodes> nodes =
      BuildLoss(Loss{}, {.output = y, .units = 2}, "m", false);
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BuildLoss, SparseCrossentropyTakesInt32ClassIdsPerExample) {
  Graph g;
  Output y = *ops::Placeholder(g, DT_FLOAT, {-1, 3});
  absl::StatusOr<LossNodes> nodes =
      BuildLoss(losses::SparseCategoricalCrossentropy(),
                {.output = y, .units = 3}, "m", false);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(nodes->labels.node_name(), "m/labels");
  EXPECT_EQ(nodes->labels.dtype(), DT_INT32);
}

TEST(BuildLoss, MeanSquaredErrorIsTheMeanOfSquaredDifferences) {
  EXPECT_FLOAT_EQ(LossValue(losses::MeanSquaredError(), {{0}, {0}}, {{1}, {2}}),
                  2.5f);  // (1 + 4) / 2
}

TEST(BuildLoss, SumReductionAddsThePerSampleLosses) {
  EXPECT_FLOAT_EQ(LossValue(losses::MeanSquaredError({.reduction = "sum"}),
                            {{0}, {0}}, {{1}, {2}}),
                  5.f);
}

TEST(BuildLoss, SparseCrossentropyIsMinusTheLogOfTheLabelsProbability) {
  Graph g;
  Output y = *ops::Placeholder(g, DT_FLOAT, {-1, 3});
  LossNodes nodes = *BuildLoss(losses::SparseCategoricalCrossentropy(),
                               {.output = y, .units = 3}, "m", false);
  Session session(g);
  absl::StatusOr<std::vector<Tensor>> out =
      session.Run({{y, FloatRows(kProbs)},
                   {nodes.labels, *Tensor::FromData<int32_t>({2}, {1, 2})}},
                  {nodes.loss});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].data<float>()[0], -(std::log(0.6) + std::log(0.5)) / 2,
              1e-5);
}

TEST(BuildLoss, CategoricalCrossentropyWithLabelSmoothing) {
  const double s = 0.1;
  const double want = KerasMean(kProbTargets, kProbs, [&](auto t, auto p) {
    double sum = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      sum -= (t[i] * (1 - s) + s / 3) * std::log(p[i]);
    }
    return sum;
  });
  EXPECT_NEAR(LossValue(losses::CategoricalCrossentropy(
                            {.label_smoothing = static_cast<float>(s)}),
                        kProbTargets, kProbs),
              want, 1e-5);
}

double Bce(double t, double p) {
  p = std::clamp(p, kEps, 1 - kEps);
  return -(t * std::log(p) + (1 - t) * std::log(1 - p));
}

// TensorFlow's sigmoid_cross_entropy_with_logits: the gradient is
// sigmoid(x) - y, 0.5 - y at a logit of exactly 0 (a zero-initialised
// output layer's first step), over the 2 elements of the mean.
TEST(BuildLoss, BinaryCrossentropyFromLogitsHasSigmoidGradientAtZero) {
  const std::vector<float> grad =
      RunLoss(*losses::Get("binary_crossentropy", {.from_logits = true}),
              {{1, 0}}, {{0, 0}}, /*gradient=*/true);
  ASSERT_EQ(grad.size(), 2u);
  EXPECT_NEAR(grad[0], (0.5 - 1) / 2, 1e-6);
  EXPECT_NEAR(grad[1], (0.5 - 0) / 2, 1e-6);
}

// log_cosh's gradient is tanh(error): 0 where the prediction is exact.
TEST(BuildLoss, LogCoshHasZeroGradientAtZeroError) {
  const std::vector<float> grad =
      RunLoss(*losses::Get("log_cosh"), {{0.5, -1}}, {{0.5, -1}},
              /*gradient=*/true);
  ASSERT_EQ(grad.size(), 2u);
  EXPECT_NEAR(grad[0], 0, 1e-6);
  EXPECT_NEAR(grad[1], 0, 1e-6);
}

TEST(BuildLoss, BinaryCrossentropyFromProbabilities) {
  const double want = KerasMean(
      kBinary, kProbs, [](auto t, auto p) { return Mean(Zip(t, p, Bce)); });
  EXPECT_NEAR(LossValue(*losses::Get("binary_crossentropy"), kBinary, kProbs),
              want, 1e-5);
}

TEST(BuildLoss, BinaryCrossentropyFromLogitsWithLabelSmoothing) {
  const double s = 0.2;
  const double want = KerasMean(kBinary, kPreds, [&](auto t, auto p) {
    return Mean(Zip(t, p, [&](double y, double x) {
      return Bce(y * (1 - s) + 0.5 * s, 1 / (1 + std::exp(-x)));
    }));
  });
  EXPECT_NEAR(LossValue(*losses::Get("bce", {.from_logits = true,
                                             .label_smoothing = 0.2f}),
                        kBinary, kPreds),
              want, 1e-5);
}

// One loss, its Keras per-element or per-sample formula, and its inputs.
struct Case {
  std::string name;
  LossOptions options;
  Rows truth, pred;
  std::function<double(const std::vector<double>&, const std::vector<double>&)>
      per_sample;
};

class KerasFormula : public testing::TestWithParam<Case> {};

TEST_P(KerasFormula, ValueIsTheBatchMeanOfKerasPerSampleLoss) {
  const Case& c = GetParam();
  absl::StatusOr<Loss> loss = losses::Get(c.name, c.options);
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_NEAR(LossValue(*loss, c.truth, c.pred),
              KerasMean(c.truth, c.pred, c.per_sample), 1e-4);
}

double Huber(double t, double p, double delta) {
  const double e = std::abs(p - t);
  return e <= delta ? 0.5 * e * e : delta * e - 0.5 * delta * delta;
}

double HingeLabel(double t) { return 2 * t - 1; }  // kBinary's labels

INSTANTIATE_TEST_SUITE_P(
    Losses, KerasFormula,
    testing::Values(
        Case{"mae",
             {},
             kTargets,
             kPreds,
             [](auto t, auto p) {
               return Mean(Zip(
                   t, p, [](double a, double b) { return std::abs(a - b); }));
             }},
        Case{"mape",
             {},
             kTargets,
             kPreds,
             [](auto t, auto p) {
               return 100 * Mean(Zip(t, p, [](double a, double b) {
                        return std::abs((a - b) / std::max(std::abs(a), kEps));
                      }));
             }},
        Case{"msle",
             {},
             kProbTargets,
             kPreds,
             [](auto t, auto p) {
               return Mean(Zip(t, p, [](double a, double b) {
                 const double d = std::log(std::max(b, kEps) + 1) -
                                  std::log(std::max(a, kEps) + 1);
                 return d * d;
               }));
             }},
        Case{"huber",
             {},
             kTargets,
             kPreds,
             [](auto t, auto p) {
               return Mean(Zip(
                   t, p, [](double a, double b) { return Huber(a, b, 1.0); }));
             }},
        Case{"huber",
             {.delta = 0.5f},
             kTargets,
             kPreds,
             [](auto t, auto p) {
               return Mean(Zip(
                   t, p, [](double a, double b) { return Huber(a, b, 0.5); }));
             }},
        Case{"log_cosh",
             {},
             kTargets,
             kPreds,
             [](auto t, auto p) {
               return Mean(Zip(t, p, [](double a, double b) {
                 return std::log(std::cosh(b - a));
               }));
             }},
        Case{"kl_divergence",
             {},
             kProbTargets,
             kProbs,
             [](auto t, auto p) {
               double s = 0;
               for (size_t i = 0; i < t.size(); ++i) {
                 const double a = std::clamp(t[i], kEps, 1.0);
                 const double b = std::clamp(p[i], kEps, 1.0);
                 s += a * std::log(a / b);
               }
               return s;
             }},
        Case{"poisson",
             {},
             kProbTargets,
             kProbs,
             [](auto t, auto p) {
               return Mean(Zip(t, p, [](double a, double b) {
                 return b - a * std::log(b + kEps);
               }));
             }},
        Case{"hinge",
             {},
             kBinary,
             kPreds,
             [](auto t, auto p) {
               return Mean(Zip(t, p, [](double a, double b) {
                 return std::max(1 - HingeLabel(a) * b, 0.0);
               }));
             }},
        Case{"hinge",
             {},
             {{-1, 1, 1}, {1, -1, 2}},
             kPreds,
             [](auto t, auto p) {
               return Mean(Zip(t, p, [](double a, double b) {
                 return std::max(1 - a * b, 0.0);
               }));
             }},
        Case{"squared_hinge",
             {},
             kBinary,
             kPreds,
             [](auto t, auto p) {
               return Mean(Zip(t, p, [](double a, double b) {
                 const double m = std::max(1 - HingeLabel(a) * b, 0.0);
                 return m * m;
               }));
             }},
        Case{"categorical_hinge",
             {},
             {{0, 1, 0}, {0, 0, 1}},
             kPreds,
             [](auto t, auto p) {
               double pos = 0, neg = -INFINITY;
               for (size_t i = 0; i < t.size(); ++i) {
                 pos += t[i] * p[i];
                 neg = std::max(neg, (1 - t[i]) * p[i]);
               }
               return std::max(neg - pos + 1, 0.0);
             }},
        Case{"cosine_similarity",
             {},
             kTargets,
             kPreds,
             [](auto t, auto p) {
               double tp = 0, tt = 0, pp = 0;
               for (size_t i = 0; i < t.size(); ++i) {
                 tp += t[i] * p[i];
                 tt += t[i] * t[i];
                 pp += p[i] * p[i];
               }
               return -tp / std::sqrt(tt * pp);
             }},
        Case{"mse",
             {},
             kTargets,
             kPreds,
             [](auto t, auto p) {
               return Mean(Zip(
                   t, p, [](double a, double b) { return (a - b) * (a - b); }));
             }}),
    [](const testing::TestParamInfo<Case>& info) {
      return info.param.name + "_" + std::to_string(info.index);
    });

// Every registered dense-label loss trains a free [2, 3] prediction: its
// value falls over a few plain gradient steps.
class Trains : public testing::TestWithParam<std::string> {};

TEST_P(Trains, LossDecreasesOverGradientSteps) {
  const LossKind* kind = FindLossKind(GetParam());
  ASSERT_NE(kind, nullptr);
  Graph g;
  Session session(g);
  Output w = *ops::VarHandleOp(g, DT_FLOAT, {2, 3}, {.name = "w"});
  ASSERT_TRUE(
      session
          .Run({}, {},
               {*ops::AssignVariableOp(w, *ops::Const(g, FloatRows(kProbs)))})
          .ok());
  Output pred = *ops::ReadVariableOp(w);
  absl::StatusOr<LossNodes> nodes = BuildLoss(
      Loss{.kind = kind->name}, {.output = pred, .units = 3}, "m", false);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  absl::StatusOr<std::vector<Output>> grads = AddGradients(nodes->loss, {pred});
  ASSERT_TRUE(grads.ok()) << grads.status();
  Output lr = *ops::Const(g, 0.05f);
  Output step = *ops::ResourceApplyGradientDescent(w, lr, (*grads)[0]);
  Tensor labels = kind->sparse_labels
                      ? *Tensor::FromData<int32_t>({2}, {1, 2})
                      : FloatRows(kind->name == "categorical_hinge" ||
                                          kind->name == "hinge" ||
                                          kind->name == "squared_hinge"
                                      ? kBinary
                                      : kProbTargets);
  auto value = [&] {
    absl::StatusOr<std::vector<Tensor>> out =
        session.Run({{nodes->labels, labels}}, {nodes->loss});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0].data<float>()[0] : NAN;
  };
  const float first = value();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(session.Run({{nodes->labels, labels}}, {}, {step}).ok());
  }
  EXPECT_LT(value(), first) << kind->name;
}

std::vector<std::string> AllLosses() {
  std::vector<std::string> names;
  for (const LossKind* kind : LossKinds()) names.push_back(kind->name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryLoss, Trains, testing::ValuesIn(AllLosses()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(FindLossKind, TakesFunctionNamesClassNamesAndAliases) {
  const LossKind* mae = FindLossKind("mean_absolute_error");
  ASSERT_NE(mae, nullptr);
  EXPECT_EQ(FindLossKind("mae"), mae);
  EXPECT_EQ(FindLossKind("MAE"), mae);
  EXPECT_EQ(FindLossKind("MeanAbsoluteError"), mae);
  EXPECT_EQ(FindLossKind("kld"), FindLossKind("KLDivergence"));
  EXPECT_EQ(FindLossKind("nope"), nullptr);
}

TEST(LossKinds, ListsKerasLosses) {
  for (const char* name :
       {"binary_crossentropy", "categorical_crossentropy",
        "sparse_categorical_crossentropy", "mean_squared_error",
        "mean_absolute_error", "mean_absolute_percentage_error",
        "mean_squared_logarithmic_error", "huber", "log_cosh", "kl_divergence",
        "poisson", "hinge", "squared_hinge", "categorical_hinge",
        "cosine_similarity"}) {
    EXPECT_NE(FindLossKind(name), nullptr) << name;
  }
}

TEST(GetLoss, RefusesAnUnknownNameListingTheKnownOnes) {
  absl::Status s = losses::Get("nope").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "unknown loss 'nope'")) << s;
  EXPECT_TRUE(Mentions(s, "huber")) << s;
}

TEST(GetLoss, RefusesAnOptionTheLossDoesNotTake) {
  absl::Status s = losses::Get("mae", {.from_logits = true}).status();
  EXPECT_TRUE(Mentions(s, "from_logits")) << s;
  s = losses::Get("mse", {.delta = 2.f}).status();
  EXPECT_TRUE(Mentions(s, "delta")) << s;
}

TEST(GetLoss, RefusesReductionNoneSayingTrainingNeedsAScalar) {
  absl::Status s = losses::Get("mse", {.reduction = "none"}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "reduction 'none'")) << s;
}

TEST(GetLoss, NamesTheLossByItsKerasFunctionName) {
  EXPECT_EQ(losses::Get("MAPE")->name(), "mean_absolute_percentage_error");
  EXPECT_EQ(Loss{}.name(), "none");
}

}  // namespace
}  // namespace models_internal
}  // namespace graphgc
