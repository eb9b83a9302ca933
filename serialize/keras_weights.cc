#include "serialize/keras_weights.h"

#include <atomic>
#include <cstdint>
#include <limits>
#include <set>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "hdf5.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// Every HDF5 call of the process is made under this lock: Debian's HDF5 is
// the serial build (no H5_HAVE_THREADSAFE), whose library state (open
// files, free lists, the error stack, the identifier table) is unguarded.
// A Mutex (annotated for ThreadSanitizer, util/mutex.h) so TSan sees it;
// HDF5 itself is not instrumented, and is only ever entered under it.
Mutex hdf5_mu;

// A name for in-memory files that cannot exist on disk: HDF5's core driver
// opening a file image first checks that no file of that name exists (and
// would wait on a FIFO of that name), and nothing can be created in
// /proc/self. The counter keeps two images of one process distinct.
std::string ImageName() {
  static std::atomic<int64_t> next{0};
  return absl::StrCat("/proc/self/graphgc-hdf5-image-", next++);
}

// The innermost message of HDF5's error stack ("truncated file: eof =
// ..."), then clears the stack.
std::string Hdf5Message() ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  std::string message;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* err, void* data) -> herr_t {
        if (err->desc != nullptr && err->desc[0] != '\0') {
          *static_cast<std::string*>(data) = err->desc;
        }
        return 0;
      },
      &message);
  H5Eclear2(H5E_DEFAULT);
  return message.empty() ? std::string("no detail from HDF5") : message;
}

// Turns off HDF5's printing of its error stack to stderr (the statuses say
// what went wrong) and clears what an earlier call left.
void QuietErrors() ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  H5Eclear2(H5E_DEFAULT);
}

