// Corrupt weights images that crashed HDF5 1.10.8 (found by
// keras_weights_fuzzer, or made by hand; kept in
// tests/fuzz/corpus/keras_weights/): DecodeKerasWeights refuses each with a
// status naming the file, with or without listing the layer groups.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "serialize/keras_weights.h"

// Debian's HDF5 1.10.8 leaks a few hundred bytes on some error paths of a
// corrupt image (inside libhdf5, nothing graphgc holds): LeakSanitizer
// leaves those to HDF5 and still checks everything else.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libhdf5_serial.so\n";
}

namespace graphgc {
namespace {

// A fuzz input of tests/fuzz/corpus/keras_weights/ (a runfile).
std::string Finding(const std::string& name) {
  std::ifstream in("tests/fuzz/corpus/keras_weights/" + name, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The fuzzer's model (KerasWeightsFuzzSpecs in tests/fuzz/fuzz_util.h).
std::vector<LayerWeightsSpec> FuzzSpecs() {
  return {{.path = "layers/dense", .shapes = {{3, 2}, {2}}},
          {.path = "layers/flatten", .shapes = {}},
          {.path = "layers/dense_1", .shapes = {{2, 1}}}};
}

// Whether `status` is a refusal of "w.h5" with `code` (DataLoss unless
// said) whose message says `detail`.
::testing::AssertionResult RefusedWith(
    const absl::Status& status, const std::string& detail,
    absl::StatusCode code = absl::StatusCode::kDataLoss) {
  if (status.code() == code && absl::StartsWith(status.message(), "w.h5: ") &&
      absl::StrContains(status.message(), detail)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << status << " is not a " << absl::StatusCodeToString(code)
         << " of w.h5 saying '" << detail << "'";
}

// A group's symbol table names its local heap at HDF5's undefined address
// (all ones): HDF5's metadata accumulator copied into a NULL buffer.
TEST(KerasWeightsCorrupt, ALocalHeapAtTheUndefinedAddressIsRefused) {
  const std::string bytes = Finding("local_heap_address_undefined");
  ASSERT_FALSE(bytes.empty());
  EXPECT_TRUE(
      RefusedWith(DecodeKerasWeights(bytes, FuzzSpecs(), "w.h5").status(),
                  "read of 512 bytes at an undefined address"));
}

// A local heap declares a data segment of about 2^59 bytes, which HDF5
// allocates before reading it.
TEST(KerasWeightsCorrupt, ALocalHeapLargerThanTheFileIsRefusedUnallocated) {
  const std::string bytes = Finding("local_heap_size_2e59");
  ASSERT_FALSE(bytes.empty());
  EXPECT_TRUE(
      RefusedWith(DecodeKerasWeights(bytes, FuzzSpecs(), "w.h5").status(),
                  "more than the file's"));
}

// A dataset's object header continues in a chunk of 2^59 bytes (made by
// hand from a seed), which HDF5 allocates before reading it. The dataset
// cannot be opened: InvalidArgument, as for any unreadable dataset.
TEST(KerasWeightsCorrupt, AnObjectHeaderChunkLargerThanTheFileIsRefused) {
  const std::string bytes = Finding("object_header_continuation_2e59");
  ASSERT_FALSE(bytes.empty());
  EXPECT_TRUE(
      RefusedWith(DecodeKerasWeights(bytes, FuzzSpecs(), "w.h5").status(),
                  "continues in a chunk of 576460752303423488 bytes",
                  absl::StatusCode::kInvalidArgument));
}

// LoadModel has the layer groups listed before any weight is read: the
// same heap is reached through the listing, and the check never runs.
TEST(KerasWeightsCorrupt, ListingRefusesALocalHeapAtTheUndefinedAddress) {
  const std::string bytes = Finding("local_heap_address_undefined");
  ASSERT_FALSE(bytes.empty());
  bool checked = false;
  const KerasWeightsDecodeOptions list = {.check_layers =
                                              [&](const KerasWeightsLayers&) {
                                                checked = true;
                                                return absl::OkStatus();
                                              },
                                          .max_layer_names = 8};
  EXPECT_TRUE(
      RefusedWith(DecodeKerasWeights(bytes, FuzzSpecs(), "w.h5", list).status(),
                  "read of 512 bytes at an undefined address"));
  EXPECT_FALSE(checked);
}

}  // namespace
}  // namespace graphgc
