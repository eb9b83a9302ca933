#include "serialize/keras_weights.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <set>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "hdf5.h"
#include "serialize/hdf5_handles.h"
#include "serialize/hdf5_image_driver.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// Every HDF5 call of the process is made under this lock: Debian's HDF5 is
// the serial build (no H5_HAVE_THREADSAFE), whose library state (open
// files, free lists, the error stack, the identifier table) is unguarded.
// A Mutex (annotated for ThreadSanitizer, util/mutex.h) so TSan sees it;
// HDF5 itself is not instrumented, and is only ever entered under it. The
// one lock of serialize/hdf5_handles.h, which the driver's callers hold too.
Mutex& hdf5_mu = Hdf5Mutex();

// The name an image is opened under: the image driver opens no file, so
// it only appears in HDF5's messages.
constexpr char kImageName[] = "graphgc-weights-image";

// A name for the in-memory files EncodeKerasWeights creates that cannot
// exist on disk: HDF5's core driver first checks that no file of that name
// exists (and would wait on a FIFO of that name), and nothing can be
// created in /proc/self. The counter keeps two images of one process
// distinct.
std::string ImageName() {
  static std::atomic<int64_t> next{0};
  return absl::StrCat("/proc/self/graphgc-hdf5-image-", next++);
}

// Turns off HDF5's printing of its error stack to stderr (the statuses say
// what went wrong) and clears what an earlier call left.
void QuietErrors() ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  H5Eclear2(H5E_DEFAULT);
}

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
  const bool int64 = value.dtype() == DT_INT64;
  Hid ds(H5Dcreate2(group, name.c_str(), int64 ? H5T_STD_I64LE : H5T_IEEE_F32LE,
                    space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
         H5Dclose);
  if (!ds.ok()) return EncodeError(absl::StrCat(where, ": create"));
  const void* data =
      int64 ? static_cast<const void*>(value.data<int64_t>().data())
            : static_cast<const void*>(value.data<float>().data());
  if (value.num_elements() > 0 &&
      H5Dwrite(ds.get(), int64 ? H5T_NATIVE_INT64 : H5T_NATIVE_FLOAT, H5S_ALL,
               H5S_ALL, H5P_DEFAULT, data) < 0) {
    return EncodeError(absl::StrCat(where, ": write"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Decode

// HDF5's link traversal calls this before it opens the file an external
// link names: failing refuses the traversal. Links are checked to be hard
// before they are followed; this is the second line.
herr_t RefuseExternalLink(const char*, const char*, const char*, const char*,
                          unsigned*, hid_t, void*) {
  return -1;
}

const char* LinkKind(H5L_type_t type) {
  switch (type) {
    case H5L_TYPE_SOFT:
      return "a soft link";
    case H5L_TYPE_EXTERNAL:
      return "an external link (to another file)";
    default:
      return "a user-defined link";
  }
}

// Whether `path` (relative to `loc`) names a link. Each component is checked
// in turn, and each must be a hard link: a soft link, an external link (to
// another file on disk) or a user-defined one is refused before anything
// follows it.
absl::StatusOr<bool> HardLinkExists(hid_t loc, const std::string& path,
                                    hid_t lapl, const std::string& file)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  size_t end = 0;
  while (end != std::string::npos) {
    end = path.find('/', end + 1);
    const std::string prefix = path.substr(0, end);
    // H5Lexists follows every component but the last, each already checked.
    const htri_t exists = H5Lexists(loc, prefix.c_str(), lapl);
    if (exists < 0) {
      return absl::DataLossError(absl::StrCat(file, ": cannot look up '",
                                              prefix, "': ", Hdf5Message()));
    }
    if (exists == 0) return false;
    H5L_info_t info;
    if (H5Lget_info(loc, prefix.c_str(), &info, lapl) < 0) {
      return absl::DataLossError(absl::StrCat(file, ": cannot look up '",
                                              prefix, "': ", Hdf5Message()));
    }
    if (info.type != H5L_TYPE_HARD) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": '", prefix, "' is ", LinkKind(info.type),
                       "; a weights file is read through hard links only"));
    }
  }
  return true;
}

// A chunked dataset's chunks may be as large as the dataset itself, or this
// much when the dataset is smaller: HDF5 holds a whole chunk in memory to
// read any part of it.
constexpr uint64_t kMaxSmallChunkBytes = uint64_t{1} << 20;