// An HDF5 identifier, closed with its own close function when dropped.
// Lives only inside a scope that holds hdf5_mu.
class Hid {
 public:
  Hid(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  ~Hid() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// ---------------------------------------------------------------------------
// Encode

absl::Status EncodeError(const std::string& what)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  return absl::InternalError(
      absl::StrCat("EncodeKerasWeights: ", what, ": ", Hdf5Message()));
}

absl::Status WriteDataset(hid_t group, const std::string& name,
                          const Tensor& value, const std::string& where)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  const absl::Span<const int64_t> dims = value.shape().dim_sizes();
  std::vector<hsize_t> hdims(dims.begin(), dims.end());
  Hid space(dims.empty() ? H5Screate(H5S_SCALAR)
                         : H5Screate_simple(static_cast<int>(hdims.size()),
                                            hdims.data(), nullptr),
            H5Sclose);
  if (!space.ok()) return EncodeError(absl::StrCat(where, ": dataspace"));
  // No modification time in the dataset's header (HDF5 writes one by
  // default): the same weights give the same bytes whenever they are saved.
  Hid dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!dcpl.ok() || H5Pset_obj_track_times(dcpl.get(), 0) < 0) {
    return EncodeError(absl::StrCat(where, ": creation properties"));
  }
  Hid ds(H5Dcreate2(group, name.c_str(), H5T_IEEE_F32LE, space.get(),
                    H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
         H5Dclose);
  if (!ds.ok()) return EncodeError(absl::StrCat(where, ": create"));
  if (value.num_elements() > 0 &&
      H5Dwrite(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
               value.data<float>().data()) < 0) {
    return EncodeError(absl::StrCat(where, ": write"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Decode

// Whether `path` (relative to `loc`) names a link; each component is checked
// in turn, since H5Lexists fails on a path whose parent is missing.
absl::StatusOr<bool> LinkExists(hid_t loc, const std::string& path,
                                const std::string& file)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  size_t end = 0;
  while (end != std::string::npos) {
    end = path.find('/', end + 1);
    const std::string prefix = path.substr(0, end);
    const htri_t exists = H5Lexists(loc, prefix.c_str(), H5P_DEFAULT);
    if (exists < 0) {
      return absl::DataLossError(absl::StrCat(file, ": cannot look up '",
                                              prefix, "': ", Hdf5Message()));
    }
    if (exists == 0) return false;
  }
  return true;
}

absl::StatusOr<Tensor> ReadDataset(hid_t group, const std::string& name,
                                   const TensorShape& want,
                                   const std::string& where)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  Hid ds(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not a readable dataset: ", Hdf5Message()));
  }
  Hid type(H5Dget_type(ds.get()), H5Tclose);
  if (!type.ok()) {
    return absl::DataLossError(
        absl::StrCat(where, ": unreadable type: ", Hdf5Message()));
  }
  if (H5Tget_class(type.get()) != H5T_FLOAT) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not floating point (HDF5 type class ",
                     static_cast<int>(H5Tget_class(type.get())), ")"));
  }
  Hid space(H5Dget_space(ds.get()), H5Sclose);
  if (!space.ok()) {
    return absl::DataLossError(
        absl::StrCat(where, ": unreadable dataspace: ", Hdf5Message()));
  }
  const H5S_class_t kind = H5Sget_simple_extent_type(space.get());
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if ((kind != H5S_SCALAR && kind != H5S_SIMPLE) || rank < 0 ||
      rank > H5S_MAX_RANK) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not a scalar or simple dataspace"));
  }
  std::vector<hsize_t> hdims(static_cast<size_t>(rank));
  if (rank > 0 &&
      H5Sget_simple_extent_dims(space.get(), hdims.data(), nullptr) != rank) {
    return absl::DataLossError(
        absl::StrCat(where, ": unreadable dimensions: ", Hdf5Message()));
  }
  // The shape as stored, for messages; dimensions beyond int64 are shown
  // as stored and can never match.
  bool matches = rank == want.dims();
  std::string stored = "[";
  for (int i = 0; i < rank; ++i) {
    absl::StrAppend(&stored, i > 0 ? ", " : "", hdims[i]);
    if (hdims[i] > static_cast<hsize_t>(std::numeric_limits<int64_t>::max()) ||
        (matches && static_cast<int64_t>(hdims[i]) != want[i])) {
      matches = false;
    }
  }
  stored += "]";
  if (!matches) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": has shape ", stored, " but the model needs ",
                     want.DebugString()));
  }
  // `want` is a shape of the model's own variables, already allocated once:
  // its size is known to be countable and allowed.
  GG_ASSIGN_OR_RETURN(Tensor out, Tensor::Uninitialized(DT_FLOAT, want));
  if (out.num_elements() > 0 &&
      H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
              out.mutable_data<float>().data()) < 0) {
    return absl::DataLossError(
        absl::StrCat(where, ": cannot read its data: ", Hdf5Message()));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> EncodeKerasWeights(
    const std::vector<LayerWeights>& layers) {
  std::set<std::string> paths;
  for (const LayerWeights& layer : layers) {
    if (layer.path.empty() || !paths.insert(layer.path).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "EncodeKerasWeights: empty or duplicate path '", layer.path, "'"));
    }
    for (size_t i = 0; i < layer.values.size(); ++i) {
      if (layer.values[i].dtype() != DT_FLOAT) {
        return absl::InvalidArgumentError(absl::StrCat(
            "EncodeKerasWeights: ", layer.path, "/vars/", i, " is ",
            DataTypeString(layer.values[i].dtype()), ", not float"));
      }
    }
  }
  WriterLock lock(hdf5_mu);
  QuietErrors();
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_core(fapl.get(), size_t{1} << 16,
                                     /*backing_store=*/0) < 0) {
    return EncodeError("file access properties");
  }
  Hid file(
      H5Fcreate(ImageName().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
      H5Fclose);
  if (!file.ok()) return EncodeError("create the in-memory file");
  // Parents ("layers") are created on the way.
  Hid lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  if (!lcpl.ok() || H5Pset_create_intermediate_group(lcpl.get(), 1) < 0) {
    return EncodeError("link creation properties");
  }
  {
    Hid root_vars(
        H5Gcreate2(file.get(), "vars", lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
        H5Gclose);
    if (!root_vars.ok()) return EncodeError("group 'vars'");
  }
  for (const LayerWeights& layer : layers) {
    const std::string group_path = layer.path + "/vars";
    Hid group(H5Gcreate2(file.get(), group_path.c_str(), lcpl.get(),
                         H5P_DEFAULT, H5P_DEFAULT),
              H5Gclose);
    if (!group.ok())
      return EncodeError(absl::StrCat("group '", group_path, "'"));
    for (size_t i = 0; i < layer.values.size(); ++i) {
      GG_RETURN_IF_ERROR(WriteDataset(group.get(), absl::StrCat(i),
                                      layer.values[i],
                                      absl::StrCat(group_path, "/", i)));
    }
  }
  if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) return EncodeError("flush");
  const ssize_t size = H5Fget_file_image(file.get(), nullptr, 0);
  if (size <= 0) return EncodeError("file image size");
  std::string bytes(static_cast<size_t>(size), '\0');
  if (H5Fget_file_image(file.get(), bytes.data(), bytes.size()) != size) {
    return EncodeError("file image");
  }
  return bytes;
}

