// tests/fuzz/keras_weights_fuzzer.cc
//
// libFuzzer target for DecodeKerasWeights: the input is the HDF5 image of a
// model.weights.h5, decoded for a small model (KerasWeightsFuzzSpecs():
// "layers/dense" [3,2] and [2], "layers/flatten" with no weights,
// "layers/dense_1" [2,1]), as LoadModel would: the layer groups listed
// first (at most 4 names kept) and checked. Seeds are files of that
// model written by EncodeKerasWeights and by HDF5 itself (chunked with
// shuffle and Fletcher-32, float64, compact), see make_seed_corpus.cc.
// Checked: nothing crashes; a refusal names the file; on success every
// layer has exactly its spec's count of tensors, each of exactly the
// spec's shape, every byte of which is read; the listing keeps at most the
// names asked for. Run with -malloc_limit_mb so
// that an allocation past the decoder's budget is a finding.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "runtime/tensor.h"
#include "serialize/keras_weights.h"
#include "tests/fuzz/fuzz_util.h"

// Debian's HDF5 1.10.8 leaks a few hundred bytes on some error paths of a
// corrupt image (inside libhdf5, nothing graphgc holds): LeakSanitizer
// leaves those to HDF5 and still checks everything else.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libhdf5_serial.so\n";
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The decoder's own tensors are a few floats; anything large is a bug.
  graphgc::SetMaxTensorBytes(int64_t{64} << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<graphgc::LayerWeightsSpec> specs =
      graphgc::fuzz::KerasWeightsFuzzSpecs();
  auto values = graphgc::DecodeKerasWeights(
      absl::string_view(reinterpret_cast<const char*>(data), size), specs,
      "fuzz.h5",
      {.check_layers =
           [](const graphgc::KerasWeightsLayers& layers) {
             if (layers.names.size() > 4 ||
                 layers.names.size() > layers.count) {
               std::abort();
             }
             return absl::OkStatus();
           },
       .max_layer_names = 4});
  if (!values.ok()) {
    if (!absl::StartsWith(values.status().message(), "fuzz.h5: ")) {
      std::abort();  // every refusal names the file
    }
    return 0;
  }
  if (values->size() != specs.size()) std::abort();
  for (size_t l = 0; l < specs.size(); ++l) {
    if ((*values)[l].size() != specs[l].shapes.size()) std::abort();
    for (size_t i = 0; i < specs[l].shapes.size(); ++i) {
      const graphgc::Tensor& t = (*values)[l][i];
      if (t.dtype() != graphgc::DT_FLOAT || t.shape() != specs[l].shapes[i] ||
          graphgc::fuzz::ReadEveryByte(t) != nullptr) {
        std::abort();
      }
    }
  }
  return 0;
}