// a * b, or nullopt when it overflows uint64.
std::optional<uint64_t> Mul(uint64_t a, uint64_t b) {
  uint64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// What the creation properties of a dataset ask for, checked before
// anything else of it is looked at: its data must lie inside the image
// (no external raw storage, no virtual dataset reading other files), with
// no filter that can expand it (only shuffle and Fletcher-32, which keep
// the size). Sets `layout` and whether a Fletcher-32 checksum follows each
// chunk.
absl::Status CheckCreationProperties(hid_t ds, const std::string& where,
                                     H5D_layout_t* layout, bool* fletcher32)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  Hid dcpl(H5Dget_create_plist(ds), H5Pclose);
  if (!dcpl.ok()) {
    return absl::DataLossError(absl::StrCat(
        where, ": unreadable creation properties: ", Hdf5Message()));
  }
  const int external = H5Pget_external_count(dcpl.get());
  if (external != 0) {
    return external < 0
               ? absl::DataLossError(absl::StrCat(
                     where, ": unreadable storage: ", Hdf5Message()))
               : absl::InvalidArgumentError(absl::StrCat(
                     where,
                     ": keeps its data in external files (HDF5 external "
                     "storage); only data inside the weights file is read"));
  }
  *layout = H5Pget_layout(dcpl.get());
  switch (*layout) {
    case H5D_COMPACT:
    case H5D_CONTIGUOUS:
    case H5D_CHUNKED:
      break;
    case H5D_VIRTUAL:
      return absl::InvalidArgumentError(absl::StrCat(
          where,
          ": is a virtual dataset (its data is in other files); only data "
          "inside the weights file is read"));
    default:
      return absl::DataLossError(absl::StrCat(
          where, ": unknown storage layout ", static_cast<int>(*layout)));
  }
  const int filters = H5Pget_nfilters(dcpl.get());
  if (filters < 0) {
    return absl::DataLossError(
        absl::StrCat(where, ": unreadable filters: ", Hdf5Message()));
  }
  *fletcher32 = false;
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0;
    size_t num_values = 0;
    char name[64] = {};
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags,
                       &num_values, nullptr, sizeof(name), name, nullptr);
    if (id == H5Z_FILTER_FLETCHER32) {
      *fletcher32 = true;
    } else if (id != H5Z_FILTER_SHUFFLE) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": uses HDF5 filter ", id,
          " (compression or another filter); weights files are read "
          "unfiltered, or with shuffle or Fletcher-32 only"));
    }
  }
  return absl::OkStatus();
}