absl::StatusOr<std::vector<std::vector<Tensor>>> DecodeKerasWeights(
    absl::string_view bytes, const std::vector<LayerWeightsSpec>& specs,
    const std::string& file) {
  if (bytes.empty()) {
    return absl::DataLossError(
        absl::StrCat(file, ": not a valid HDF5 file (it is empty)"));
  }
  WriterLock lock(hdf5_mu);
  QuietErrors();
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // HDF5 copies the image; it never writes to it (read-only open).
  if (!fapl.ok() ||
      H5Pset_fapl_core(fapl.get(), size_t{1} << 16, /*backing_store=*/0) < 0 ||
      H5Pset_file_image(fapl.get(), const_cast<char*>(bytes.data()),
                        bytes.size()) < 0) {
    return absl::InternalError(absl::StrCat(
        file, ": cannot set up HDF5 file access: ", Hdf5Message()));
  }
  Hid h5(H5Fopen(ImageName().c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!h5.ok()) {
    return absl::DataLossError(absl::StrCat(
        file, ": not a valid HDF5 file (truncated or corrupt: ", Hdf5Message(),
        ")"));
  }
  std::vector<std::vector<Tensor>> out;
  out.reserve(specs.size());
  for (const LayerWeightsSpec& spec : specs) {
    const std::string group_path = spec.path + "/vars";
    GG_ASSIGN_OR_RETURN(const bool exists,
                        LinkExists(h5.get(), group_path, file));
    if (!exists) {
      if (spec.shapes.empty()) {
        out.emplace_back();
        continue;
      }
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": no group '", group_path, "' (the model has ",
                       spec.shapes.size(), " weights there)"));
    }
    Hid group(H5Gopen2(h5.get(), group_path.c_str(), H5P_DEFAULT), H5Gclose);
    if (!group.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          file, ": '", group_path, "' is not a group: ", Hdf5Message()));
    }
    H5G_info_t info;
    if (H5Gget_info(group.get(), &info) < 0) {
      return absl::DataLossError(absl::StrCat(
          file, ": cannot list '", group_path, "': ", Hdf5Message()));
    }
    if (info.nlinks != spec.shapes.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": '", group_path, "' holds ", info.nlinks,
                       " weights but the model has ", spec.shapes.size()));
    }
    std::vector<Tensor> values;
    values.reserve(spec.shapes.size());
    for (size_t i = 0; i < spec.shapes.size(); ++i) {
      const std::string name = absl::StrCat(i);
      const std::string where =
          absl::StrCat(file, ": '", group_path, "/", i, "'");
      const htri_t has = H5Lexists(group.get(), name.c_str(), H5P_DEFAULT);
      if (has <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": missing"));
      }
      GG_ASSIGN_OR_RETURN(
          Tensor value, ReadDataset(group.get(), name, spec.shapes[i], where));
      values.push_back(std::move(value));
    }
    out.push_back(std::move(values));
  }
  return out;
}

}  // namespace graphgc
