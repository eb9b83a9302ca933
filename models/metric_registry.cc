// The metric registry, BuildMetrics, MetricTotals and the helpers the
// kinds' files share.
#include "models/metric_registry.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "models/kind_registry.h"
#include "models/loss_registry.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

// AUC's threshold count bound: each batch compares every prediction with
// every threshold.
constexpr int kMaxThresholds = 10000;

const KindRegistry<MetricKind, &MetricKind::name>& GlobalRegistry() {
  return GlobalKindRegistry<MetricKind, &MetricKind::name>("metric",
                                                           BuiltinMetricKinds);
}

absl::Status Refuse(const Metric& metric, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("metric '", metric.kind, "': ", what));
}

// A node name part for the metric's scope: its name when every character
// is one a node name takes, else its position.
std::string ScopeName(const std::string& name, size_t index) {
  const bool plain =
      !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
      });
  return plain ? name : absl::StrCat("metric_", index);
}

absl::StatusOr<Output> FloatCount(const Output& x, const std::string& name) {
  GG_ASSIGN_OR_RETURN(Output n, ops::Size(x, {.name = name + "_int"}));
  return ops::Cast(n, DT_FLOAT, {.name = name});
}

absl::StatusOr<Output> Matches(const Output& a, const Output& b,
                               const MetricContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output eq, ops::Equal(a, b, {.name = ctx.Name("Equal")}));
  return ops::Cast(eq, DT_FLOAT, {.name = ctx.Name("Cast")});
}

// One-hot rows [batch, units] of the int32 class `ids` [batch].
absl::StatusOr<Output> OneHot(const MetricContext& ctx, const Output& ids) {
  std::vector<float> classes(static_cast<size_t>(ctx.units));
  for (int64_t i = 0; i < ctx.units; ++i) classes[i] = static_cast<float>(i);
  GG_ASSIGN_OR_RETURN(Tensor t,
                      Tensor::FromData<float>({1, ctx.units}, classes));
  Graph& g = *ctx.y_pred.graph();
  GG_ASSIGN_OR_RETURN(
      Output row, ops::Const(g, std::move(t), {.name = ctx.Name("classes")}));
  GG_ASSIGN_OR_RETURN(Output f,
                      ops::Cast(ids, DT_FLOAT, {.name = ctx.Name("ids")}));
  GG_ASSIGN_OR_RETURN(Output col,
                      ops::Reshape(f, {-1, 1}, {.name = ctx.Name("ids_col")}));
  GG_ASSIGN_OR_RETURN(Output eq,
                      ops::Equal(col, row, {.name = ctx.Name("one_hot_eq")}));
  return ops::Cast(eq, DT_FLOAT, {.name = ctx.Name("one_hot")});
}

}  // namespace

const MetricKind* FindMetricKind(const std::string& name) {
  return GlobalRegistry().Find(name);
}

std::vector<const MetricKind*> MetricKinds() {
  return GlobalRegistry().kinds();
}

std::string KnownMetrics() { return GlobalRegistry().Names(); }

std::vector<Metric> CompileMetrics(const std::vector<std::string>& names,
                                   const std::vector<Metric>& configured) {
  std::vector<Metric> out;
  for (const std::string& n : names)
    out.push_back(Metric{.kind = n, .name = n});
  out.insert(out.end(), configured.begin(), configured.end());
  return out;
}

