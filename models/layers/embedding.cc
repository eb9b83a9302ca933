// Embedding (Keras 3's keras.layers.Embedding): each id of the input, cast
// to int32 as Keras casts non-integer inputs, picks its row of the
// trainable [input_dim, output_dim] embeddings (GatherV2 on axis 0, whose
// gradient sums the upstream rows into the rows they came from). An id
// outside [0, input_dim) is InvalidArgument at run time naming the GatherV2
// node and the id. The embeddings start U(-0.05, 0.05), Keras's "uniform".
// mask_zero=True is refused: graphgc's layers carry no masks.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_registry.h"
#include "models/layers.h"
#include "models/training.h"
#include "ops/gather_ops.h"
#include "ops/ops.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {
namespace {

// Keras's "uniform" initializer: RandomUniform(-0.05, 0.05).
constexpr float kUniformLimit = 0.05f;

struct EmbeddingConfig : LayerConfig {
  int64_t input_dim = 0;
  int64_t output_dim = 0;
  float minval = -kUniformLimit;
  float maxval = kUniformLimit;
  EmbeddingOptions options;
};

const EmbeddingConfig& Config(const LayerState& layer) {
  return ConfigOf<EmbeddingConfig>(layer);
}

Json WriteEmbeddingConfig(const LayerState& layer, const std::string& name) {
  const EmbeddingConfig& e = Config(layer);
  Json c = CommonConfig(name);
  c["input_dim"] = e.input_dim;
  c["output_dim"] = e.output_dim;
  c["embeddings_initializer"] =
      KerasObject("keras.initializers", "RandomUniform",
                  {{"minval", FloatJson(e.minval)},
                   {"maxval", FloatJson(e.maxval)},
                   {"seed", nullptr}});
  c["embeddings_regularizer"] = nullptr;
  c["activity_regularizer"] = nullptr;
  c["embeddings_constraint"] = nullptr;
  c["mask_zero"] = e.options.mask_zero;
  return c;
}

// The initializer field: "uniform" (or "random_uniform"), or Keras's
// RandomUniform object; `minval` and `maxval` get its bounds.
absl::Status ReadInitializer(const ConfigObject& config, float& minval,
                             float& maxval, std::string& name) {
  const Json* init = config.Find("embeddings_initializer");
  if (init == nullptr || init->is_null()) return absl::OkStatus();
  if (init->is_string()) {
    name = init->get<std::string>();
    return absl::OkStatus();
  }
  const char* want = "\"uniform\" or a RandomUniform initializer object";
  if (!init->is_object() || !init->contains("class_name") ||
      (*init)["class_name"] != "RandomUniform") {
    return config.WrongType("embeddings_initializer", want, *init);
  }
  Json inner = init->contains("config") && (*init)["config"].is_object()
                   ? (*init)["config"]
                   : Json::object();
  ConfigObject object(inner, config.where() + ": embeddings_initializer");
  GG_ASSIGN_OR_RETURN(minval, object.Float("minval", -kUniformLimit));
  GG_ASSIGN_OR_RETURN(maxval, object.Float("maxval", kUniformLimit));
  return absl::OkStatus();
}

const LayerKind& EmbeddingKind();

Layer MakeEmbedding(int64_t input_dim, int64_t output_dim, float minval,
                    float maxval, EmbeddingOptions options) {
  auto config = std::make_unique<EmbeddingConfig>();
  EmbeddingConfig& c = *config;
  c.input_dim = input_dim;
  c.output_dim = output_dim;
  c.minval = minval;
  c.maxval = maxval;
  c.options = std::move(options);
  auto state =
      NewLayerState(EmbeddingKind(), c.options.name, std::move(config));
  const std::string label = LayerLabel(*state);
  absl::Status s;
  if (input_dim < 1) {
    s = absl::InvalidArgumentError(
        absl::StrCat(label, ": input_dim must be >= 1, got ", input_dim));
  } else if (output_dim < 1) {
    s = absl::InvalidArgumentError(
        absl::StrCat(label, ": output_dim must be >= 1, got ", output_dim));
  } else if (c.options.embeddings_initializer != "uniform" &&
             c.options.embeddings_initializer != "random_uniform") {
    s = absl::InvalidArgumentError(absl::StrCat(
        label, ": embeddings_initializer '", c.options.embeddings_initializer,
        "' is not implemented (use \"uniform\")"));
  } else if (!(minval < maxval)) {
    s = absl::InvalidArgumentError(
        absl::StrCat(label,
                     ": embeddings_initializer needs minval < maxval, "
                     "got minval=",
                     minval, ", maxval=", maxval));
  } else if (c.options.mask_zero) {
    s = absl::UnimplementedError(absl::StrCat(
        label,
        ": mask_zero=True is not implemented: graphgc's layers carry no "
        "masks (use mask_zero=False)"));
  }
  state->error = s;
  return MakeLayer(std::move(state));
}

absl::StatusOr<Layer> ReadEmbeddingConfig(const ConfigObject& config) {
  GG_ASSIGN_OR_RETURN(const int64_t input_dim, config.Int("input_dim"));
  GG_ASSIGN_OR_RETURN(const int64_t output_dim, config.Int("output_dim"));
  GG_ASSIGN_OR_RETURN(const bool mask_zero, config.Bool("mask_zero", false));
  GG_ASSIGN_OR_RETURN(std::string name, config.String("name", ""));
  GG_ASSIGN_OR_RETURN(const uint64_t seed, config.Seed("seed"));
  float minval = -kUniformLimit, maxval = kUniformLimit;
  std::string init = "uniform";
  GG_RETURN_IF_ERROR(ReadInitializer(config, minval, maxval, init));
  for (const char* k : {"embeddings_regularizer", "activity_regularizer",
                        "embeddings_constraint", "lora_rank"}) {
    GG_RETURN_IF_ERROR(config.Only(k, nullptr));
  }
  return MakeEmbedding(input_dim, output_dim, minval, maxval,
                       {.embeddings_initializer = std::move(init),
                        .mask_zero = mask_zero,
                        .name = std::move(name),
                        .seed = seed});
}

// Keras: (*input_shape, output_dim), for any input shape.
absl::StatusOr<TensorShape> EmbeddingOutputShape(const LayerState& layer,
                                                 const TensorShape& in) {
  std::vector<int64_t> out(in.dim_sizes().begin(), in.dim_sizes().end());
  out.push_back(Config(layer).output_dim);
  if (absl::Status s = TensorShape::Validate(out, true); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        LayerLabel(layer), ": output ", KerasShape(TensorShape(out)),
        " is too large: ", s.message()));
  }
  return TensorShape(out);
}

