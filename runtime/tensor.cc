#include "runtime/tensor.h"

#include <cstdlib>
#include <mutex>
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

int64_t TensorShape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

bool TensorShape::IsFullyDefined() const {
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

bool TensorShape::IsCompatibleWith(const TensorShape& concrete) const {
  if (dims() != concrete.dims()) return false;
  for (int i = 0; i < dims(); ++i) {
    if (dims_[i] >= 0 && dims_[i] != concrete.dims_[i]) return false;
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
  // An element count past 2^40 is far beyond this runtime's memory and would
  // overflow byte counts; reject it as a shape error.
  constexpr int64_t kMaxElements = int64_t{1} << 40;
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
    if (d > 0 && n > kMaxElements / d) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape [", absl::StrJoin(dims, ","), "] has too many elements"));
    }
    n *= (d == 0 ? 1 : d);
  }
  return absl::OkStatus();
}

namespace {

// A small cache of freed tensor buffers, so the steady state of a training
// loop (the same output sizes every step) does not go to malloc for each
// kernel output. Sizes are rounded up to powers of two from 64 bytes to
// kMaxCachedBytes; each class keeps at most kMaxPerClass buffers, so the
// cache holds a bounded amount of memory (at most kMaxPerClass * 2 *
// kMaxCachedBytes). Larger buffers go straight to aligned_alloc/free.
// Thread-safe (one small lock).
class BufferCache {
 public:
  static constexpr int kMinShift = 6;   // 64 bytes
  static constexpr int kMaxShift = 18;  // 256 KiB
  static constexpr size_t kMaxCachedBytes = size_t{1} << kMaxShift;
  static constexpr size_t kMaxPerClass = 32;

  // The bytes to allocate for a request of `n` bytes (at least 64, a
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

  void* Get(int cls) {
    std::lock_guard<std::mutex> l(mu_);
    auto& list = free_[cls];
    if (list.empty()) return nullptr;
    void* p = list.back();
    list.pop_back();
    return p;
  }

  // Takes `p` back; false when the class is full (the caller frees it).
  bool Put(int cls, void* p) {
    std::lock_guard<std::mutex> l(mu_);
    auto& list = free_[cls];
    if (list.size() >= kMaxPerClass) return false;
    list.push_back(p);
    return true;
  }

  static BufferCache& Get() {
    static BufferCache* const cache = new BufferCache();  // never destroyed
    return *cache;
  }

 private:
  BufferCache() {
    for (auto& list : free_) list.reserve(kMaxPerClass);
  }
  std::mutex mu_;
  std::vector<void*> free_[kMaxShift - kMinShift + 1];
};

}  // namespace

struct Tensor::Buffer : Tensor::Counted {
  Buffer(size_t n, bool zero) : bytes(n) {
    // 64-byte alignment for Eigen's vectorised loads; aligned_alloc wants a
    // multiple of the alignment, and at least one block so data() is valid.
    size_t rounded = 0;
    cls = BufferCache::ClassOf(n, &rounded);
    if (cls >= 0) data = BufferCache::Get().Get(cls);
    if (data == nullptr) data = std::aligned_alloc(64, rounded);
    if (data != nullptr && zero) std::memset(data, 0, rounded);
  }
  ~Buffer() {
    if (data == nullptr) return;
    if (cls < 0 || !BufferCache::Get().Put(cls, data)) std::free(data);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data = nullptr;
  size_t bytes = 0;
  int cls = -1;  // BufferCache class, -1 when not cached
};

Tensor::BufferRef::BufferRef(Buffer* adopted) : p_(adopted) {}

Tensor::Buffer* Tensor::BufferRef::get() const {
  return static_cast<Buffer*>(p_);
}

void Tensor::BufferRef::Destroy(Counted* p) { delete static_cast<Buffer*>(p); }

Tensor::Tensor(DataType dtype, TensorShape shape, BufferRef buffer)
    : dtype_(dtype),
      shape_(std::move(shape)),
      num_elements_(shape_.num_elements()),
      buffer_(std::move(buffer)) {}

absl::StatusOr<Tensor> Tensor::Allocate(DataType dtype,
                                        const TensorShape& shape, bool zero) {
  if (!IsTensorDataType(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a tensor cannot hold dtype ", DataTypeString(dtype)));
  }
  absl::Status s = TensorShape::Validate(shape.dim_sizes(), false);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor shape: ", s.message()));
  }
  const size_t bytes = static_cast<size_t>(shape.num_elements()) *
                       static_cast<size_t>(DataTypeSize(dtype));
  BufferRef buffer(new Buffer(bytes, zero));
  if (buffer.get()->data == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", bytes, " bytes for a ", DataTypeString(dtype),
        " tensor of shape ", shape.DebugString()));
  }
  return Tensor(dtype, shape, std::move(buffer));
}

absl::StatusOr<Tensor> Tensor::Zeros(DataType dtype, const TensorShape& shape) {
  return Allocate(dtype, shape);
}

absl::StatusOr<Tensor> Tensor::Uninitialized(DataType dtype,
                                             const TensorShape& shape) {
  return Allocate(dtype, shape, /*zero=*/false);
}

const void* Tensor::raw() const {
  return buffer_.get() == nullptr ? nullptr : buffer_.get()->data;
}
void* Tensor::raw() {
  return buffer_.get() == nullptr ? nullptr : buffer_.get()->data;
}

std::pair<int64_t, int64_t> Tensor::MatrixDims() const {
  if (shape_.dims() == 0) return {1, 1};
  int64_t cols = shape_[shape_.dims() - 1];
  int64_t rows = cols == 0 ? 0 : num_elements_ / cols;
  return {rows, cols};
}

absl::StatusOr<Tensor> Tensor::Reshaped(const TensorShape& shape) const {
  if (!shape.IsFullyDefined() || shape.num_elements() != num_elements_) {
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
