#include "runtime/tensor.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "absl/strings/str_join.h"

namespace graphgc {

absl::string_view DataTypeString(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
      return "float";
    case DT_DOUBLE:
      return "double";
    case DT_INT32:
      return "int32";
    case DT_STRING:
      return "string";
    case DT_INT64:
      return "int64";
    case DT_BOOL:
      return "bool";
    case DT_RESOURCE:
      return "resource";
    case DT_INVALID:
      break;
  }
  return "invalid";
}

int64_t DataTypeSize(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
    case DT_INT32:
      return 4;
    case DT_DOUBLE:
    case DT_INT64:
      return 8;
    case DT_BOOL:
      return 1;
    default:
      return 0;
  }
}

bool IsTensorDataType(DataType dtype) {
  return dtype == DT_FLOAT || dtype == DT_INT32 || dtype == DT_INT64 ||
         dtype == DT_BOOL;
}

int64_t PhysicalMemoryBytes() {
  static const int64_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    int64_t total = 0;
    if (pages <= 0 || page_size <= 0 ||
        __builtin_mul_overflow(int64_t{pages}, int64_t{page_size}, &total)) {
      return int64_t{0};
    }
    return total;
  }();
  return bytes;
}

namespace {
std::atomic<int64_t> max_tensor_bytes{0};  // 0: PhysicalMemoryBytes()
}  // namespace

int64_t MaxTensorBytes() {
  const int64_t set = max_tensor_bytes.load(std::memory_order_relaxed);
  return set > 0 ? set : PhysicalMemoryBytes();
}

void SetMaxTensorBytes(int64_t bytes) {
  max_tensor_bytes.store(bytes > 0 ? bytes : 0, std::memory_order_relaxed);
}

int64_t TensorShape::num_elements() const {
  int64_t nonzero = 1;  // the product of the non-zero dimensions
  bool empty = false;
  for (int64_t d : dims_) {
    if (d < 0 || !MultiplySizes(nonzero, d == 0 ? 1 : d, &nonzero)) return -1;
    empty |= d == 0;
  }
  return empty ? 0 : nonzero;
}

absl::StatusOr<int64_t> TensorShape::CheckedNumElements() const {
  const int64_t n = num_elements();
  if (n < 0) {
    absl::Status s = Validate(dims_, /*allow_unknown=*/false);
    return s.ok() ? absl::InternalError("unreachable: a valid shape's count")
                  : s;
  }
  return n;
}

bool TensorShape::IsFullyDefined() const {
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

std::string TensorShape::DebugString() const {
  return absl::StrCat("[",
                      absl::StrJoin(dims_, ",",
                                    [](std::string* out, int64_t d) {
                                      if (d < 0) {
                                        out->append("?");
                                      } else {
                                        absl::StrAppend(out, d);
                                      }
                                    }),
                      "]");
}

absl::Status TensorShape::Validate(absl::Span<const int64_t> dims,
                                   bool allow_unknown) {
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d == -1 && allow_unknown) continue;
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dimension ", i, " of shape [", absl::StrJoin(dims, ","), "] is ", d,
          allow_unknown ? " (only -1 may mark an unknown size)"
                        : " (must be >= 0)"));
    }
    // A multiplication rather than a division per dimension: every kernel
    // output's shape is validated.
    if (!MultiplySizes(n, d == 0 ? 1 : d, &n)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape [", absl::StrJoin(dims, ","), "] has too many elements"));
    }
  }
  return absl::OkStatus();
}

namespace {

// Freed tensor blocks kept for reuse, per thread, so the steady state of a
// training loop (the same output sizes every step) neither goes to malloc
// nor takes a lock for each kernel output. Block sizes are powers of two
// from 128 bytes to kMaxCachedBytes; each class keeps at most kMaxPerClass
// blocks, so a thread's cache holds a bounded amount of memory (less than
// kMaxPerClass * 2 * kMaxCachedBytes). Larger blocks go straight to
// aligned_alloc/free. A block freed on another thread than the one that
// allocated it simply joins that thread's cache.
class BlockCache {
 public:
  static constexpr int kMinShift = 7;   // 128 bytes: a header and 64
  static constexpr int kMaxShift = 18;  // 256 KiB
  static constexpr int kClasses = kMaxShift - kMinShift + 1;
  static constexpr size_t kMaxCachedBytes = size_t{1} << kMaxShift;
  static constexpr int kMaxPerClass = 32;

  // The bytes to allocate for a block of `n` bytes (at least 128, a
  // multiple of 64) and its class, or -1 when not cached.
  static int ClassOf(size_t n, size_t* rounded) {
    if (n <= (size_t{1} << kMinShift)) {
      *rounded = size_t{1} << kMinShift;
      return 0;
    }
    if (n > kMaxCachedBytes) {
      *rounded = ((n + 63) / 64) * 64;
      return -1;
    }
    const int shift = 64 - __builtin_clzll(static_cast<uint64_t>(n - 1));
    *rounded = size_t{1} << shift;
    return shift - kMinShift;
  }

