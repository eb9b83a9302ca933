// serialize/hdf5_image_driver.h
//
// A read-only HDF5 virtual file driver over a file image in memory, for
// decoding untrusted weights files (serialize/keras_weights.h). HDF5's own
// core driver copies the image and declares the metadata accumulator, whose
// bookkeeping trusts addresses read from the file: with a corrupt image
// HDF5 1.10.8 reads at its "undefined" address (all ones) and copies into a
// NULL buffer. This driver instead:
//   - reads the caller's bytes in place (no copy);
//   - declares no feature (no metadata accumulator, no sieve buffer), so
//     every read HDF5 makes reaches its read callback as asked;
//   - refuses, with an HDF5 error (never a crash), any read that does not
//     lie inside [0, image size): HADDR_UNDEF, an address past the end, a
//     size that runs past it or wraps around;
//   - refuses any write, any open that is not read-only, and an open
//     without an image (an external link's target reached through a copy
//     of the access properties opens nothing);
//   - refuses a local heap ("HEAP") whose data segment declares more bytes
//     than the image holds, and a version-1 object header with a
//     continuation chunk (its own or one reachable from it) that does: HDF5
//     allocates both at their declared size before reading them, so they
//     are refused when the heap's or object's header is read, before that
//     allocation;
//   - refuses an image whose superblock declares lengths or addresses of
//     other than 2, 4 or 8 bytes (what h5py writes is 8; HDF5 1.10 cannot
//     decode wider lengths).
//
// Every function here calls HDF5: the caller holds Hdf5Mutex()
// (serialize/hdf5_handles.h), as for any HDF5 call of the process.
//
// Example (under Hdf5Mutex()):
//   hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
//   GG_RETURN_IF_ERROR(SetHdf5ImageDriver(fapl, bytes));
//   hid_t file = H5Fopen("image", H5F_ACC_RDONLY, fapl);  // name unused
#ifndef GRAPHGC_SERIALIZE_HDF5_IMAGE_DRIVER_H_
#define GRAPHGC_SERIALIZE_HDF5_IMAGE_DRIVER_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "hdf5.h"

namespace graphgc {

// The driver's HDF5 identifier, registered on the first call (negative if
// HDF5 refused to register it). Caller holds Hdf5Mutex().
hid_t Hdf5ImageDriver();

// Sets the file access property list `fapl` to open `image` through the
// driver. `image` is read in place: it must outlive every file opened with
// `fapl` (or a copy of it). Internal when HDF5 refuses. Caller holds
// Hdf5Mutex().
absl::Status SetHdf5ImageDriver(hid_t fapl, absl::string_view image);

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_HDF5_IMAGE_DRIVER_H_
