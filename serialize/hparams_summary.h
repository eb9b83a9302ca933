// serialize/hparams_summary.h
//
// Summaries of TensorBoard's HParams plugin, so that real TensorBoard's
// HParams dashboard lists the trials of a hyperparameter search and sorts
// them by a metric. Three kinds, each one Summary value whose metadata names
// the plugin ("hparams") and carries a serialized HParamsPluginData
// (serialize/hparams_plugin_data.proto), with TensorBoard's empty float
// tensor as the value, exactly as tensorboard.plugins.hparams.summary
// writes them:
//   - the experiment (tag "_hparams_/experiment"), once, in the log
//     directory's root run: every hyperparameter with its domain, and the
//     metrics to show;
//   - a session's start (tag "_hparams_/session_start_info"), in the
//     session's run "<logdir>/<session>": its hyperparameter values and
//     group;
//   - a session's end (tag "_hparams_/session_end_info"): its status.
// A metric (group, tag) of a session is the scalar `tag` of run
// "<session>/<group>" (the TensorBoard callback's "train" and "validation").
//
// Thread safety: the functions are thread-safe.
//
// Example:
//   GG_ASSIGN_OR_RETURN(proto::Summary experiment,
//       ExperimentSummary({{"units", {64.0, 128.0}}},
//                         {{"validation", "epoch_accuracy"}}, now));
//   GG_RETURN_IF_ERROR(WriteSummaries(logdir, {experiment}, now));
#ifndef GRAPHGC_SERIALIZE_HPARAMS_SUMMARY_H_
#define GRAPHGC_SERIALIZE_HPARAMS_SUMMARY_H_

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "serialize/hparams_plugin_data.pb.h"
#include "serialize/summary.pb.h"

namespace graphgc::hparams {

inline constexpr char kPluginName[] = "hparams";
inline constexpr int kPluginDataVersion = 0;
inline constexpr char kExperimentTag[] = "_hparams_/experiment";
inline constexpr char kSessionStartInfoTag[] = "_hparams_/session_start_info";
inline constexpr char kSessionEndInfoTag[] = "_hparams_/session_end_info";

// A hyperparameter value: a number, a string or a bool.
using HParamValue = std::variant<double, std::string, bool>;

// One hyperparameter of an experiment and the values it takes (its discrete
// domain; all of one type, which gives the HParamInfo's type).
struct HParamSpec {
  std::string name;
  std::vector<HParamValue> values;
  std::string description;
};

// One metric of an experiment: the scalar `tag` of run "<session>/<group>".
struct MetricSpec {
  std::string group;
  std::string tag;
  std::string display_name;
  DatasetType dataset_type = DATASET_UNKNOWN;
};

// The experiment summary. InvalidArgument naming the hyperparameter when a
// name is empty or repeated, or its values are empty or of mixed types;
// naming the metric when its tag is empty or the pair repeats.
absl::StatusOr<proto::Summary> ExperimentSummary(
    const std::vector<HParamSpec>& hparams,
    const std::vector<MetricSpec>& metrics, double time_created_secs,
    const std::string& name = "");

// A session's start: its hyperparameter values and group (empty: the
// session is its own group).
proto::Summary SessionStartSummary(
    const std::map<std::string, HParamValue>& hparams,
    const std::string& group_name, double start_time_secs);

// A session's end with its status.
proto::Summary SessionEndSummary(Status status, double end_time_secs);

// DecodePluginData: the HParamsPluginData of a summary value, or
// InvalidArgument naming the tag when the value is not the hparams
// plugin's or its content does not parse.
absl::StatusOr<HParamsPluginData> DecodePluginData(
    const proto::Summary::Value& value);

// WriteSummaries: a new events file in `log_dir` (created if missing) with
// one event per summary at `wall_time`, step 0, closed before returning.
// Errors name the directory or file.
absl::Status WriteSummaries(const std::string& log_dir,
                            const std::vector<proto::Summary>& summaries,
                            double wall_time);

}  // namespace graphgc::hparams

#endif  // GRAPHGC_SERIALIZE_HPARAMS_SUMMARY_H_
