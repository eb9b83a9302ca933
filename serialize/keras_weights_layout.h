// serialize/keras_weights_layout.h
//
// ListKerasWeightsLayers: which per-layer groups a Keras 3 `model.weights.h5`
// holds under "layers" ("dense", "dense_1", "flatten", ...), so a loader can
// refuse a file with layers its config does not have. DecodeKerasWeights
// (serialize/keras_weights.h) reads only the groups it is asked for.
//
// Like DecodeKerasWeights it works on the file's bytes in memory (read in
// place by serialize/hdf5_image_driver.h), follows no link (a "layers" that is
// a soft or external link is refused) and reads no dataset.
//
// Thread safety: may be called from any thread; its HDF5 calls are made
// under Hdf5Mutex().
//
// Example:
//   GG_ASSIGN_OR_RETURN(KerasWeightsLayers found,
//                       ListKerasWeightsLayers(bytes, 3, "m.weights.h5"));
#ifndef GRAPHGC_SERIALIZE_KERAS_WEIGHTS_LAYOUT_H_
#define GRAPHGC_SERIALIZE_KERAS_WEIGHTS_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "util/mutex.h"

namespace graphgc {

// The process-wide lock every HDF5 call is made under: Debian's HDF5 is the
// serial build, whose library state is unguarded.
Mutex& Hdf5Mutex();

struct KerasWeightsLayers {
  // How many links "layers" holds (0 when the file has no "layers").
  uint64_t count = 0;
  // The first `max_names` of their names, in HDF5's name order.
  std::vector<std::string> names;
};

// The groups under "layers" in the HDF5 file image `bytes` (the contents of
// `file`, named in every status). DataLoss "<file>: not a valid HDF5 file
// (...)" for bytes HDF5 cannot open or list; InvalidArgument when "layers"
// is not a hard link to a group.
absl::StatusOr<KerasWeightsLayers> ListKerasWeightsLayers(
    absl::string_view bytes, uint64_t max_names, const std::string& file);

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_KERAS_WEIGHTS_LAYOUT_H_