absl::StatusOr<const MetricKind*> CheckMetric(const Metric& metric,
                                              bool sparse_labels) {
  const MetricKind* kind = FindMetricKind(metric.kind);
  if (kind == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown metric '", metric.kind, "' (known: ", KnownMetrics(), ")"));
  }
  if (metric.k != 5 && !kind->takes_k) {
    return Refuse(metric, absl::StrCat(kind->class_name, " takes no k"));
  }
  if (metric.threshold != 0.5f && !kind->takes_threshold) {
    return Refuse(metric,
                  absl::StrCat(kind->class_name, " takes no threshold"));
  }
  if (metric.num_thresholds != 200 && !kind->takes_num_thresholds) {
    return Refuse(metric,
                  absl::StrCat(kind->class_name, " takes no num_thresholds"));
  }
  if (metric.k < 1) {
    return Refuse(metric, absl::StrCat("k must be >= 1, got ", metric.k));
  }
  // Written so that NaN fails too.
  if (!(metric.threshold >= 0.f && metric.threshold <= 1.f)) {
    return Refuse(metric, absl::StrCat("threshold must be in [0, 1], got ",
                                       metric.threshold));
  }
  if (metric.num_thresholds < 2 || metric.num_thresholds > kMaxThresholds) {
    return Refuse(metric,
                  absl::StrCat("num_thresholds must be in [2, ", kMaxThresholds,
                               "], got ", metric.num_thresholds));
  }
  if (kind->labels == MetricLabels::kSparse && !sparse_labels) {
    return Refuse(metric, absl::StrCat(kind->class_name,
                                       " reads class ids, but the loss takes "
                                       "one row of targets per sample"));
  }
  if (kind->labels == MetricLabels::kDense && sparse_labels) {
    return Refuse(metric, absl::StrCat(kind->class_name,
                                       " reads one row of targets per sample, "
                                       "but the loss takes class ids"));
  }
  return kind;
}

std::string MetricName(const Metric& metric, const MetricKind& kind) {
  if (!metric.name.empty()) return metric.name;
  return kind.default_name.empty() ? kind.name : kind.default_name;
}

absl::StatusOr<std::vector<MetricNode>> BuildMetrics(
    const std::vector<Metric>& metrics, const MetricInputs& in,
    const std::string& scope, const std::string& key_prefix) {
  std::vector<MetricNode> out;
  for (size_t i = 0; i < metrics.size(); ++i) {
    const Metric& metric = metrics[i];
    GG_ASSIGN_OR_RETURN(const MetricKind* kind,
                        CheckMetric(metric, in.sparse_labels));
    MetricNode node{.name = key_prefix + MetricName(metric, *kind),
                    .metric = metric,
                    .kind = kind};
    for (const MetricNode& other : out) {
      if (other.name == node.name) {
        return absl::InvalidArgumentError(
            absl::StrCat("two metrics are named '", node.name,
                         "'; give one another name (Metric::name)"));
      }
    }
    const MetricContext ctx{
        .metric = out.emplace_back(std::move(node)).metric,
        .y_pred = in.output,
        .softmax_logits = in.softmax_logits,
        .y_true = in.labels,
        .sparse_labels = in.sparse_labels,
        .units = in.units,
        .scope = scope + "/metrics/" + ScopeName(out.back().name, i)};
    GG_ASSIGN_OR_RETURN(out.back().stats, kind->stats(ctx));
  }
  return out;
}

void MetricTotals::Reset() { totals_.clear(); }

void MetricTotals::Add(const std::vector<Tensor>& values, size_t first) {
  if (nodes_ == nullptr) return;
  totals_.resize(nodes_->size());
  size_t at = first;
  for (size_t i = 0; i < nodes_->size(); ++i) {
    std::vector<double>& sums = totals_[i];
    size_t k = 0;
    for (size_t s = 0; s < (*nodes_)[i].stats.size(); ++s) {
      for (float v : values[at++].data<float>()) {
        if (k == sums.size()) sums.push_back(0);
        sums[k++] += v;
      }
    }
  }
}

void MetricTotals::Results(std::map<std::string, float>& logs) const {
  if (nodes_ == nullptr) return;
  for (size_t i = 0; i < nodes_->size() && i < totals_.size(); ++i) {
    const MetricNode& n = (*nodes_)[i];
    logs[n.name] = static_cast<float>(n.kind->result(n.metric, totals_[i]));
  }
}

void MetricTotals::AppendFetches(const std::vector<MetricNode>& nodes,
                                 std::vector<Output>& fetches) {
  for (const MetricNode& n : nodes) {
    fetches.insert(fetches.end(), n.stats.begin(), n.stats.end());
  }
}

