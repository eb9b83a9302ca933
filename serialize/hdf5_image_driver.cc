#include "serialize/hdf5_image_driver.h"

#include <cstdint>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"

namespace graphgc {
namespace {

// What the file access property list carries to `open` (copied by HDF5).
struct ImageInfo {
  const char* data;
  size_t size;
};

// An open image. HDF5 fills in `pub` after `open` returns; it must come
// first, as HDF5 casts between the two.
struct ImageFile {
  H5FD_t pub;
  const char* data;
  haddr_t size;
  haddr_t eoa;
  // The superblock's size of lengths (2, 4 or 8), or 0 when the image has
  // no superblock (HDF5 then refuses it itself).
  unsigned length_size;
};

// Pushes `message` onto HDF5's error stack (the innermost entry, which the
// callers' statuses quote) and returns HDF5's failure value.
herr_t Fail(const char* func, hid_t major, hid_t minor,
            const std::string& message) {
  H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, major, minor,
           "%s", message.c_str());
  return -1;
}

constexpr char kSignature[8] = {'\x89', 'H',  'D',    'F',
                                '\r',   '\n', '\x1a', '\n'};

// The size of lengths the superblock declares, found where HDF5 looks for
// it (H5FD_locate_signature: offset 0, then 512, 1024, 2048, ...), or 0
// when there is no superblock. Versions 0 and 1 keep it at byte 14,
// versions 2 and 3 at byte 10.
unsigned SuperblockLengthSize(const char* data, size_t size) {
  for (uint64_t at = 0; at <= size && size - at >= sizeof(kSignature);
       at = at == 0 ? 512 : 2 * at) {
    if (std::memcmp(data + at, kSignature, sizeof(kSignature)) != 0) continue;
    const uint64_t field = static_cast<uint8_t>(data[at + 8]) < 2 ? 14 : 10;
    return size - at > field ? static_cast<uint8_t>(data[at + field]) : 0;
  }
  return 0;
}

uint64_t DecodeLittleEndian(const char* p, unsigned bytes) {
  uint64_t out = 0;
  for (unsigned i = bytes; i-- > 0;) {
    out = (out << 8) | static_cast<uint8_t>(p[i]);
  }
  return out;
}

// A local heap's header (version 0): "HEAP", version, 3 reserved bytes,
// the data segment's size and the free list's offset (lengths), the data
// segment's address. HDF5 allocates the data segment at its declared size
// before it reads it: a size the image cannot hold is refused here, when
// the header is read.
herr_t CheckLocalHeap(const ImageFile& f, haddr_t addr, size_t size) {
  const char* p = f.data + addr;
  if (size < 4 || std::memcmp(p, "HEAP", 4) != 0) return 0;
  if (size < 8 + f.length_size) {
    return Fail("CheckLocalHeap", H5E_HEAP, H5E_BADVALUE,
                absl::StrCat("local heap header at ", addr,
                             " is cut off by the end of the file"));
  }
  const uint64_t data_size = DecodeLittleEndian(p + 8, f.length_size);
  if (data_size > f.size) {
    return Fail("CheckLocalHeap", H5E_HEAP, H5E_BADVALUE,
                absl::StrCat("local heap at ", addr, " declares ", data_size,
                             " bytes of data, more than the file's ", f.size));
  }
  return 0;
}

// --- The driver's callbacks (C; they never throw).

H5FD_t* Open(const char*, unsigned flags, hid_t fapl, haddr_t) {
  const unsigned writing =
      H5F_ACC_RDWR | H5F_ACC_TRUNC | H5F_ACC_EXCL | H5F_ACC_CREAT;
  if ((flags & writing) != 0) {
    Fail("Open", H5E_VFL, H5E_CANTOPENFILE,
         "the in-memory image driver opens files read-only");
    return nullptr;
  }
  const auto* info = static_cast<const ImageInfo*>(H5Pget_driver_info(fapl));
  if (info == nullptr || info->data == nullptr) {
    Fail("Open", H5E_VFL, H5E_CANTOPENFILE,
         "no file image to open (only the image itself is read)");
    return nullptr;
  }
  const unsigned length_size = SuperblockLengthSize(info->data, info->size);
  if (length_size != 0 && length_size != 2 && length_size != 4 &&
      length_size != 8) {
    Fail("Open", H5E_VFL, H5E_CANTOPENFILE,
         absl::StrCat("the superblock declares lengths of ", length_size,
                      " bytes (2, 4 or 8 are read)"));
    return nullptr;
  }
  auto* f = new (std::nothrow) ImageFile{};
  if (f == nullptr) {
    Fail("Open", H5E_VFL, H5E_CANTALLOC, "out of memory");
    return nullptr;
  }
  f->data = info->data;
  f->size = info->size;
  f->length_size = length_size;
  return &f->pub;
}

herr_t Close(H5FD_t* file) {
  delete reinterpret_cast<ImageFile*>(file);
  return 0;
}

// No feature: in particular no metadata accumulator
// (H5FD_FEAT_ACCUMULATE_METADATA) and no sieve buffer.
herr_t Query(const H5FD_t*, unsigned long* flags) {
  if (flags != nullptr) *flags = 0;
  return 0;
}

haddr_t GetEoa(const H5FD_t* file, H5FD_mem_t) {
  return reinterpret_cast<const ImageFile*>(file)->eoa;
}

herr_t SetEoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  reinterpret_cast<ImageFile*>(file)->eoa = addr;
  return 0;
}

