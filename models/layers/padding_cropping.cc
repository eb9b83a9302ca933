// Padding and cropping shared by ZeroPadding1D, ZeroPadding2D, Cropping1D
// and Cropping2D (models/layers/padding_cropping.h).
#include "models/layers/padding_cropping.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/layers.h"
#include "ops/concat_ops.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

struct PaddingCroppingConfig : LayerConfig {
  int spatial = 2;
  bool crop = false;
  // Before and after of each spatial axis: [top, bottom, left, right] or
  // [left, right].
  std::vector<int64_t> amounts;
};

const PaddingCroppingConfig &Config(const LayerState &layer) {
  return ConfigOf<PaddingCroppingConfig>(layer);
}

const char *Field(bool crop) { return crop ? "cropping" : "padding"; }

// Keras 3's Cropping1D alone takes no data_format.
bool HasDataFormat(int spatial, bool crop) { return spatial == 2 || !crop; }

Json WritePaddingCroppingConfig(const LayerState &layer,
                                const std::string &name) {
  const PaddingCroppingConfig &c = Config(layer);
  Json j = CommonConfig(name);
  const std::vector<int64_t> &a = c.amounts;
  if (c.spatial == 2) {
    j[Field(c.crop)] =
        Json::array({Json::array({a[0], a[1]}), Json::array({a[2], a[3]})});
  } else {
    j[Field(c.crop)] = Json::array({a[0], a[1]});
  }
  if (HasDataFormat(c.spatial, c.crop)) j["data_format"] = "channels_last";
  return j;
}

absl::StatusOr<TensorShape> PaddingCroppingOutputShape(const LayerState &layer,
                                                       const TensorShape &in) {
  const PaddingCroppingConfig &c = Config(layer);
  if (in.dims() != c.spatial + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": takes ",
        c.spatial == 2 ? "NHWC images [batch, height, width, channels], "
                         "(None, h, w, c)"
                       : "sequences [batch, steps, channels], (None, steps, "
                         "c)",
        ", but gets ", KerasShape(in)));
  }
  std::vector<int64_t> out;
  for (int d = 0; d < c.spatial; ++d) {
    const int64_t before = c.amounts[2 * d], after = c.amounts[2 * d + 1];
    int64_t size = 0;
    if (c.crop) {
      // Keras: the cropped size must stay >= 1.
      if (before >= in[d] || after >= in[d] - before) {
        return absl::InvalidArgumentError(absl::StrCat(
            LayerLabel(layer),
            ": cropping must be smaller than the input size, got cropping "
            "[",
            absl::StrJoin(c.amounts, ", "), "] for inputs ", KerasShape(in)));
      }
      size = in[d] - before - after;
    } else if (__builtin_add_overflow(in[d], before, &size) ||
               __builtin_add_overflow(size, after, &size)) {
      return absl::InvalidArgumentError(absl::StrCat(
          LayerLabel(layer), ": padding [", absl::StrJoin(c.amounts, ", "),
          "] of inputs ", KerasShape(in), " overflows int64"));
    }
    out.push_back(size);
  }
  out.push_back(in[c.spatial]);
  return TensorShape(out);
}

absl::StatusOr<LayerOutputs> ApplyPaddingCropping(const LayerState &layer,
                                                  const BuiltLayer &built,
                                                  const Output &x, bool) {
  const PaddingCroppingConfig &c = Config(layer);
  Output y;
  if (c.crop) {
    GG_ASSIGN_OR_RETURN(TensorShape out,
                        PaddingCroppingOutputShape(layer, built.shape));
    std::vector<int64_t> begin = {0}, size = {-1};
    for (int d = 0; d < c.spatial; ++d) {
      begin.push_back(c.amounts[2 * d]);
      size.push_back(out[d]);
    }
    begin.push_back(0);
    size.push_back(-1);
    GG_ASSIGN_OR_RETURN(y, ops::Slice(x, std::move(begin), std::move(size),
                                      {.name = built.name() + "/Slice"}));
  } else {
    std::vector<int64_t> paddings = {0, 0};
    paddings.insert(paddings.end(), c.amounts.begin(), c.amounts.end());
    paddings.insert(paddings.end(), {0, 0});
    GG_ASSIGN_OR_RETURN(
        y, ops::Pad(x, std::move(paddings), {.name = built.name() + "/Pad"}));
  }
  return LayerOutputs{.pre_activation = y, .output = y};
}