double DivideNoNan(double a, double b) { return b == 0 ? 0 : a / b; }

absl::StatusOr<std::vector<Output>> MeanStats(const MetricContext& ctx,
                                              const Output& per_sample) {
  GG_ASSIGN_OR_RETURN(Output sum,
                      ops::Sum(per_sample, {.name = ctx.Name("total")}));
  GG_ASSIGN_OR_RETURN(Output count, FloatCount(per_sample, ctx.Name("count")));
  return std::vector<Output>{sum, count};
}

double MeanResult(const Metric&, absl::Span<const double> totals) {
  return totals.size() < 2 ? 0 : DivideNoNan(totals[0], totals[1]);
}

absl::StatusOr<Output> LossPerSample(const MetricContext& ctx,
                                     const std::string& loss_kind) {
  const LossKind* kind = FindLossKind(loss_kind);
  if (kind == nullptr) {
    return absl::InternalError(absl::StrCat("no loss '", loss_kind, "'"));
  }
  const Loss loss{.kind = kind->name};
  const LossContext lctx{.loss = loss,
                         .y_pred = ctx.y_pred,
                         .softmax_logits = ctx.softmax_logits,
                         .y_true = ctx.y_true,
                         .units = ctx.units,
                         .scope = ctx.scope};
  return kind->per_sample(lctx);
}

absl::StatusOr<std::vector<Output>> LossMeanStats(
    const MetricContext& ctx, const std::string& loss_kind) {
  GG_ASSIGN_OR_RETURN(Output per_sample, LossPerSample(ctx, loss_kind));
  return MeanStats(ctx, per_sample);
}

absl::StatusOr<Output> SparseCategoricalMatches(const MetricContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output pred, ops::ArgMax(ctx.y_pred, 1,
                                               {.name = ctx.Name("ArgMax"),
                                                .output_type = DT_INT32}));
  return Matches(pred, ctx.y_true, ctx);
}

absl::StatusOr<Output> CategoricalMatches(const MetricContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output pred,
                      ops::ArgMax(ctx.y_pred, 1, {.name = ctx.Name("ArgMax")}));
  GG_ASSIGN_OR_RETURN(
      Output truth, ops::ArgMax(ctx.y_true, 1, {.name = ctx.Name("ArgMax_1")}));
  return Matches(pred, truth, ctx);
}

absl::StatusOr<Output> BinaryMatches(const MetricContext& ctx) {
  GG_ASSIGN_OR_RETURN(Output threshold,
                      ops::ScalarLike(ctx.y_pred, ctx.metric.threshold,
                                      {.name = ctx.Name("threshold")}));
  GG_ASSIGN_OR_RETURN(Output gt, ops::Greater(ctx.y_pred, threshold,
                                              {.name = ctx.Name("Greater")}));
  GG_ASSIGN_OR_RETURN(Output pred,
                      ops::Cast(gt, DT_FLOAT, {.name = ctx.Name("Cast_1")}));
  GG_ASSIGN_OR_RETURN(Output m, Matches(pred, ctx.y_true, ctx));
  return ops::Mean(m, {.name = ctx.Name("Mean"), .axes = {-1}});
}

absl::StatusOr<Output> InTopK(const MetricContext& ctx, const Output& ids) {
  GG_ASSIGN_OR_RETURN(Output hot, OneHot(ctx, ids));
  GG_ASSIGN_OR_RETURN(Output picked,
                      ops::Mul(hot, ctx.y_pred, {.name = ctx.Name("picked")}));
  GG_ASSIGN_OR_RETURN(
      Output target,
      ops::Sum(picked,
               {.name = ctx.Name("target"), .axes = {-1}, .keep_dims = true}));
  GG_ASSIGN_OR_RETURN(Output above, ops::Greater(ctx.y_pred, target,
                                                 {.name = ctx.Name("above")}));
  GG_ASSIGN_OR_RETURN(
      Output af, ops::Cast(above, DT_FLOAT, {.name = ctx.Name("above_f")}));
  GG_ASSIGN_OR_RETURN(Output rank,
                      ops::Sum(af, {.name = ctx.Name("rank"), .axes = {-1}}));
  GG_ASSIGN_OR_RETURN(Output k, ops::ScalarLike(ctx.y_pred, ctx.metric.k,
                                                {.name = ctx.Name("k")}));
  GG_ASSIGN_OR_RETURN(Output in,
                      ops::Less(rank, k, {.name = ctx.Name("in_top_k")}));
  return ops::Cast(in, DT_FLOAT, {.name = ctx.Name("Cast")});
}

