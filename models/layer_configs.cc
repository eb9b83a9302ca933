#include "models/layer_configs.h"

#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

Json WriteInputConfig(const LayerState& layer, const std::string& name) {
  const Json shape = BatchShape(layer.input_shape);
  // Keras 3 reads "batch_shape"; "batch_input_shape" is Keras 2's spelling,
  // which Keras 3 also takes.
  return {{"batch_shape", shape},
          {"batch_input_shape", shape},
          {"dtype", "float32"},
          {"sparse", false},
          {"name", name}};
}

absl::StatusOr<Layer> ReadInputConfig(const Object& config) {
  const char* key = "batch_shape";
  const Json* shape = config.Find(key);
  if (shape == nullptr) {
    key = "batch_input_shape";
    shape = config.Find(key);
  }
  if (shape == nullptr) return config.Missing("batch_shape");
  const char* want = "a list [null, dim, ...] of positive integers or nulls";
  if (!shape->is_array() || shape->empty()) {
    return config.WrongType(key, want, *shape);
  }
  std::vector<int64_t> dims;
  for (size_t i = 1; i < shape->size(); ++i) {
    const Json& d = (*shape)[i];
    if (d.is_null()) {
      dims.push_back(-1);
    } else if (d.is_number_integer() && !d.is_number_unsigned() &&
               d.get<int64_t>() > 0) {
      dims.push_back(d.get<int64_t>());
    } else if (d.is_number_unsigned() &&
               d.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX) &&
               d.get<uint64_t>() > 0) {
      dims.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    } else {
      return config.Error(absl::StrCat("field '", key, "' must be ", want,
                                       "; entry ", i, " is ", Shown(d)));
    }
  }
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  return layers::Input(TensorShape(dims), std::move(name));
}

Json WriteDenseConfig(const LayerState& layer, const std::string& name) {
  const std::string& act = layer.dense.activation;
  return {
      {"name", name},
      {"trainable", true},
      {"dtype", "float32"},
      {"units", layer.units},
      {"activation", act.empty() ? std::string("linear") : act},
      {"use_bias", layer.dense.use_bias},
      {"kernel_initializer",
       KerasObject("keras.initializers", "GlorotUniform", {{"seed", nullptr}})},
      {"bias_initializer",
       KerasObject("keras.initializers", "Zeros", Json::object())},
      {"kernel_regularizer", nullptr},
      {"bias_regularizer", nullptr},
      {"kernel_constraint", nullptr},
      {"bias_constraint", nullptr},
  };
}

absl::StatusOr<Layer> ReadDenseConfig(const Object& config) {
  GG_ASSIGN_OR_RETURN(const int64_t units, config.Int("units"));
  GG_ASSIGN_OR_RETURN(std::string activation,
                      config.String("activation", "linear"));
  GG_ASSIGN_OR_RETURN(const bool use_bias, config.Bool("use_bias", true));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  return layers::Dense(units, {.activation = std::move(activation),
                               .use_bias = use_bias,
                               .name = std::move(name)});
}

// A list of integers (Keras's tuples: kernel_size, strides, pool_size,
// target_shape), or with `scalar_ok` one integer (Keras takes 3 for (3, 3)).
absl::StatusOr<std::vector<int64_t>> IntList(
    const Object& config, const char* key,
    std::optional<std::vector<int64_t>> fallback, bool scalar_ok) {
  const Json* j = config.Find(key);
  if (j == nullptr || (fallback.has_value() && j->is_null())) {
    if (fallback.has_value()) return *fallback;
    return config.Missing(key);
  }
  const char* want =
      scalar_ok ? "an integer or a list of integers" : "a list of integers";
  auto one = [&](const Json& v) -> std::optional<int64_t> {
    if (!v.is_number_integer()) return std::nullopt;
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return std::nullopt;
    }
    return v.get<int64_t>();
  };
  std::vector<int64_t> out;
  if (scalar_ok && j->is_number_integer()) {
    std::optional<int64_t> v = one(*j);
    if (!v.has_value()) return config.WrongType(key, want, *j);
    return std::vector<int64_t>{*v};
  }
  if (!j->is_array()) return config.WrongType(key, want, *j);
  for (const Json& v : *j) {
    std::optional<int64_t> x = one(v);
    if (!x.has_value()) return config.WrongType(key, want, *j);
    out.push_back(*x);
  }
  return out;
}

// Refuses a Keras option graphgc does not implement unless it has the one
// value graphgc implements (absent is fine too).
absl::Status Only(const Object& config, const char* key, const Json& value) {
  const Json* j = config.Find(key);
  if (j == nullptr || j->is_null() || *j == value) return absl::OkStatus();
  return config.Error(absl::StrCat("field '", key, "' must be ", value.dump(),
                                   " (graphgc supports no other "
                                   "value), got ",
                                   Shown(*j)));
}