  // This thread's cache, or nullptr once the thread is tearing down its
  // thread_locals (blocks freed then go straight to free()).
  static BlockCache* ForThisThread() {
    if (current_ != nullptr) return current_;
    if (gone_) return nullptr;
    current_ = new BlockCache();
    owner_.armed = true;  // first use: registers ~Owner for this thread
    return current_;
  }

  void* Get(int cls) {
    return count_[cls] == 0 ? nullptr : blocks_[cls][--count_[cls]];
  }
  // Takes `p` back; false when the class is full (the caller frees it).
  bool Put(int cls, void* p) {
    if (count_[cls] == kMaxPerClass) return false;
    blocks_[cls][count_[cls]++] = p;
    return true;
  }

 private:
  // Frees the thread's cache when the thread ends. current_ and gone_ are
  // trivially destructible, so they stay readable after this runs (a
  // thread_local tensor destroyed later still finds gone_ set).
  struct Owner {
    bool armed = false;
    ~Owner() {
      BlockCache* cache = current_;
      current_ = nullptr;
      gone_ = true;
      if (cache == nullptr) return;
      for (int c = 0; c < kClasses; ++c) {
        for (int i = 0; i < cache->count_[c]; ++i)
          std::free(cache->blocks_[c][i]);
      }
      delete cache;
    }
  };
  static thread_local BlockCache* current_;
  static thread_local bool gone_;
  static thread_local Owner owner_;

  void* blocks_[kClasses][kMaxPerClass] = {};
  int count_[kClasses] = {};
};

thread_local BlockCache* BlockCache::current_ = nullptr;
thread_local bool BlockCache::gone_ = false;
thread_local BlockCache::Owner BlockCache::owner_;

}  // namespace

// A tensor's storage is one 64-byte-aligned block: this header (the
// reference count and the block's size class), then the elements from
// kBufferHeaderBytes on. One allocation per tensor, and none at all in the
// steady state (BlockCache).
struct Tensor::Buffer : Tensor::Counted {
  int cls = -1;  // BlockCache class, -1 when not cached
  // A borrowed buffer's (Borrow): a header alone, allocated with new, and
  // the lender's release.
  ReleaseFn release = nullptr;
  void* release_arg = nullptr;
};
Tensor::Buffer* Tensor::NewBuffer(size_t bytes, bool zero) {
  static_assert(sizeof(Buffer) <= kBufferHeaderBytes);
  size_t rounded = 0;
  const int cls = BlockCache::ClassOf(bytes + kBufferHeaderBytes, &rounded);
  void* block = nullptr;
  if (cls >= 0) {
    if (BlockCache* cache = BlockCache::ForThisThread())
      block = cache->Get(cls);
  }
  if (block == nullptr) block = std::aligned_alloc(64, rounded);
  if (block == nullptr) return nullptr;
  auto* buffer = new (block) Buffer();
  buffer->cls = cls;
  buffer->data = static_cast<char*>(block) + kBufferHeaderBytes;
  if (zero) {
    std::memset(static_cast<char*>(block) + kBufferHeaderBytes, 0, bytes);
  }
  return buffer;
}

Tensor::BufferRef::BufferRef(Buffer* adopted) : p_(adopted) {}

Tensor::Buffer* Tensor::BufferRef::get() const {
  return static_cast<Buffer*>(p_);
}

void Tensor::BufferRef::Destroy(Counted* p) {
  auto* buffer = static_cast<Buffer*>(p);
  if (buffer->borrowed) {
    const ReleaseFn release = buffer->release;
    void* const arg = buffer->release_arg;
    delete buffer;
    release(arg);
    return;
  }
  const int cls = buffer->cls;
  buffer->~Buffer();
  if (cls >= 0) {
    BlockCache* cache = BlockCache::ForThisThread();
    if (cache != nullptr && cache->Put(cls, buffer)) return;
  }
  std::free(buffer);
}

Tensor::Tensor(DataType dtype, TensorShape shape, BufferRef buffer)
    : dtype_(dtype),
      shape_(std::move(shape)),
      num_elements_(shape_.num_elements()),
      buffer_(std::move(buffer)) {}