// Checks that the data of a dataset of `elements` elements of
// `element_size` bytes is all stored, inside the image, in the size its
// shape implies, and that reading it needs no chunk larger than the
// dataset (or kMaxSmallChunkBytes): a dataset with no storage (read as
// fill values), a chunk that claims more, or a size corrupted in the
// metadata is refused before its data is read.
absl::Status CheckStorage(hid_t ds, hid_t space, H5D_layout_t layout,
                          bool fletcher32, uint64_t elements,
                          size_t element_size, const std::string& where)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  // `elements` is the count of a shape the model holds: it fits int64.
  const uint64_t data_bytes = elements * element_size;
  const uint64_t stored = H5Dget_storage_size(ds);
  if (layout != H5D_CHUNKED) {
    if (stored != data_bytes) {
      return absl::DataLossError(
          absl::StrCat(where, ": stores ", stored, " bytes of data but its ",
                       elements, " elements need ", data_bytes));
    }
    return absl::OkStatus();
  }
  Hid dcpl(H5Dget_create_plist(ds), H5Pclose);
  const int rank = H5Sget_simple_extent_ndims(space);
  if (!dcpl.ok() || rank <= 0 || rank > H5S_MAX_RANK) {
    return absl::DataLossError(
        absl::StrCat(where, ": unreadable chunked layout: ", Hdf5Message()));
  }
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  std::vector<hsize_t> chunk(static_cast<size_t>(rank));
  if (H5Sget_simple_extent_dims(space, dims.data(), nullptr) != rank ||
      H5Pget_chunk(dcpl.get(), rank, chunk.data()) != rank) {
    return absl::DataLossError(
        absl::StrCat(where, ": unreadable chunk shape: ", Hdf5Message()));
  }
  std::optional<uint64_t> chunk_bytes = element_size;
  std::optional<uint64_t> chunks = 1;
  for (int i = 0; i < rank; ++i) {
    if (chunk[i] == 0) {
      return absl::DataLossError(
          absl::StrCat(where, ": a chunk dimension is 0"));
    }
    if (chunk_bytes) chunk_bytes = Mul(*chunk_bytes, chunk[i]);
    // dims[i] is a dimension of the model's shape: no overflow in the sum.
    if (chunks) chunks = Mul(*chunks, (dims[i] + chunk[i] - 1) / chunk[i]);
  }
  const uint64_t chunk_budget = std::max(data_bytes, kMaxSmallChunkBytes);
  if (!chunk_bytes || *chunk_bytes > chunk_budget) {
    return absl::ResourceExhaustedError(absl::StrCat(
        where, ": its chunks are larger than the budget of ", chunk_budget,
        " bytes for reading it (the dataset's own size, or ",
        kMaxSmallChunkBytes, " bytes if it is smaller)"));
  }
  // Every chunk is stored whole (edge chunks too), plus its checksum.
  hsize_t stored_chunks = 0;
  const std::optional<uint64_t> want =
      chunks ? Mul(*chunks, *chunk_bytes + (fletcher32 ? 4 : 0)) : std::nullopt;
  if (H5Dget_num_chunks(ds, space, &stored_chunks) < 0 || !chunks ||
      stored_chunks != *chunks || !want || stored != *want) {
    return absl::DataLossError(absl::StrCat(
        where, ": stores ", stored_chunks, " chunks in ", stored,
        " bytes but its shape needs ", chunks ? *chunks : 0, " chunks of ",
        *chunk_bytes, " bytes", fletcher32 ? " and a checksum" : ""));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> ReadDataset(hid_t group, const std::string& name,
                                   const TensorShape& want, DataType dtype,
                                   hid_t dapl, const std::string& where)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  Hid ds(H5Dopen2(group, name.c_str(), dapl), H5Dclose);
  if (!ds.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not a readable dataset: ", Hdf5Message()));
  }
  H5D_layout_t layout = H5D_LAYOUT_ERROR;
  bool fletcher32 = false;
  GG_RETURN_IF_ERROR(
      CheckCreationProperties(ds.get(), where, &layout, &fletcher32));
  Hid type(H5Dget_type(ds.get()), H5Tclose);
  if (!type.ok()) {
    return absl::DataLossError(
        absl::StrCat(where, ": unreadable type: ", Hdf5Message()));
  }
  const bool int64 = dtype == DT_INT64;
  if (H5Tget_class(type.get()) != (int64 ? H5T_INTEGER : H5T_FLOAT)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, int64 ? ": not an integer" : ": not floating point",
        " (HDF5 type class ", static_cast<int>(H5Tget_class(type.get())), ")"));
  }
  // IEEE float32 or float64, as h5py writes them (or 32- and 64-bit
  // integers): any other type (another size, bias or bit layout) is corrupt
  // or exotic, and would make HDF5 convert elements of its declared size.
  // Every element is stored in at least 4 bytes of the image.
  size_t element_size = 0;
  const std::vector<hid_t> known =
      int64 ? std::vector<hid_t>{H5T_STD_I32LE, H5T_STD_I32BE, H5T_STD_I64LE,
                                 H5T_STD_I64BE}
            : std::vector<hid_t>{H5T_IEEE_F32LE, H5T_IEEE_F32BE, H5T_IEEE_F64LE,
                                 H5T_IEEE_F64BE};
  for (const hid_t t : known) {
    if (H5Tequal(type.get(), t) > 0) element_size = H5Tget_size(t);
  }
  if (element_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": a type of ", H5Tget_size(type.get()), " bytes that is not ",
        int64 ? "a signed 32- or 64-bit integer" : "IEEE float32 or float64"));
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
  GG_RETURN_IF_ERROR(CheckStorage(ds.get(), space.get(), layout, fletcher32,
                                  static_cast<uint64_t>(want.num_elements()),
                                  element_size, where));
  // `want` is a shape of the model's own variables, already allocated once,
  // and its data was just found stored in the image: its size is countable
  // and within the budget.
  GG_ASSIGN_OR_RETURN(Tensor out,
                      Tensor::Uninitialized(int64 ? DT_INT64 : DT_FLOAT, want));
  void* data = int64 ? static_cast<void*>(out.mutable_data<int64_t>().data())
                     : static_cast<void*>(out.mutable_data<float>().data());
  if (out.num_elements() > 0 &&
      H5Dread(ds.get(), int64 ? H5T_NATIVE_INT64 : H5T_NATIVE_FLOAT, H5S_ALL,
              H5S_ALL, H5P_DEFAULT, data) < 0) {
    return absl::DataLossError(
        absl::StrCat(where, ": cannot read its data: ", Hdf5Message()));
  }
  return out;
}

