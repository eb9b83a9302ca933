// tests/fuzz/model_config_fuzzer.cc
//
// libFuzzer target for the readers of a model directory's JSON files
// (models/saving.h): every input is given, as text, both to
// ParseModelConfig (config.json, Sequential or Functional: a Functional's
// graph of inbound nodes is read and resolved, models/functional_config.h)
// and to ParseSignature (signature.json).
// Invariants: nothing crashes, aborts or allocates past libFuzzer's limits
// (statuses are fine); a config that parses describes a model within the
// budget it was parsed under: load_bytes = 4 x weights_bytes <= the budget,
// and a weights-file bound between the weights and what the budget leaves;
// a signature that parses has valid shapes (no count that overflows).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "models/saving.h"
#include "runtime/tensor.h"

namespace {

// Small, so the fuzzer reaches the budget checks from both sides.
constexpr int64_t kBudget = int64_t{64} << 20;

void Fail(const char* what) {
  std::fprintf(stderr, "model_config_fuzzer: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<graphgc::ModelConfigSummary> config =
      graphgc::ParseModelConfig(text, "config.json", kBudget);
  if (config.ok()) {
    const graphgc::ModelConfigSummary& c = *config;
    if (c.weights_bytes < 0 || c.load_bytes != 4 * c.weights_bytes ||
        c.load_bytes > kBudget) {
      Fail("a parsed config's weights are over the budget");
    }
    if (c.max_weights_file_bytes < c.weights_bytes ||
        c.max_weights_file_bytes > (kBudget - 2 * c.weights_bytes) / 2) {
      Fail("a parsed config's weights-file bound is outside the budget");
    }
    if (c.num_layers < 0) Fail("a negative layer count");
  }
  const absl::StatusOr<graphgc::Signature> signature =
      graphgc::ParseSignature(text, "signature.json");
  if (signature.ok()) {
    for (const graphgc::TensorShape* shape :
         {&signature->input.shape, &signature->output.shape}) {
      if (!graphgc::TensorShape::Validate(shape->dim_sizes(), true).ok()) {
        Fail("a parsed signature has an invalid shape");
      }
    }
  }
  return 0;
}
