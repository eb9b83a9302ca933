// runtime/tensor.h
//
// DataType, TensorShape and Tensor: graphgc's dense n-dimensional values.
//
// A Tensor is a value type over a shared, immutable, 64-byte aligned buffer:
// copies share the buffer, and nothing writes to a buffer once a second
// Tensor shares it (kernels fill a freshly allocated output before they
// publish it, so an output never aliases a buffer someone else reads).
// DataType values and names are TensorFlow's. TensorShape may hold -1 for an
// unknown dimension (placeholders, layer inputs); a Tensor's shape is always
// fully defined.
//
// Thread safety: a Tensor may be read from any number of threads.
//
// Example:
//   Tensor x = Tensor::FromData<float>({2, 3}, values).value();
//   auto m = x.matrix<float>();   // Eigen::Map, row-major 2x3
#ifndef GRAPHGC_RUNTIME_TENSOR_H_
#define GRAPHGC_RUNTIME_TENSOR_H_

#include <atomic>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace graphgc {

// TensorFlow's DataType enum values (tensorflow/core/framework/types.proto).
enum DataType : int {
  DT_INVALID = 0,
  DT_FLOAT = 1,
  DT_DOUBLE = 2,
  DT_INT32 = 3,
  DT_STRING = 7,
  DT_INT64 = 9,
  DT_BOOL = 10,
  DT_RESOURCE = 20,
};

// "float", "int32", "int64", "bool", ... as TensorFlow prints them.
absl::string_view DataTypeString(DataType dtype);
// Bytes per element of a numeric dtype; 0 for DT_INVALID, DT_STRING,
// DT_RESOURCE (which no Tensor buffer holds).
int64_t DataTypeSize(DataType dtype);
// True for the dtypes a Tensor can hold: float, int32, int64, bool.
bool IsTensorDataType(DataType dtype);

template <typename T>
struct DataTypeToEnum;
template <>
struct DataTypeToEnum<float> {
  static constexpr DataType value = DT_FLOAT;
};
template <>
struct DataTypeToEnum<int32_t> {
  static constexpr DataType value = DT_INT32;
};
template <>
struct DataTypeToEnum<int64_t> {
  static constexpr DataType value = DT_INT64;
};
template <>
struct DataTypeToEnum<bool> {
  static constexpr DataType value = DT_BOOL;
};

// The most elements a tensor may hold (2^40): far beyond this runtime's
// memory, and small enough that an element count times any dtype's size,
// or any product of a valid shape's dimensions, fits int64 with room left.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

// PhysicalMemoryBytes: this machine's physical memory in bytes (read once),
// 0 when unknown.
int64_t PhysicalMemoryBytes();

// MaxTensorBytes: the largest tensor, in bytes, that allocation attempts;
// a larger one is ResourceExhausted, never an allocator failure (under
// AddressSanitizer a huge allocation aborts the process). By default the
// machine's physical memory (no limit when unknown); SetMaxTensorBytes
// lowers it for the whole process (e.g. a fuzzer's memory budget), and
// SetMaxTensorBytes(0) restores the default. Thread-safe.
int64_t MaxTensorBytes();
void SetMaxTensorBytes(int64_t bytes);

// MultiplySizes: `a * b` for sizes a, b >= 0 (dimensions, element counts,
// strides, byte counts) into `*product`. Returns false, with `*product`
// unspecified, when a or b is negative (an unknown or invalid size) or the
// product overflows int64 or exceeds `limit`. The one overflow check
// graphgc uses wherever it multiplies sizes.
inline bool MultiplySizes(int64_t a, int64_t b, int64_t* product,
                          int64_t limit = kMaxTensorElements) {
  return a >= 0 && b >= 0 && !__builtin_mul_overflow(a, b, product) &&
         *product <= limit;
}

// TensorShape: a list of dimension sizes; -1 marks an unknown dimension.
// A default-constructed shape is a scalar (rank 0). A shape is valid
// (Validate) when its known dimensions are >= 0 and the product of its
// non-zero known dimensions is at most kMaxTensorElements.
class TensorShape {
 public:
  TensorShape() = default;
  TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  TensorShape(const std::vector<int64_t>& dims)  // NOLINT: implicit by design
      : dims_(dims.begin(), dims.end()) {}
  explicit TensorShape(absl::Span<const int64_t> dims)
      : dims_(dims.begin(), dims.end()) {}

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t dim_size(int i) const { return dims_[i]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }

