// serialize/hparams_summary.cc
#include "serialize/hparams_summary.h"

#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "serialize/event.pb.h"
#include "serialize/event_file.h"
#include "util/status_macros.h"

namespace graphgc::hparams {
namespace {

google::protobuf::Value ToValue(const HParamValue& v) {
  google::protobuf::Value out;
  if (const double* d = std::get_if<double>(&v)) {
    out.set_number_value(*d);
  } else if (const std::string* s = std::get_if<std::string>(&v)) {
    out.set_string_value(*s);
  } else {
    out.set_bool_value(std::get<bool>(v));
  }
  return out;
}

DataType TypeOf(const HParamValue& v) {
  if (std::holds_alternative<double>(v)) return DATA_TYPE_FLOAT64;
  if (std::holds_alternative<std::string>(v)) return DATA_TYPE_STRING;
  return DATA_TYPE_BOOL;
}

// One summary value holding `data`, as TensorBoard's hparams summary module
// writes it: the plugin metadata and an empty float vector as the tensor.
proto::Summary Wrap(const std::string& tag,
                         const HParamsPluginData& data) {
  proto::Summary summary;
  proto::Summary::Value* value = summary.add_value();
  value->set_tag(tag);
  proto::SummaryMetadata::PluginData* plugin =
      value->mutable_metadata()->mutable_plugin_data();
  plugin->set_plugin_name(kPluginName);
  plugin->set_content(data.SerializeAsString());
  proto::TensorProto* tensor = value->mutable_tensor();
  tensor->set_dtype(proto::DT_FLOAT);
  tensor->mutable_tensor_shape()->add_dim()->set_size(0);
  return summary;
}

}  // namespace

absl::StatusOr<proto::Summary> ExperimentSummary(
    const std::vector<HParamSpec>& hparams,
    const std::vector<MetricSpec>& metrics, double time_created_secs,
    const std::string& name) {
  HParamsPluginData data;
  data.set_version(kPluginDataVersion);
  Experiment* experiment = data.mutable_experiment();
  experiment->set_name(name);
  experiment->set_time_created_secs(time_created_secs);
  std::set<std::string> names;
  for (const HParamSpec& h : hparams) {
    if (h.name.empty()) {
      return absl::InvalidArgumentError(
          "hparams: a hyperparameter has no name");
    }
    if (!names.insert(h.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("hparams: hyperparameter '", h.name, "' is repeated"));
    }
    if (h.values.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("hparams: hyperparameter '", h.name, "' has no values"));
    }
    HParamInfo* info = experiment->add_hparam_infos();
    info->set_name(h.name);
    info->set_description(h.description);
    info->set_type(TypeOf(h.values.front()));
    for (const HParamValue& v : h.values) {
      if (TypeOf(v) != info->type()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "hparams: hyperparameter '", h.name, "' mixes value types"));
      }
      *info->mutable_domain_discrete()->add_values() = ToValue(v);
    }
  }
  std::set<std::pair<std::string, std::string>> metric_names;
  for (const MetricSpec& m : metrics) {
    if (m.tag.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hparams: a metric of group '", m.group, "' has no tag"));
    }
    if (!metric_names.insert({m.group, m.tag}).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hparams: metric '", m.group, "/", m.tag, "' is repeated"));
    }
    MetricInfo* info = experiment->add_metric_infos();
    info->mutable_name()->set_group(m.group);
    info->mutable_name()->set_tag(m.tag);
    info->set_display_name(m.display_name);
    info->set_dataset_type(m.dataset_type);
  }
  return Wrap(kExperimentTag, data);
}

proto::Summary SessionStartSummary(
    const std::map<std::string, HParamValue>& hparams,
    const std::string& group_name, double start_time_secs) {
  HParamsPluginData data;
  data.set_version(kPluginDataVersion);
  SessionStartInfo* start = data.mutable_session_start_info();
  for (const auto& [name, value] : hparams) {
    (*start->mutable_hparams())[name] = ToValue(value);
  }
  start->set_group_name(group_name);
  start->set_start_time_secs(start_time_secs);
  return Wrap(kSessionStartInfoTag, data);
}

proto::Summary SessionEndSummary(Status status, double end_time_secs) {
  HParamsPluginData data;
  data.set_version(kPluginDataVersion);
  SessionEndInfo* end = data.mutable_session_end_info();
  end->set_status(status);
  end->set_end_time_secs(end_time_secs);
  return Wrap(kSessionEndInfoTag, data);
}

absl::StatusOr<HParamsPluginData> DecodePluginData(
    const proto::Summary::Value& value) {
  if (!value.has_metadata() ||
      value.metadata().plugin_data().plugin_name() != kPluginName) {
    return absl::InvalidArgumentError(absl::StrCat(
        "summary '", value.tag(), "' is not an hparams plugin summary"));
  }
  HParamsPluginData data;
  if (!data.ParseFromString(value.metadata().plugin_data().content())) {
    return absl::InvalidArgumentError(
        absl::StrCat("summary '", value.tag(),
                     "': plugin content does not parse as "
                     "HParamsPluginData"));
  }
  return data;
}

absl::Status WriteSummaries(const std::string& log_dir,
                            const std::vector<proto::Summary>& summaries,
                            double wall_time) {
  GG_ASSIGN_OR_RETURN(std::unique_ptr<EventFileWriter> writer,
                      EventFileWriter::Create(log_dir));
  for (const proto::Summary& summary : summaries) {
    proto::Event event;
    event.set_wall_time(wall_time);
    event.set_step(0);
    *event.mutable_summary() = summary;
    GG_RETURN_IF_ERROR(writer->WriteEvent(event));
  }
  return writer->Close();
}

}  // namespace graphgc::hparams
