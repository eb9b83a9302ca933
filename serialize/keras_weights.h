// serialize/keras_weights.h
//
// EncodeKerasWeights and DecodeKerasWeights: a model's weights as the bytes
// of an HDF5 file in Keras 3's `model.weights.h5` layout, and back. What
// h5py and Keras's `load_weights` read:
//
//   /vars                      an empty group (the model's own variables)
//   /layers/dense/vars/0       float32 dataset: the first layer's kernel
//   /layers/dense/vars/1       its bias
//   /layers/dense_1/vars/0     the next Dense layer's kernel ...
//   /optimizer/vars/0          a compiled model's optimizer state
//                              (models/optimizer_state.h), int64 first
//
// Each layer's group is named as Keras 3 names it (saving_lib's
// _save_container_state): the snake-case class name, uniqued within the
// model in layer order ("dense", "dense_1", "conv2d", ...), not the layer's
// own name; its variables are datasets "0", "1", ... in the layer's order
// (trainable, then non-trainable). The caller chooses the paths (see
// models/saving.cc); this file only stores tensors under them.
//
// Both work on bytes in memory: the caller reads and writes the file
// itself, through util/file.h, so no file is opened by HDF5 and a FIFO or a
// directory never reaches it. Encoding uses HDF5's core driver; decoding
// reads the bytes in place through a read-only driver that refuses any read
// outside them (serialize/hdf5_image_driver.h), so a corrupt address or
// size in the metadata is an error, never a read elsewhere.
//
// Debian's HDF5 is the serial build, which is not thread-safe: every HDF5
// call of graphgc is made under one process-wide lock, held from opening an
// image to closing it. HDF5's automatic printing of its error stack to
// stderr is turned off; its errors become statuses (with HDF5's innermost
// message) naming `file` and the object.
//
// Thread safety: both may be called from any thread (they serialise on the
// lock).
//
// Example:
//   GG_ASSIGN_OR_RETURN(std::string bytes, EncodeKerasWeights(
//       {{.path = "layers/dense", .values = {kernel, bias}}}));
//   GG_ASSIGN_OR_RETURN(auto values, DecodeKerasWeights(bytes,
//       {{.path = "layers/dense", .shapes = {{10, 64}, {64}}}}, "m.h5"));
#ifndef GRAPHGC_SERIALIZE_KERAS_WEIGHTS_H_
#define GRAPHGC_SERIALIZE_KERAS_WEIGHTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/tensor.h"

namespace graphgc {

// One layer's variables, stored as datasets "<path>/vars/0", "/1", ...
struct LayerWeights {
  std::string path;            // "layers/dense", or Keras's "optimizer"
  std::vector<Tensor> values;  // float32 (or int64) tensors, in order
};

// The bytes of an HDF5 file holding every layer's weights (plus Keras's
// empty root "vars" group). A layer with no values gets an empty
// "<path>/vars" group, as Keras writes for Flatten. float32 tensors are
// stored as IEEE float32, int64 ones (an optimizer's iteration count) as
// little-endian int64. InvalidArgument for a tensor of another dtype or an
// empty or duplicate path; Internal for an HDF5 failure.
absl::StatusOr<std::string> EncodeKerasWeights(
    const std::vector<LayerWeights>& layers);

// What a layer's weights must be: their count and shapes.
struct LayerWeightsSpec {
  std::string path;
  std::vector<TensorShape> shapes;
  // Each weight's dtype: DT_FLOAT (the default, and for weights past the
  // end) or DT_INT64, read from a 32- or 64-bit integer dataset (Keras
  // writes an optimizer's iteration count as int64, or int32 on JAX).
  std::vector<DataType> dtypes;
};

// HDF5 memory DecodeKerasWeights allows beyond the image and the weights:
// its metadata cache, a chunk cache, a type-conversion buffer.
inline constexpr uint64_t kKerasWeightsHdf5WorkingBytes = uint64_t{64} << 20;

// The memory budget of decoding an image of `image_bytes` (read in place,
// not copied): the image's size for HDF5's copies of metadata blocks read
// from it, the decoded float32 weights (at most the image's size, since
// every weight is stored in 4 or 8 bytes of it), and
// kKerasWeightsHdf5WorkingBytes.
uint64_t KerasWeightsDecodeBudget(uint64_t image_bytes);

// The per-layer groups under "layers" of a weights file ("dense",
// "dense_1", "flatten", ...), as DecodeKerasWeights found them.
struct KerasWeightsLayers {
  // How many links "layers" holds (0 when the file has no "layers").
  uint64_t count = 0;
  // The first `max_layer_names` of their names, in HDF5's name order.
  std::vector<std::string> names;
};

struct KerasWeightsDecodeOptions {
  // When set, DecodeKerasWeights lists the groups under "layers" once the
  // image is open, before it reads any weight, and returns what this
  // returns when it is not OK: a loader refuses there a file with layers
  // its config does not have, without opening the image a second time.
  // Called under the HDF5 lock: it must not call HDF5 or this file.
  std::function<absl::Status(const KerasWeightsLayers&)> check_layers;
  // How many names the listing keeps (its count is always the whole).
  uint64_t max_layer_names = 0;
};

// Reads the weights `specs` describe from the HDF5 file image `bytes` (the
// contents of `file`, named in every status). All or nothing; each check is
// made before anything is allocated for the data:
//   - ResourceExhausted naming the budget when the specs' weights need
//     more bytes than the image holds (they cannot all be stored there),
//     when a dataset's chunks are larger than the dataset (or 1 MiB), or
//     when memory runs out (std::bad_alloc is caught);
//   - DataLoss "<file>: not a valid HDF5 file (...)" for bytes HDF5 cannot
//     open (truncated, corrupt, not HDF5) or, with
//     options.check_layers, whose "layers" it cannot list;
//   - with options.check_layers: InvalidArgument when "layers" is not a
//     hard link to a group, then what check_layers returns;
//   - InvalidArgument naming the object for anything reached through a
//     link that is not a hard link (soft, external to another file,
//     user-defined), a dataset whose data is outside the image (external
//     raw storage, a virtual dataset), or that uses a filter other than
//     shuffle or Fletcher-32 (compression: EncodeKerasWeights and Keras
//     write none);
//   - InvalidArgument naming the dataset for a missing group or dataset, a
//     count of datasets in "<path>/vars" other than the spec's, a dataset
//     that is not float32 or float64 (for a DT_INT64 spec: not a 32- or
//     64-bit integer), or whose shape differs from the spec's;
//   - DataLoss naming the dataset when its stored size disagrees with its
//     shape (data never written, a size corrupted in the metadata, missing
//     chunks) or its data cannot be read.
// No file other than the image is opened. HDF5 raw data carries no
// checksum (as in Keras): a flipped bit in a weight's value loads as it is;
// Fletcher-32 checksums, when a file has them, are verified.
// A layer whose spec has no shapes may have no group at all. Floating-point
// datasets of another width (float64) are converted to float32, as h5py
// would. Groups and datasets no spec names (Keras's optimizer state) are
// ignored.
absl::StatusOr<std::vector<std::vector<Tensor>>> DecodeKerasWeights(
    absl::string_view bytes, const std::vector<LayerWeightsSpec>& specs,
    const std::string& file, const KerasWeightsDecodeOptions& options = {});

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_KERAS_WEIGHTS_H_