// The groups under "layers" of the open image `h5`, keeping the first
// `max_names` names. The link is checked to be hard before it is followed.
absl::StatusOr<KerasWeightsLayers> ListLayers(hid_t h5, hid_t lapl, hid_t gapl,
                                              uint64_t max_names,
                                              const std::string& file)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(hdf5_mu) {
  auto not_hdf5 = [&] {
    return absl::DataLossError(absl::StrCat(
        file, ": not a valid HDF5 file (truncated or corrupt: ", Hdf5Message(),
        ")"));
  };
  KerasWeightsLayers out;
  const htri_t exists = H5Lexists(h5, "layers", lapl);
  if (exists < 0) return not_hdf5();
  if (exists == 0) return out;
  H5L_info_t link;
  if (H5Lget_info(h5, "layers", &link, lapl) < 0) return not_hdf5();
  if (link.type != H5L_TYPE_HARD) {
    return absl::InvalidArgumentError(
        absl::StrCat(file,
                     ": 'layers' is a soft or external link, not a "
                     "group of the file"));
  }
  Hid group(H5Gopen2(h5, "layers", gapl), H5Gclose);
  if (!group.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": 'layers' is not a group: ", Hdf5Message()));
  }
  H5G_info_t info;
  if (H5Gget_info(group.get(), &info) < 0) return not_hdf5();
  out.count = info.nlinks;
  struct State {
    uint64_t max_names;
    std::vector<std::string>* names;
  } state{max_names, &out.names};
  hsize_t index = 0;
  const herr_t walked = H5Literate(
      group.get(), H5_INDEX_NAME, H5_ITER_INC, &index,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        auto* s = static_cast<State*>(data);
        if (s->names->size() >= s->max_names) return 1;  // enough: stop
        s->names->emplace_back(name);
        return 0;
      },
      &state);
  if (walked < 0) return not_hdf5();
  return out;
}