// `given` as before and after of each spatial axis.
absl::Status Amounts(const LayerState &layer, int spatial, bool crop,
                     const std::vector<int64_t> &given,
                     std::vector<int64_t> &out) {
  const size_t n = given.size();
  out.clear();
  if (n == 1) {
    out.assign(2 * spatial, given[0]);
  } else if (n == static_cast<size_t>(spatial) && spatial == 2) {
    out = {given[0], given[0], given[1], given[1]};
  } else if (n == static_cast<size_t>(2 * spatial)) {
    out = given;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": ", Field(crop), " must have ",
        spatial == 2 ? "1, 2 or 4 values (an int, (height, width) or "
                       "((top, bottom), (left, right)))"
                     : "1 or 2 values (an int or (left, right))",
        ", got ", n, " ([", absl::StrJoin(given, ", "), "])"));
  }
  for (int64_t v : out) {
    if (v < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          LayerLabel(layer), ": ", Field(crop), " must be >= 0, got [",
          absl::StrJoin(given, ", "), "]"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

LayerKind PaddingCroppingKind(
    std::string class_name, std::string default_name, int order, int spatial,
    bool crop,
    absl::StatusOr<Layer> (*read_config)(const ConfigObject &config)) {
  std::string weights_group = default_name;
  std::vector<ConfigField> fields = {
      {Field(crop), spatial == 2 ? "padding2d" : "padding1d",
       crop ? (spatial == 2 ? "[[0, 0], [0, 0]]" : "[1, 1]")
            : (spatial == 2 ? "[1, 1]" : "1")}};
  if (HasDataFormat(spatial, crop)) {
    fields.push_back({"data_format", "str", "null"});
  }
  fields.push_back({"name", "name", "null"});
  return LayerKind{
      .class_name = std::move(class_name),
      .default_name = std::move(default_name),
      .order = order,
      .weights_group = std::move(weights_group),
      .fields = std::move(fields),
      .write_config = WritePaddingCroppingConfig,
      .read_config = read_config,
      .output_shape = PaddingCroppingOutputShape,
      .apply = ApplyPaddingCropping,
  };
}

Layer MakePaddingCropping(const LayerKind &kind, int spatial, bool crop,
                          const std::vector<int64_t> &amounts,
                          std::string name) {
  auto config = std::make_unique<PaddingCroppingConfig>();
  PaddingCroppingConfig &c = *config;
  c.spatial = spatial;
  c.crop = crop;
  auto state = NewLayerState(kind, std::move(name), std::move(config));
  state->error = Amounts(*state, spatial, crop, amounts, c.amounts);
  return MakeLayer(std::move(state));
}

absl::StatusOr<Layer> ReadPaddingCroppingConfig(const LayerKind &kind,
                                                int spatial, bool crop,
                                                const ConfigObject &config) {
  const char *key = Field(crop);
  // An int, a list of ints, or (2-D) a list of two (before, after) lists.
  // Keras's defaults when the key is absent: padding 1, Cropping1D 1,
  // Cropping2D 0.
  std::vector<int64_t> amounts = {crop && spatial == 2 ? 0 : 1};
  const Json *j = config.Find(key);
  if (j != nullptr && j->is_array() && !j->empty() && (*j)[0].is_array()) {
    amounts.clear();
    if (spatial != 2 || j->size() != 2) {
      return config.WrongType(key, "a list of two (before, after) lists", *j);
    }
    for (const Json &pair : *j) {
      if (!pair.is_array() || pair.size() != 2 ||
          !pair[0].is_number_integer() || !pair[1].is_number_integer()) {
        return config.WrongType(key, "a list of two (before, after) lists", *j);
      }
      amounts.push_back(pair[0].get<int64_t>());
      amounts.push_back(pair[1].get<int64_t>());
    }
  } else {
    GG_ASSIGN_OR_RETURN(amounts, config.IntList(key, amounts, true));
  }
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(config.Only("data_format", "channels_last"));
  return MakePaddingCropping(kind, spatial, crop, amounts, std::move(name));
}

}  // namespace models_internal
}  // namespace graphgc
