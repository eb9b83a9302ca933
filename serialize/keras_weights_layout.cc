#include "serialize/keras_weights_layout.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "hdf5.h"
#include "serialize/hdf5_handles.h"
#include "serialize/hdf5_image_driver.h"

namespace graphgc {
namespace {

struct ListState {
  uint64_t max_names;
  std::vector<std::string>* names;
};

}  // namespace

Mutex& Hdf5Mutex() {
  static Mutex* mu = new Mutex;
  return *mu;
}

absl::StatusOr<KerasWeightsLayers> ListKerasWeightsLayers(
    absl::string_view bytes, uint64_t max_names, const std::string& file) {
  if (bytes.empty()) {
    return absl::DataLossError(
        absl::StrCat(file, ": not a valid HDF5 file (it is empty)"));
  }
  WriterLock lock(Hdf5Mutex());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  H5Eclear2(H5E_DEFAULT);
  auto not_hdf5 = [&] {
    return absl::DataLossError(absl::StrCat(
        file, ": not a valid HDF5 file (truncated or corrupt: ", Hdf5Message(),
        ")"));
  };
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // HDF5 reads the image in place through our read-only driver, which
  // refuses any read outside it (serialize/hdf5_image_driver.h).
  if (fapl.get() < 0 || !SetHdf5ImageDriver(fapl.get(), bytes).ok()) {
    return absl::InternalError(absl::StrCat(
        file, ": cannot set up HDF5 file access: ", Hdf5Message()));
  }
  // The driver opens no file: the name only appears in HDF5's messages.
  Hid h5(H5Fopen("graphgc-weights-image", H5F_ACC_RDONLY, fapl.get()),
         H5Fclose);
  if (h5.get() < 0) return not_hdf5();
  KerasWeightsLayers out;
  const htri_t exists = H5Lexists(h5.get(), "layers", H5P_DEFAULT);
  if (exists < 0) return not_hdf5();
  if (exists == 0) return out;
  H5L_info_t link;
  if (H5Lget_info(h5.get(), "layers", &link, H5P_DEFAULT) < 0) {
    return not_hdf5();
  }
  if (link.type != H5L_TYPE_HARD) {
    return absl::InvalidArgumentError(
        absl::StrCat(file,
                     ": 'layers' is a soft or external link, not a "
                     "group of the file"));
  }
  Hid group(H5Gopen2(h5.get(), "layers", H5P_DEFAULT), H5Gclose);
  if (group.get() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": 'layers' is not a group: ", Hdf5Message()));
  }
  H5G_info_t info;
  if (H5Gget_info(group.get(), &info) < 0) return not_hdf5();
  out.count = info.nlinks;
  ListState state{max_names, &out.names};
  hsize_t index = 0;
  const herr_t walked = H5Literate(
      group.get(), H5_INDEX_NAME, H5_ITER_INC, &index,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        auto* s = static_cast<ListState*>(data);
        if (s->names->size() >= s->max_names) return 1;  // enough: stop
        s->names->emplace_back(name);
        return 0;
      },
      &state);
  if (walked < 0) return not_hdf5();
  return out;
}

}  // namespace graphgc