absl::StatusOr<std::vector<Output>> ConfusionStats(
    const MetricContext& ctx, const std::vector<float>& thresholds) {
  const int64_t t = static_cast<int64_t>(thresholds.size());
  GG_ASSIGN_OR_RETURN(Tensor th, Tensor::FromData<float>({1, t}, thresholds));
  Graph& g = *ctx.y_pred.graph();
  GG_ASSIGN_OR_RETURN(Output row, ops::Const(g, std::move(th),
                                             {.name = ctx.Name("thresholds")}));
  GG_ASSIGN_OR_RETURN(Output pred, ops::Reshape(ctx.y_pred, {-1, 1},
                                                {.name = ctx.Name("pred")}));
  GG_ASSIGN_OR_RETURN(Output truth, ops::Reshape(ctx.y_true, {-1, 1},
                                                 {.name = ctx.Name("truth")}));
  GG_ASSIGN_OR_RETURN(Output zero,
                      ops::ScalarLike(truth, 0.0, {.name = ctx.Name("zero")}));
  GG_ASSIGN_OR_RETURN(Output neg,
                      ops::Equal(truth, zero, {.name = ctx.Name("is_neg")}));
  GG_ASSIGN_OR_RETURN(Output negf,
                      ops::Cast(neg, DT_FLOAT, {.name = ctx.Name("neg")}));
  GG_ASSIGN_OR_RETURN(Output one,
                      ops::ScalarLike(truth, 1.0, {.name = ctx.Name("one")}));
  GG_ASSIGN_OR_RETURN(Output pos,
                      ops::Sub(one, negf, {.name = ctx.Name("pos")}));
  GG_ASSIGN_OR_RETURN(Output gt,
                      ops::Greater(pred, row, {.name = ctx.Name("Greater")}));
  GG_ASSIGN_OR_RETURN(Output said,
                      ops::Cast(gt, DT_FLOAT, {.name = ctx.Name("said_pos")}));
  GG_ASSIGN_OR_RETURN(Output hit,
                      ops::Mul(said, pos, {.name = ctx.Name("hit")}));
  GG_ASSIGN_OR_RETURN(Output tp,
                      ops::Sum(hit, {.name = ctx.Name("tp"), .axes = {0}}));
  GG_ASSIGN_OR_RETURN(
      Output predicted,
      ops::Sum(said, {.name = ctx.Name("predicted_pos"), .axes = {0}}));
  GG_ASSIGN_OR_RETURN(Output positives,
                      ops::Sum(pos, {.name = ctx.Name("positives")}));
  GG_ASSIGN_OR_RETURN(Output count, FloatCount(pos, ctx.Name("count")));
  return std::vector<Output>{tp, predicted, positives, count};
}

Confusion ConfusionOf(absl::Span<const double> totals, size_t thresholds) {
  Confusion c;
  if (totals.size() != 2 * thresholds + 2) return c;
  const double positives = totals[2 * thresholds];
  const double count = totals[2 * thresholds + 1];
  for (size_t i = 0; i < thresholds; ++i) {
    const double tp = totals[i], predicted = totals[thresholds + i];
    c.tp.push_back(tp);
    c.fp.push_back(predicted - tp);
    c.fn.push_back(positives - tp);
    c.tn.push_back(count - positives - (predicted - tp));
  }
  return c;
}

}  // namespace models_internal
}  // namespace graphgc