std::vector<WeightSpec> EmbeddingWeights(const LayerState& layer,
                                         const TensorShape&) {
  const EmbeddingConfig& c = Config(layer);
  return {{.name = "embeddings",
           .shape = {c.input_dim, c.output_dim},
           .init = Initializer::kRandomUniform,
           .seed = c.options.seed,
           .minval = c.minval,
           .maxval = c.maxval}};
}

absl::Status CheckEmbeddingWeights(const LayerState& layer,
                                   const TensorShape&) {
  const EmbeddingConfig& c = Config(layer);
  return CheckFits(DT_FLOAT, {c.input_dim, c.output_dim}, 1,
                   absl::StrCat(LayerLabel(layer), " of ", c.input_dim, " x ",
                                c.output_dim, ", its embeddings"));
}

absl::StatusOr<LayerOutputs> ApplyEmbedding(const LayerState&,
                                            const BuiltLayer& built,
                                            const Output& x, bool) {
  const std::string& scope = built.name();
  Output ids = x;
  if (x.dtype() != DT_INT32 && x.dtype() != DT_INT64) {
    GG_ASSIGN_OR_RETURN(ids, ops::Cast(x, DT_INT32, {.name = scope + "/Cast"}));
  }
  GG_ASSIGN_OR_RETURN(Output y, ops::GatherV2(built.variables[0].read, ids, 0,
                                              {.name = scope + "/GatherV2"}));
  return LayerOutputs{.pre_activation = y, .output = y};
}

const LayerKind& EmbeddingKind() {
  static const LayerKind* kind = new LayerKind{
      .class_name = "Embedding",
      .default_name = "embedding",
      .order = 10,
      .weights_group = "embedding",
      .fields = {{"input_dim", "int", ""},
                 {"output_dim", "int", ""},
                 {"embeddings_initializer", "str", "\"uniform\""},
                 {"mask_zero", "bool", "false"},
                 {"name", "name", "null"},
                 {"seed", "seed", "null"}},
      .write_config = WriteEmbeddingConfig,
      .read_config = ReadEmbeddingConfig,
      .output_shape = EmbeddingOutputShape,
      .weights = EmbeddingWeights,
      .check_weights = CheckEmbeddingWeights,
      .apply = ApplyEmbedding,
  };
  return *kind;
}

}  // namespace

GG_REGISTER_LAYER_KIND(EmbeddingKind);
}  // namespace models_internal

namespace layers {

Layer Embedding(int64_t input_dim, int64_t output_dim,
                EmbeddingOptions options) {
  return models_internal::MakeEmbedding(
      input_dim, output_dim, -models_internal::kUniformLimit,
      models_internal::kUniformLimit, std::move(options));
}

}  // namespace layers
}  // namespace graphgc