Json CommonConfig(const std::string& name) {
  return {{"name", name}, {"trainable", true}, {"dtype", "float32"}};
}

Json Initializer(const char* class_name) {
  return KerasObject("keras.initializers", class_name,
                     std::string(class_name) == "GlorotUniform"
                         ? Json{{"seed", nullptr}}
                         : Json::object());
}

Json WriteConv2DConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  c["filters"] = layer.units;
  c["kernel_size"] = layer.window;
  c["strides"] = layer.strides;
  c["padding"] = layer.padding;
  c["data_format"] = "channels_last";
  c["dilation_rate"] = {1, 1};
  c["groups"] = 1;
  c["activation"] = layer.activation.empty() ? "linear" : layer.activation;
  c["use_bias"] = layer.conv.use_bias;
  c["kernel_initializer"] = Initializer("GlorotUniform");
  c["bias_initializer"] = Initializer("Zeros");
  for (const char* k :
       {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
        "kernel_constraint", "bias_constraint"}) {
    c[k] = nullptr;
  }
  return c;
}

absl::StatusOr<Layer> ReadConv2DConfig(const Object& config) {
  GG_ASSIGN_OR_RETURN(const int64_t filters, config.Int("filters"));
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_size,
                      IntList(config, "kernel_size", std::nullopt, true));
  GG_ASSIGN_OR_RETURN(
      std::vector<int64_t> strides,
      IntList(config, "strides", std::vector<int64_t>{1, 1}, true));
  GG_ASSIGN_OR_RETURN(std::string padding, config.String("padding", "valid"));
  GG_ASSIGN_OR_RETURN(std::string activation,
                      config.String("activation", "linear"));
  GG_ASSIGN_OR_RETURN(const bool use_bias, config.Bool("use_bias", true));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(Only(config, "data_format", "channels_last"));
  GG_RETURN_IF_ERROR(Only(config, "groups", 1));
  if (const Json* d = config.Find("dilation_rate");
      d != nullptr && !d->is_null() && *d != Json(1) && *d != Json({1, 1})) {
    GG_RETURN_IF_ERROR(Only(config, "dilation_rate", Json({1, 1})));
  }
  return layers::Conv2D(filters, std::move(kernel_size),
                        {.strides = std::move(strides),
                         .padding = std::move(padding),
                         .activation = std::move(activation),
                         .use_bias = use_bias,
                         .name = std::move(name)});
}

Json WriteMaxPooling2DConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  c["pool_size"] = layer.window;
  c["padding"] = layer.padding;
  c["strides"] = layer.strides;
  c["data_format"] = "channels_last";
  return c;
}

absl::StatusOr<Layer> ReadMaxPooling2DConfig(const Object& config) {
  GG_ASSIGN_OR_RETURN(
      std::vector<int64_t> pool_size,
      IntList(config, "pool_size", std::vector<int64_t>{2, 2}, true));
  // null strides: the pool size, as Keras.
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      IntList(config, "strides", std::vector<int64_t>{}, true));
  GG_ASSIGN_OR_RETURN(std::string padding, config.String("padding", "valid"));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(Only(config, "data_format", "channels_last"));
  return layers::MaxPooling2D(std::move(pool_size),
                              {.strides = std::move(strides),
                               .padding = std::move(padding),
                               .name = std::move(name)});
}

Json WriteFlattenConfig(const LayerState&, const std::string& name) {
  Json c = CommonConfig(name);
  c["data_format"] = "channels_last";
  return c;
}

absl::StatusOr<Layer> ReadFlattenConfig(const Object& config) {
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(Only(config, "data_format", "channels_last"));
  return layers::Flatten(std::move(name));
}

Json WriteDropoutConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  c["rate"] = FloatJson(layer.rate);
  c["seed"] = layer.seed;
  c["noise_shape"] = nullptr;
  return c;
}

absl::StatusOr<Layer> ReadDropoutConfig(const Object& config) {
  if (config.Find("rate") == nullptr) return config.Missing("rate");
  GG_ASSIGN_OR_RETURN(const float rate, config.Float("rate", 0.5f));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  uint64_t seed = 0;  // null or absent: a drawn seed, as Keras
  if (const Json* j = config.Find("seed"); j != nullptr && !j->is_null()) {
    if (!j->is_number_integer() ||
        (!j->is_number_unsigned() && j->get<int64_t>() < 0)) {
      return config.WrongType("seed", "a non-negative integer or null", *j);
    }
    seed = j->get<uint64_t>();
  }
  GG_RETURN_IF_ERROR(Only(config, "noise_shape", nullptr));
  return layers::Dropout(rate, std::move(name), seed);
}