  // Product of the dimensions; -1 when any dimension is unknown, and also
  // -1 for a shape that is not valid (a negative dimension, or more than
  // kMaxTensorElements elements, where the product could wrap): never a
  // wrapped count. CheckedNumElements() says why.
  int64_t num_elements() const;
  // The element count of a fully defined, valid shape; otherwise
  // InvalidArgument naming the shape: "shape [7,7905747460161236407] has
  // too many elements" or "dimension 1 of shape [2,-1] is -1 (must be >= 0)".
  absl::StatusOr<int64_t> CheckedNumElements() const;
  bool IsFullyDefined() const;
  // Whether a tensor of shape `concrete` fits this (possibly partial) shape.
  // Inline: the executor checks every kernel output with it.
  bool IsCompatibleWith(const TensorShape& concrete) const {
    const size_t n = dims_.size();
    if (n != concrete.dims_.size()) return false;
    // Through raw pointers: InlinedVector's operator[] tests for inline
    // storage on every access, and executors check every kernel output.
    const int64_t* a = dims_.data();
    const int64_t* b = concrete.dims_.data();
    for (size_t i = 0; i < n; ++i) {
      if (a[i] >= 0 && a[i] != b[i]) return false;
    }
    return true;
  }

  void AddDim(int64_t size) { dims_.push_back(size); }
  // Back to the scalar shape [] (no dimension).
  void Clear() { dims_.clear(); }
  void set_dim(int i, int64_t size) { dims_[i] = size; }
  void RemoveDim(int i) { dims_.erase(dims_.begin() + i); }
  void InsertDim(int i, int64_t size) { dims_.insert(dims_.begin() + i, size); }

  // "[1000,10]", with "?" for an unknown dimension.
  std::string DebugString() const;

  // OK when every dimension is >= 0 (or -1 where `allow_unknown`) and the
  // product of the non-zero known dimensions is at most kMaxTensorElements
  // (InvalidArgument "shape [...] has too many elements" otherwise, even
  // when another dimension is 0).
  static absl::Status Validate(absl::Span<const int64_t> dims,
                               bool allow_unknown);

  friend bool operator==(const TensorShape& a, const TensorShape& b) {
    // An element loop rather than InlinedVector's ==, which calls memcmp
    // for what is usually two or three dimensions.
    const size_t n = a.dims_.size();
    if (n != b.dims_.size()) return false;
    const int64_t* x = a.dims_.data();
    const int64_t* y = b.dims_.data();
    for (size_t i = 0; i < n; ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }
  friend bool operator!=(const TensorShape& a, const TensorShape& b) {
    return !(a == b);
  }

 private:
  absl::InlinedVector<int64_t, 4> dims_;
};

class Tensor {
 public:
  // An empty tensor: dtype DT_INVALID, no buffer.
  Tensor() = default;

  // A zero-filled tensor of a numeric dtype and a fully defined shape.
  // Kernels use this for their outputs.
  static absl::StatusOr<Tensor> Zeros(DataType dtype, const TensorShape& shape);
  // Like Zeros, but the elements are left unspecified (the buffer may be a
  // recycled one). Only for producers that write every element before the
  // tensor is read or copied (kernels whose output is fully overwritten).
  static absl::StatusOr<Tensor> Uninitialized(DataType dtype,
                                              const TensorShape& shape);
  // Becomes a new tensor of `dtype` and `shape` in place, its elements
  // zeroed or (zero false) unspecified as Uninitialized's: what a kernel's
  // output slot does without moving a tensor. On error (as Zeros gives) the
  // tensor is unchanged. `shape` must not be this tensor's own.
  absl::Status Reset(DataType dtype, const TensorShape& shape, bool zero);

  // What Borrow calls when the last tensor sharing a borrowed buffer goes.
  using ReleaseFn = void (*)(void* arg);
  // A tensor that reads `data`, memory its caller owns, without copying it:
  // for callers (the Python module) that lend graphgc an existing array for
  // the length of one call. `release(release_arg)` runs exactly once, when
  // the last tensor sharing the buffer is destroyed, on whichever thread
  // that is. A borrowed buffer is never unique (RefCountIsOne() is false
  // for every tensor on it), so no kernel, no forwarding and no optimizer
  // ever writes it: graphgc only reads the lender's memory. The lender must
  // not write it until `release` runs.
  // InvalidArgument, taking nothing (`release` never runs), when `data` is
  // not 64-byte aligned (the Eigen views below assume it), the dtype is not
  // a tensor dtype, the shape is not fully defined and valid, or `bytes` is
  // not its element count times the dtype's size. ResourceExhausted when
  // the buffer's header cannot be allocated.
  static absl::StatusOr<Tensor> Borrow(DataType dtype, const TensorShape& shape,
                                       const void* data, size_t bytes,
                                       ReleaseFn release, void* release_arg);
  // Whether this tensor reads memory lent by Borrow.
  bool IsBorrowed() const { return buffer_.borrowed(); }

