#include "serialize/hdf5_image_driver.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

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
  // The superblock's sizes of lengths and of addresses (2, 4 or 8), 0 when
  // the image has no superblock (HDF5 then refuses it itself), and where it
  // is (what addresses in the file count from, as HDF5 writes them).
  unsigned length_size;
  unsigned address_size;
  haddr_t base;
  // Continuation chunks of object headers already checked (their headers
  // were): a read of one is not taken for a header. At most kMaxChunks.
  static constexpr int kMaxChunks = 256;
  haddr_t chunks[kMaxChunks];
  int num_chunks;
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

struct Superblock {
  unsigned length_size = 0;
  unsigned address_size = 0;
  uint64_t at = 0;
};

// The sizes of lengths and addresses the superblock declares, found where
// HDF5 looks for it (H5FD_locate_signature: offset 0, then 512, 1024,
// 2048, ...); zeros when there is none. Versions 0 and 1 keep them at bytes
// 13 and 14, versions 2 and 3 at bytes 9 and 10.
Superblock FindSuperblock(const char* data, size_t size) {
  for (uint64_t at = 0; at <= size && size - at >= sizeof(kSignature);
       at = at == 0 ? 512 : 2 * at) {
    if (std::memcmp(data + at, kSignature, sizeof(kSignature)) != 0) continue;
    if (size - at <= 8) return {};  // no version byte: HDF5 refuses it
    const uint64_t field = static_cast<uint8_t>(data[at + 8]) < 2 ? 13 : 9;
    if (size - at <= field + 1) return {};
    return {.length_size = static_cast<uint8_t>(data[at + field + 1]),
            .address_size = static_cast<uint8_t>(data[at + field]),
            .at = at};
  }
  return {};
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

// Object headers of version 1: a 16-byte prefix (version 1, a reserved
// byte, the message count, the reference count, chunk 0's size, padding),
// then messages: type and size (2 bytes each), flags, 3 reserved bytes,
// the body (its size a multiple of 8). A continuation message (type 0x10:
// an address, a length) names the next chunk of messages, which HDF5
// allocates at that length before it reads it. So when a header is read,
// every chunk reachable from it is checked: a length the image cannot hold
// is refused, before HDF5 allocates anything for it.
herr_t CheckObjectHeader(ImageFile& f, haddr_t addr, size_t size) {
  const auto* p = reinterpret_cast<const uint8_t*>(f.data);
  if (size < 16 || p[addr] != 1 || p[addr + 1] != 0) return 0;
  if (std::find(f.chunks, f.chunks + f.num_chunks, addr) !=
      f.chunks + f.num_chunks) {
    return 0;  // a continuation chunk, checked with its header
  }
  constexpr int kMaxVisits = 64;
  haddr_t starts[kMaxVisits];
  haddr_t ends[kMaxVisits];
  int visits = 1;
  starts[0] = addr + 16;
  ends[0] =
      starts[0] + std::min<uint64_t>(DecodeLittleEndian(f.data + addr + 8, 4),
                                     f.size - starts[0]);
  for (int v = 0; v < visits; ++v) {
    for (haddr_t m = starts[v]; ends[v] - m >= 8;) {
      const uint64_t type = DecodeLittleEndian(f.data + m, 2);
      const uint64_t body = DecodeLittleEndian(f.data + m + 2, 2);
      if (body > ends[v] - m - 8) break;  // HDF5 refuses the chunk
      const haddr_t at = m + 8;
      m = at + body;
      if (type != 0x10 || body < f.address_size + f.length_size) continue;
      const uint64_t chunk = DecodeLittleEndian(f.data + at, f.address_size);
      const uint64_t length =
          DecodeLittleEndian(f.data + at + f.address_size, f.length_size);
      if (length > f.size) {
        return Fail(
            "CheckObjectHeader", H5E_OHDR, H5E_BADVALUE,
            absl::StrCat("object header at ", addr, " continues in a chunk of ",
                         length, " bytes, more than the file's ", f.size));
      }
      const uint64_t start = chunk + f.base;
      if (start < chunk || start > f.size || length > f.size - start ||
          visits == kMaxVisits) {
        continue;  // HDF5 refuses to read it, or it is not checked deeper
      }
      if (f.num_chunks < ImageFile::kMaxChunks &&
          std::find(f.chunks, f.chunks + f.num_chunks, start) ==
              f.chunks + f.num_chunks) {
        f.chunks[f.num_chunks++] = start;
      }
      starts[visits] = start;
      ends[visits] = start + length;
      ++visits;
    }
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
  const Superblock super = FindSuperblock(info->data, info->size);
  const std::pair<const char*, unsigned> sizes[] = {
      {"lengths", super.length_size}, {"addresses", super.address_size}};
  for (const auto& [what, bytes] : sizes) {
    if (bytes != 0 && bytes != 2 && bytes != 4 && bytes != 8) {
      Fail("Open", H5E_VFL, H5E_CANTOPENFILE,
           absl::StrCat("the superblock declares ", what, " of ", bytes,
                        " bytes (2, 4 or 8 are read)"));
      return nullptr;
    }
  }
  auto* f = new (std::nothrow) ImageFile{};
  if (f == nullptr) {
    Fail("Open", H5E_VFL, H5E_CANTALLOC, "out of memory");
    return nullptr;
  }
  f->data = info->data;
  f->size = info->size;
  f->length_size = super.length_size;
  f->address_size = super.address_size;
  f->base = super.at;
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
  if (type == H5FD_MEM_OHDR &&
      CheckObjectHeader(*reinterpret_cast<ImageFile*>(file), addr, size) < 0) {
    return -1;
  }
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