haddr_t GetEof(const H5FD_t* file, H5FD_mem_t) {
  return reinterpret_cast<const ImageFile*>(file)->size;
}

herr_t Read(H5FD_t* file, H5FD_mem_t type, hid_t, haddr_t addr, size_t size,
            void* buffer) {
  const ImageFile& f = *reinterpret_cast<const ImageFile*>(file);
  // Also refuses HADDR_UNDEF (all ones) and any addr + size that wraps.
  if (addr > f.size || size > f.size - addr) {
    return Fail(
        "Read", H5E_IO, H5E_READERROR,
        addr == HADDR_UNDEF
            ? absl::StrCat("read of ", size, " bytes at an undefined address")
            : absl::StrCat("read of ", size, " bytes at ", addr,
                           " runs past the file's end at ", f.size));
  }
  if (type == H5FD_MEM_LHEAP && CheckLocalHeap(f, addr, size) < 0) return -1;
  if (size > 0) std::memcpy(buffer, f.data + addr, size);
  return 0;
}

herr_t Write(H5FD_t*, H5FD_mem_t, hid_t, haddr_t, size_t, const void*) {
  return Fail("Write", H5E_IO, H5E_WRITEERROR,
              "the in-memory image driver is read-only");
}

H5FD_class_t MakeClass() {
  H5FD_class_t c{};
  c.name = "graphgc_image";
  c.maxaddr = static_cast<haddr_t>(HADDR_MAX - 1);
  c.fc_degree = H5F_CLOSE_WEAK;
  c.fapl_size = sizeof(ImageInfo);  // HDF5 copies and frees it itself
  c.open = Open;
  c.close = Close;
  c.query = Query;
  c.get_eoa = GetEoa;
  c.set_eoa = SetEoa;
  c.get_eof = GetEof;
  c.read = Read;
  c.write = Write;
  const H5FD_mem_t map[H5FD_MEM_NTYPES] = H5FD_FLMAP_DICHOTOMY;
  std::memcpy(c.fl_map, map, sizeof(map));
  return c;
}

}  // namespace

hid_t Hdf5ImageDriver() {
  // Guarded by Hdf5Mutex(), which every caller holds. HDF5 keeps a pointer
  // to the class: it lives as long as the process.
  static const H5FD_class_t* const cls = new H5FD_class_t(MakeClass());
  static hid_t id = -1;
  if (id < 0 || H5Iis_valid(id) <= 0) id = H5FDregister(cls);
  return id;
}

absl::Status SetHdf5ImageDriver(hid_t fapl, absl::string_view image) {
  const hid_t driver = Hdf5ImageDriver();
  const ImageInfo info{image.data(), image.size()};
  if (driver < 0 || H5Pset_driver(fapl, driver, &info) < 0) {
    return absl::InternalError("cannot set up HDF5's in-memory image driver");
  }
  return absl::OkStatus();
}

}  // namespace graphgc