absl::StatusOr<std::vector<std::vector<Tensor>>> Decode(
    absl::string_view bytes, const std::vector<LayerWeightsSpec>& specs,
    const std::string& file, const KerasWeightsDecodeOptions& options) {
  if (bytes.empty()) {
    return absl::DataLossError(
        absl::StrCat(file, ": not a valid HDF5 file (it is empty)"));
  }
  WriterLock lock(hdf5_mu);
  QuietErrors();
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // HDF5 reads the image in place through our read-only driver, which
  // refuses any read outside it (serialize/hdf5_image_driver.h). No file an
  // external link names is kept open.
  if (!fapl.ok() || H5Pset_elink_file_cache_size(fapl.get(), 0) < 0) {
    return absl::InternalError(absl::StrCat(
        file, ": cannot set up HDF5 file access: ", Hdf5Message()));
  }
  if (const absl::Status set = SetHdf5ImageDriver(fapl.get(), bytes);
      !set.ok()) {
    return absl::InternalError(
        absl::StrCat(file, ": ", set.message(), ": ", Hdf5Message()));
  }
  // Every lookup and open goes through these access properties (group and
  // dataset access extend link access): an external link's traversal fails.
  Hid lapl(H5Pcreate(H5P_LINK_ACCESS), H5Pclose);
  Hid gapl(H5Pcreate(H5P_GROUP_ACCESS), H5Pclose);
  Hid dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose);
  for (const Hid* plist : {&lapl, &gapl, &dapl}) {
    if (!plist->ok() ||
        H5Pset_elink_cb(plist->get(), RefuseExternalLink, nullptr) < 0) {
      return absl::InternalError(absl::StrCat(
          file, ": cannot set up HDF5 link access: ", Hdf5Message()));
    }
  }
  Hid h5(H5Fopen(kImageName, H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!h5.ok()) {
    return absl::DataLossError(absl::StrCat(
        file, ": not a valid HDF5 file (truncated or corrupt: ", Hdf5Message(),
        ")"));
  }
  if (options.check_layers) {
    GG_ASSIGN_OR_RETURN(const KerasWeightsLayers layers,
                        ListLayers(h5.get(), lapl.get(), gapl.get(),
                                   options.max_layer_names, file));
    GG_RETURN_IF_ERROR(options.check_layers(layers));
  }
  // The budget (keras_weights.h): every weight is stored in at least 4
  // bytes of the image, so weights needing more than the image's size
  // cannot all be there; refused before any is read.
  const uint64_t image_bytes = bytes.size();
  uint64_t weights_bytes = 0;
  for (const LayerWeightsSpec& spec : specs) {
    for (size_t i = 0; i < spec.shapes.size(); ++i) {
      const bool int64 = i < spec.dtypes.size() && spec.dtypes[i] == DT_INT64;
      const std::optional<uint64_t> b =
          Mul(static_cast<uint64_t>(spec.shapes[i].num_elements()),
              int64 ? sizeof(int64_t) : sizeof(float));
      if (!b || __builtin_add_overflow(weights_bytes, *b, &weights_bytes)) {
        weights_bytes = std::numeric_limits<uint64_t>::max();
      }
    }
  }
  if (weights_bytes > image_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        file, ": the model's weights need ", weights_bytes,
        " bytes, more than the file's ", image_bytes,
        " bytes can hold; refused before reading (the budget for decoding a "
        "weights file is twice its size plus ",
        kKerasWeightsHdf5WorkingBytes,
        " bytes for HDF5: ", KerasWeightsDecodeBudget(image_bytes), " bytes)"));
  }
  std::vector<std::vector<Tensor>> out;
  out.reserve(specs.size());
  for (const LayerWeightsSpec& spec : specs) {
    const std::string group_path = spec.path + "/vars";
    GG_ASSIGN_OR_RETURN(const bool exists,
                        HardLinkExists(h5.get(), group_path, lapl.get(), file));
    if (!exists) {
      if (spec.shapes.empty()) {
        out.emplace_back();
        continue;
      }
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": no group '", group_path, "' (the model has ",
                       spec.shapes.size(), " weights there)"));
    }
    Hid group(H5Gopen2(h5.get(), group_path.c_str(), gapl.get()), H5Gclose);
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
      GG_ASSIGN_OR_RETURN(
          const bool has,
          HardLinkExists(h5.get(), absl::StrCat(group_path, "/", i), lapl.get(),
                         file));
      if (!has) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": missing"));
      }
      GG_ASSIGN_OR_RETURN(
          Tensor value,
          ReadDataset(group.get(), name, spec.shapes[i],
                      i < spec.dtypes.size() ? spec.dtypes[i] : DT_FLOAT,
                      dapl.get(), where));
      values.push_back(std::move(value));
    }
    out.push_back(std::move(values));
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
      if (layer.values[i].dtype() != DT_FLOAT &&
          layer.values[i].dtype() != DT_INT64) {
        return absl::InvalidArgumentError(absl::StrCat(
            "EncodeKerasWeights: ", layer.path, "/vars/", i, " is ",
            DataTypeString(layer.values[i].dtype()), ", not float or int64"));
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

uint64_t KerasWeightsDecodeBudget(uint64_t image_bytes) {
  return 2 * image_bytes + kKerasWeightsHdf5WorkingBytes;
}

absl::StatusOr<std::vector<std::vector<Tensor>>> DecodeKerasWeights(
    absl::string_view bytes, const std::vector<LayerWeightsSpec>& specs,
    const std::string& file, const KerasWeightsDecodeOptions& options) {
  try {
    return Decode(bytes, specs, file, options);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(file, ": out of memory decoding the weights (budget ",
                     KerasWeightsDecodeBudget(bytes.size()), " bytes)"));
  }
}

}  // namespace graphgc
