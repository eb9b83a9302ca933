// accuracy: Keras's compile resolves "accuracy" and "acc" from the labels
// and the output: sparse categorical accuracy for class ids, binary
// accuracy for one output unit, categorical accuracy otherwise.
#include "models/metric_registry.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

absl::StatusOr<std::vector<Output>> Stats(const MetricContext& ctx) {
  Output matches;
  if (ctx.sparse_labels) {
    GG_ASSIGN_OR_RETURN(matches, SparseCategoricalMatches(ctx));
  } else if (ctx.units == 1) {
    GG_ASSIGN_OR_RETURN(matches, BinaryMatches(ctx));
  } else {
    GG_ASSIGN_OR_RETURN(matches, CategoricalMatches(ctx));
  }
  return MeanStats(ctx, matches);
}

const MetricKind& AccuracyKind() {
  static const MetricKind kind{.name = "accuracy",
                               .class_name = "accuracy",
                               .aliases = {"acc"},
                               .order = 10,
                               .labels = MetricLabels::kAny,
                               .stats = Stats,
                               .result = MeanResult};
  return kind;
}

}  // namespace

GG_REGISTER_METRIC_KIND(AccuracyKind);

}  // namespace models_internal
}  // namespace graphgc