Json WriteBatchNormalizationConfig(const LayerState& layer,
                                   const std::string& name) {
  Json c = CommonConfig(name);
  c["axis"] = -1;
  c["momentum"] = FloatJson(layer.batch_norm.momentum);
  c["epsilon"] = FloatJson(layer.batch_norm.epsilon);
  c["center"] = true;
  c["scale"] = true;
  c["beta_initializer"] = Initializer("Zeros");
  c["gamma_initializer"] = Initializer("Ones");
  c["moving_mean_initializer"] = Initializer("Zeros");
  c["moving_variance_initializer"] = Initializer("Ones");
  for (const char* k : {"beta_regularizer", "gamma_regularizer",
                        "beta_constraint", "gamma_constraint"}) {
    c[k] = nullptr;
  }
  c["synchronized"] = false;
  return c;
}

absl::StatusOr<Layer> ReadBatchNormalizationConfig(const Object& config) {
  GG_ASSIGN_OR_RETURN(const float momentum, config.Float("momentum", 0.99f));
  GG_ASSIGN_OR_RETURN(const float epsilon, config.Float("epsilon", 1e-3f));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_RETURN_IF_ERROR(Only(config, "center", true));
  GG_RETURN_IF_ERROR(Only(config, "scale", true));
  if (const Json* a = config.Find("axis");
      a != nullptr && *a != Json(-1) && *a != Json({-1})) {
    GG_RETURN_IF_ERROR(Only(config, "axis", -1));
  }
  return layers::BatchNormalization(
      {.momentum = momentum, .epsilon = epsilon, .name = std::move(name)});
}

Json WriteReshapeConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  const absl::Span<const int64_t> target = layer.target_shape.dim_sizes();
  c["target_shape"] = std::vector<int64_t>(target.begin(), target.end());
  return c;
}

absl::StatusOr<Layer> ReadReshapeConfig(const Object& config) {
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> target,
                      IntList(config, "target_shape", std::nullopt, false));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  return layers::Reshape(TensorShape(target), std::move(name));
}

Json WriteActivationConfig(const LayerState& layer, const std::string& name) {
  Json c = CommonConfig(name);
  c["activation"] = layer.activation.empty() ? "linear" : layer.activation;
  return c;
}

absl::StatusOr<Layer> ReadActivationConfig(const Object& config) {
  GG_ASSIGN_OR_RETURN(std::string activation, config.String("activation"));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  return layers::Activation(std::move(activation), std::move(name));
}

constexpr LayerKind kLayerKinds[] = {
    {"InputLayer", nullptr, WriteInputConfig, ReadInputConfig},
    {"Dense", "dense", WriteDenseConfig, ReadDenseConfig},
    {"Conv2D", "conv2d", WriteConv2DConfig, ReadConv2DConfig},
    {"MaxPooling2D", "max_pooling2d", WriteMaxPooling2DConfig,
     ReadMaxPooling2DConfig},
    {"Flatten", "flatten", WriteFlattenConfig, ReadFlattenConfig},
    {"Dropout", "dropout", WriteDropoutConfig, ReadDropoutConfig},
    {"BatchNormalization", "batch_normalization", WriteBatchNormalizationConfig,
     ReadBatchNormalizationConfig},
    {"Reshape", "reshape", WriteReshapeConfig, ReadReshapeConfig},
    {"Activation", "activation", WriteActivationConfig, ReadActivationConfig},
};

}  // namespace

const LayerKind* FindKind(const std::string& class_name) {
  for (const LayerKind& kind : kLayerKinds) {
    if (class_name == kind.class_name) return &kind;
  }
  return nullptr;
}

std::string KnownKinds() {
  std::string out;
  for (const LayerKind& kind : kLayerKinds) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", kind.class_name);
  }
  return out;
}

std::vector<std::string> WeightsPaths(const std::vector<Layer>& layers) {
  std::map<std::string, int> used;
  std::vector<std::string> paths;
  for (const Layer& layer : layers) {
    const LayerKind* kind = FindKind(layer.kind());
    if (kind == nullptr || kind->weights_group == nullptr) {
      paths.emplace_back();
      continue;
    }
    const int n = used[kind->weights_group]++;
    paths.push_back(n == 0
                        ? absl::StrCat("layers/", kind->weights_group)
                        : absl::StrCat("layers/", kind->weights_group, "_", n));
  }
  return paths;
}

std::vector<std::vector<int64_t>> VariableShapes(const LayerState& layer,
                                                 const TensorShape& in) {
  using Kind = LayerState::Kind;
  std::vector<std::vector<int64_t>> out;
  if (layer.kind == Kind::kDense) {
    out.push_back({in[0], layer.units});
    if (layer.dense.use_bias) out.push_back({layer.units});
  } else if (layer.kind == Kind::kConv2D && layer.window.size() == 2) {
    out.push_back({layer.window[0], layer.window[1], in[2], layer.units});
    if (layer.conv.use_bias) out.push_back({layer.units});
  } else if (layer.kind == Kind::kBatchNormalization && in.dims() > 0) {
    out.assign(4, {in[in.dims() - 1]});
  }
  return out;
}

}  // namespace models_internal
}  // namespace graphgc
