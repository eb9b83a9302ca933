// models/saving_types.h
//
// The value types of models/saving.h: LoadOptions, Signature and
// SignatureTensor (signature.json), ModelConfigSummary (config.json). Below
// saving.h's codecs (models/signature.h, models/model_config.h,
// models/load_budget.h), which fill them without including the
// orchestration above them. Include models/saving.h to use them.
#ifndef GRAPHGC_MODELS_SAVING_TYPES_H_
#define GRAPHGC_MODELS_SAVING_TYPES_H_

#include <cstdint>
#include <string>

#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace graphgc {

// LoadOptions::max_bytes's default: a model of up to 512 MiB of weights
// (128M float32 parameters) saved without optimizer state loads.
inline constexpr int64_t kDefaultLoadBudget = int64_t{2} << 30;

struct LoadOptions {
  Graph* graph = nullptr;  // nullptr: Graph::Default()
  bool compile = true;     // compile with the saved settings, if any
  // The memory a load may take, in bytes (see above); <= 0: no budget of
  // its own (each tensor is still bounded by MaxTensorBytes()).
  int64_t max_bytes = kDefaultLoadBudget;
};

// One tensor of model.pb's signature.
struct SignatureTensor {
  std::string name;  // "input:0"
  DataType dtype = DT_FLOAT;
  TensorShape shape;  // -1 for an unknown dimension
};

// What signature.json says: the frozen graph's input and output.
struct Signature {
  SignatureTensor input;   // inputs.x
  SignatureTensor output;  // outputs.predictions
};

// What a config.json declares, checked as LoadModel checks it before
// building anything.
struct ModelConfigSummary {
  std::string name;        // the model's name ("" when absent)
  int64_t num_layers = 0;  // InputLayer included
  // The float32 weights the layers declare, in bytes (of the layers whose
  // shapes are valid: Sequential::Create refuses the rest).
  int64_t weights_bytes = 0;
  // The least memory LoadModel needs for them: 4 x weights_bytes (see
  // above).
  int64_t load_bytes = 0;
  // The largest model.weights.h5 LoadModel reads for this config.
  int64_t max_weights_file_bytes = 0;
};

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_SAVING_TYPES_H_