  // Copies `data` into a new tensor of `shape`; the sizes must agree and the
  // shape must be fully defined with no negative dimension.
  template <typename T>
  static absl::StatusOr<Tensor> FromData(const TensorShape& shape,
                                         absl::Span<const T> data);
  // A scalar of `value`. Throws std::bad_alloc, as operator new does, when
  // memory is exhausted (it has no status to return that in).
  template <typename T>
  static Tensor Scalar(T value);

  bool IsInitialized() const { return dtype_ != DT_INVALID; }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int64_t num_elements() const { return num_elements_; }
  // Cannot overflow: a tensor's shape is always valid (TensorShape::Validate;
  // Reset and Reshaped refuse any other), so it holds at most
  // kMaxTensorElements elements, and any product of its dimensions (a row
  // count, a stride) is at most that too.
  int64_t TotalBytes() const { return num_elements_ * DataTypeSize(dtype_); }

  // Element views. T must match dtype() (checked by assert).
  template <typename T>
  absl::Span<const T> data() const {
    assert(DataTypeToEnum<T>::value == dtype_);
    return absl::Span<const T>(static_cast<const T*>(raw()), num_elements_);
  }
  // Writable view; only for the producer of a fresh tensor, before any copy
  // of it exists (checked by assert).
  template <typename T>
  absl::Span<T> mutable_data() {
    assert(DataTypeToEnum<T>::value == dtype_);
    assert(buffer_.get() == nullptr || buffer_.unique());
    return absl::Span<T>(static_cast<T*>(raw()), num_elements_);
  }

  // Eigen views for kernels. flat(): all elements as a column array.
  // matrix(): the last dimension as columns and all others folded into rows
  // (row-major), so a [b, n] tensor is a b x n matrix and a scalar is 1 x 1.
  template <typename T>
  using ConstFlat =
      Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Aligned64>;
  template <typename T>
  using Flat = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Aligned64>;
  template <typename T>
  using RowMajorMatrix =
      Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  template <typename T>
  using ConstMatrix = Eigen::Map<const RowMajorMatrix<T>, Eigen::Aligned64>;
  template <typename T>
  using Matrix = Eigen::Map<RowMajorMatrix<T>, Eigen::Aligned64>;

  template <typename T>
  ConstFlat<T> flat() const {
    return ConstFlat<T>(data<T>().data(), num_elements_);
  }
  template <typename T>
  Flat<T> mutable_flat() {
    return Flat<T>(mutable_data<T>().data(), num_elements_);
  }
  template <typename T>
  ConstMatrix<T> matrix() const {
    auto [rows, cols] = MatrixDims();
    return ConstMatrix<T>(data<T>().data(), rows, cols);
  }
  template <typename T>
  Matrix<T> mutable_matrix() {
    auto [rows, cols] = MatrixDims();
    return Matrix<T>(mutable_data<T>().data(), rows, cols);
  }

  // Lets go of the buffer and becomes an empty tensor, as Tensor() but in
  // place: the executor clears each input after its last reader, and
  // assigning a temporary there cost a store-forwarding stall per input.
  void Clear() {
    dtype_ = DT_INVALID;
    shape_.Clear();
    num_elements_ = 0;
    buffer_.Reset();
  }

  // A tensor with the same buffer and another shape of as many elements.
  // InvalidArgument when `shape` is not fully defined, not valid (its
  // element count overflows or exceeds kMaxTensorElements: "too many
  // elements") or holds another number of elements.
  absl::StatusOr<Tensor> Reshaped(const TensorShape& shape) const;

  // Whether two tensors share one buffer (used to prove kernels never alias).
  bool SharesBufferWith(const Tensor& other) const {
    return buffer_.get() != nullptr && buffer_.get() == other.buffer_.get();
  }

  // Whether this tensor holds the only reference to its buffer, so that its
  // holder may write it in place (mutable_data) instead of copying: how
  // optimizers update a variable whose value nobody else holds. A buffer
  // that other tensors share is never written in place. The check is an
  // acquire load, so whatever the other holders did with the buffer before
  // they let go of it happens before the caller's writes.
  bool RefCountIsOne() const { return buffer_.unique(); }