namespace {

// A tensor's element count and byte size, or why `dtype` and `shape` make
// no tensor (a dtype a tensor cannot hold; a shape that is not fully
// defined and valid). Every kernel output comes through here (Reset).
struct TensorSize {
  int64_t num_elements = 0;
  int64_t bytes = 0;
};
absl::StatusOr<TensorSize> SizeOfTensor(DataType dtype,
                                        const TensorShape& shape) {
  if (!IsTensorDataType(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a tensor cannot hold dtype ", DataTypeString(dtype)));
  }
  // num_elements() checks what Validate checks, in the same pass as the
  // count; Validate itself only words the error.
  const int64_t num_elements = shape.num_elements();
  if (num_elements < 0) {
    absl::Status s = TensorShape::Validate(shape.dim_sizes(), false);
    return absl::InvalidArgumentError(
        absl::StrCat("tensor shape: ", s.message()));
  }
  // At most 2^40 elements of at most 8 bytes: no overflow.
  return TensorSize{num_elements, num_elements * DataTypeSize(dtype)};
}

}  // namespace

absl::Status Tensor::Reset(DataType dtype, const TensorShape& shape,
                           bool zero) {
  const absl::StatusOr<TensorSize> size = SizeOfTensor(dtype, shape);
  if (!size.ok()) return size.status();
  const int64_t num_elements = size->num_elements;
  const int64_t bytes = size->bytes;
  const int64_t limit = MaxTensorBytes();
  if (limit > 0 && bytes > limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a ", DataTypeString(dtype), " tensor of shape ", shape.DebugString(),
        " needs ", bytes, " bytes, more than the ", limit,
        " a tensor may take (MaxTensorBytes)"));
  }
  BufferRef buffer(NewBuffer(static_cast<size_t>(bytes), zero));
  if (buffer.get() == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", bytes, " bytes for a ", DataTypeString(dtype),
        " tensor of shape ", shape.DebugString()));
  }
  dtype_ = dtype;
  shape_ = shape;
  num_elements_ = num_elements;
  buffer_ = std::move(buffer);
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Tensor::Borrow(DataType dtype, const TensorShape& shape,
                                      const void* data, size_t bytes,
                                      ReleaseFn release, void* release_arg) {
  absl::StatusOr<TensorSize> size = SizeOfTensor(dtype, shape);
  if (!size.ok()) {
    return absl::Status(
        size.status().code(),
        absl::StrCat("Tensor::Borrow: ", size.status().message()));
  }
  const int64_t expected = size->bytes;
  if (bytes != static_cast<size_t>(expected)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor::Borrow: a ", DataTypeString(dtype),
                     " tensor of shape ", shape.DebugString(), " needs ",
                     expected, " bytes, but ", bytes, " were lent"));
  }
  if (reinterpret_cast<uintptr_t>(data) % 64 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor::Borrow: the lent memory at ",
                     absl::Hex(reinterpret_cast<uintptr_t>(data)),
                     " is not 64-byte aligned"));
  }
  if (release == nullptr) {
    return absl::InvalidArgumentError("Tensor::Borrow: no release function");
  }
  auto* buffer = new (std::nothrow) Buffer();
  if (buffer == nullptr) {
    return absl::ResourceExhaustedError(
        "Tensor::Borrow: cannot allocate a buffer header");
  }
  buffer->borrowed = true;
  // Never written through: unique() is false for a borrowed buffer, and
  // mutable_data asserts unique().
  buffer->data = const_cast<void*>(data);
  buffer->release = release;
  buffer->release_arg = release_arg;
  return Tensor(dtype, shape, BufferRef(buffer));
}

absl::StatusOr<Tensor> Tensor::Allocate(DataType dtype,
                                        const TensorShape& shape, bool zero) {
  Tensor t;
  absl::Status s = t.Reset(dtype, shape, zero);
  if (!s.ok()) return s;
  return t;
}

absl::StatusOr<Tensor> Tensor::Zeros(DataType dtype, const TensorShape& shape) {
  return Allocate(dtype, shape);
}

absl::StatusOr<Tensor> Tensor::Uninitialized(DataType dtype,
                                             const TensorShape& shape) {
  return Allocate(dtype, shape, /*zero=*/false);
}

std::pair<int64_t, int64_t> Tensor::MatrixDims() const {
  if (shape_.dims() == 0) return {1, 1};
  int64_t cols = shape_[shape_.dims() - 1];
  int64_t rows = cols == 0 ? 0 : num_elements_ / cols;
  return {rows, cols};
}

absl::StatusOr<Tensor> Tensor::Reshaped(const TensorShape& shape) const {
  if (absl::Status s = TensorShape::Validate(shape.dim_sizes(), false);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot reshape a tensor of shape ", shape_.DebugString(),
                     ": ", s.message()));
  }
  if (shape.num_elements() != num_elements_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot reshape a tensor of shape ", shape_.DebugString(), " (",
        num_elements_, " elements) to ", shape.DebugString()));
  }
  return Tensor(dtype_, shape, buffer_);
}

std::string Tensor::DebugString(int max_entries) const {
  if (!IsInitialized()) return "<empty tensor>";
  std::string out =
      absl::StrCat(DataTypeString(dtype_), " ", shape_.DebugString(), " {");
  const int64_t n = std::min<int64_t>(num_elements_, max_entries);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    switch (dtype_) {
      case DT_FLOAT:
        absl::StrAppend(&out, data<float>()[i]);
        break;
      case DT_INT32:
        absl::StrAppend(&out, data<int32_t>()[i]);
        break;
      case DT_INT64:
        absl::StrAppend(&out, data<int64_t>()[i]);
        break;
      case DT_BOOL:
        out += data<bool>()[i] ? "true" : "false";
        break;
      default:
        break;
    }
  }
  if (n < num_elements_) out += ", ...";
  out += "}";
  return out;
}

}  // namespace graphgc