  // "float [2,3] {1, 2, 3, 4, 5, 6}", at most `max_entries` values.
  std::string DebugString(int max_entries = 12) const;

 private:
  struct Buffer;  // the storage's header, defined in tensor.cc
  // Where the elements start in a buffer's block: one cache line, so they
  // are 64-byte aligned for Eigen's vectorised loads.
  static constexpr size_t kBufferHeaderBytes = 64;
  // A buffer for `bytes` of elements (zeroed if `zero`), with one
  // reference; nullptr when memory is exhausted.
  static Buffer* NewBuffer(size_t bytes, bool zero);
  // What a Buffer starts with: its reference count, whether its elements
  // are lent (Borrow), and where they are (kBufferHeaderBytes past the
  // header for graphgc's own buffers, the lender's memory for a borrowed
  // one).
  struct Counted {
    std::atomic<int32_t> refs{1};
    bool borrowed = false;
    void* data = nullptr;
  };
  // An intrusive counted reference to a Buffer: one allocation per tensor
  // fewer than a shared_ptr, and a uniqueness check with acquire ordering.
  class BufferRef {
   public:
    BufferRef() = default;
    explicit BufferRef(Buffer* adopted);  // takes over one reference
    BufferRef(const BufferRef& other) : p_(other.p_) {
      if (p_ != nullptr) p_->refs.fetch_add(1, std::memory_order_relaxed);
    }
    BufferRef(BufferRef&& other) noexcept : p_(other.p_) { other.p_ = nullptr; }
    BufferRef& operator=(BufferRef other) noexcept {
      std::swap(p_, other.p_);
      return *this;
    }
    ~BufferRef() { Release(p_); }
    void Reset() {
      Counted* p = p_;
      p_ = nullptr;
      Release(p);
    }
    Buffer* get() const;
    // The elements.
    void* data() const { return p_ == nullptr ? nullptr : p_->data; }
    bool borrowed() const { return p_ != nullptr && p_->borrowed; }
    // A borrowed buffer is never unique: its memory is the lender's.
    bool unique() const {
      return p_ != nullptr && !p_->borrowed &&
             p_->refs.load(std::memory_order_acquire) == 1;
    }

   private:
    // The sole holder (a count of 1, read with acquire ordering) destroys
    // without a locked decrement: no other thread holds a reference it
    // could copy, and every earlier holder's release happened before.
    // Most of the executor's intermediate tensors end this way.
    static void Release(Counted* p) {
      if (p != nullptr &&
          (p->refs.load(std::memory_order_acquire) == 1 ||
           p->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)) {
        Destroy(p);
      }
    }
    static void Destroy(Counted* p);
    Counted* p_ = nullptr;
  };
  Tensor(DataType dtype, TensorShape shape, BufferRef buffer);
  static absl::StatusOr<Tensor> Allocate(DataType dtype,
                                         const TensorShape& shape,
                                         bool zero = true);
  const void* raw() const { return buffer_.data(); }
  void* raw() { return buffer_.data(); }
  std::pair<int64_t, int64_t> MatrixDims() const;

  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  int64_t num_elements_ = 0;
  BufferRef buffer_;
};

template <typename T>
absl::StatusOr<Tensor> Tensor::FromData(const TensorShape& shape,
                                        absl::Span<const T> data) {
  // Compare the counts before allocating: a huge shape with little data is
  // an InvalidArgument, not an attempt at terabytes. An invalid shape is
  // left to Allocate's error.
  if (TensorShape::Validate(shape.dim_sizes(), false).ok() &&
      static_cast<int64_t>(data.size()) != shape.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Tensor::FromData: shape ", shape.DebugString(), " holds ",
        shape.num_elements(), " elements but ", data.size(), " were given"));
  }
  absl::StatusOr<Tensor> t =
      Allocate(DataTypeToEnum<T>::value, shape, /*zero=*/false);
  if (!t.ok()) return t.status();
  if (!data.empty()) {
    std::memcpy(t->raw(), data.data(), data.size() * sizeof(T));
  }
  return t;
}

template <typename T>
Tensor Tensor::Scalar(T value) {
  absl::StatusOr<Tensor> t =
      Allocate(DataTypeToEnum<T>::value, TensorShape(), /*zero=*/false);
  // A scalar's shape is always valid: only memory can run out, and then a
  // Scalar, which has no status to return, fails as operator new does.
  if (!t.ok()) throw std::bad_alloc();
  t->template mutable_data<T>()[0] = value;
  return *std::move(t);
}

}  // namespace graphgc

#endif  // GRAPHGC_RUNTIME_TENSOR_H_
