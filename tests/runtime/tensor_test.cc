#include "runtime/tensor.h"

#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace graphgc {
namespace {

TEST(DataType, ValuesAreTensorFlows) {
  EXPECT_EQ(DT_FLOAT, 1);
  EXPECT_EQ(DT_INT32, 3);
  EXPECT_EQ(DT_INT64, 9);
  EXPECT_EQ(DT_BOOL, 10);
  EXPECT_EQ(DataTypeString(DT_FLOAT), "float");
}

TEST(TensorShape, BuiltFromListOrVector) {
  TensorShape a{1000, 10};
  TensorShape b(std::vector<int64_t>{1000, 10});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.dims(), 2);
  EXPECT_EQ(a[0], 1000);
  EXPECT_EQ(a.num_elements(), 10000);
}

TEST(TensorShape, UnknownDimensionsMakeAPartialShape) {
  TensorShape s{-1, 3};
  EXPECT_FALSE(s.IsFullyDefined());
  EXPECT_EQ(s.num_elements(), -1);
  EXPECT_TRUE(s.IsCompatibleWith(TensorShape{7, 3}));
  EXPECT_FALSE(s.IsCompatibleWith(TensorShape{7, 4}));
  EXPECT_EQ(s.DebugString(), "[?,3]");
}

TEST(Tensor, FromDataCopiesTheValues) {
  std::vector<float> v{1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::FromData<float>({2, 3}, v).value();
  v[0] = 100;
  EXPECT_EQ(t.dtype(), DT_FLOAT);
  EXPECT_EQ(t.shape(), (TensorShape{2, 3}));
  EXPECT_EQ(t.data<float>()[0], 1);
  EXPECT_EQ(t.matrix<float>()(1, 2), 6);
}

TEST(Tensor, FromDataRejectsAWrongSize) {
  absl::StatusOr<Tensor> t =
      Tensor::FromData<float>({2, 3}, std::vector<float>{1, 2});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("6 elements"), std::string::npos);
}

TEST(Tensor, FromDataRejectsNegativeAndUnknownDims) {
  EXPECT_FALSE(Tensor::FromData<float>({-1, 3}, std::vector<float>{}).ok());
  EXPECT_FALSE(Tensor::FromData<float>({-2}, std::vector<float>{}).ok());
}

TEST(Tensor, FromDataRejectsAbsurdSizes) {
  EXPECT_FALSE(
      Tensor::FromData<float>({int64_t{1} << 40, 1 << 20}, std::vector<float>{})
          .ok());
}

// Found by tests/fuzz/tensor_fuzzer (corpus/tensor/huge_shape_little_data):
// FromData allocated the whole shape before comparing counts, so a valid but
// huge shape with a few values tried to allocate gigabytes (or terabytes).
// The count must be checked first, and the error is the wrong size.
TEST(Tensor, FromDataChecksTheCountBeforeAllocating) {
  // 2^40 int64 elements: 8 TiB, which no allocation could serve.
  absl::StatusOr<Tensor> t = Tensor::FromData<int64_t>(
      {int64_t{1} << 20, int64_t{1} << 20}, std::vector<int64_t>{1, 2, 3});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("1099511627776 elements but 3"),
            std::string::npos)
      << t.status();
  // An invalid shape still reports the shape.
  absl::StatusOr<Tensor> bad =
      Tensor::FromData<float>({-5, 2}, std::vector<float>{1, 2});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("tensor shape"), std::string::npos)
      << bad.status();
}

TEST(Tensor, CopiesShareTheBuffer) {
  Tensor a = Tensor::FromData<int32_t>({2}, std::vector<int32_t>{1, 2}).value();
  Tensor b = a;
  EXPECT_TRUE(a.SharesBufferWith(b));
  Tensor c = Tensor::FromData<int32_t>({2}, std::vector<int32_t>{1, 2}).value();
  EXPECT_FALSE(a.SharesBufferWith(c));
}

TEST(Tensor, RefCountIsOneOnlyWhileNoCopyShares) {
  Tensor a = Tensor::FromData<float>({2}, std::vector<float>{1, 2}).value();
  EXPECT_TRUE(a.RefCountIsOne());
  {
    Tensor b = a;
    EXPECT_FALSE(a.RefCountIsOne());
    EXPECT_FALSE(b.RefCountIsOne());
    Tensor r = b.Reshaped({2, 1}).value();
    b = Tensor();
    EXPECT_FALSE(a.RefCountIsOne());
  }
  EXPECT_TRUE(a.RefCountIsOne());
  Tensor moved = std::move(a);
  EXPECT_TRUE(moved.RefCountIsOne());
  EXPECT_FALSE(Tensor().RefCountIsOne());
}

// Memory lent to Borrow: 64-byte aligned floats, and a count of releases.
struct Lender {
  alignas(64) float values[16] = {1, 2, 3, 4, 5, 6};
  int releases = 0;
  static void Release(void* arg) { ++static_cast<Lender*>(arg)->releases; }
};

TEST(Tensor, BorrowReadsTheLentMemoryWithoutCopying) {
  Lender lender;
  Tensor t = Tensor::Borrow(DT_FLOAT, {2, 3}, lender.values, 6 * sizeof(float),
                            &Lender::Release, &lender)
                 .value();
  EXPECT_TRUE(t.IsBorrowed());
  EXPECT_EQ(t.data<float>().data(), lender.values);
  EXPECT_EQ(t.matrix<float>()(1, 2), 6.0f);
  lender.values[0] = 10;  // the lender's memory, not a copy
  EXPECT_EQ(t.data<float>()[0], 10.0f);
}

TEST(Tensor, ABorrowedBufferIsNeverUniqueSoNothingWritesItInPlace) {
  Lender lender;
  Tensor t = Tensor::Borrow(DT_FLOAT, {6}, lender.values, 6 * sizeof(float),
                            &Lender::Release, &lender)
                 .value();
  EXPECT_FALSE(t.RefCountIsOne());
  Tensor reshaped = t.Reshaped({3, 2}).value();
  EXPECT_TRUE(reshaped.IsBorrowed());
  t = Tensor();
  EXPECT_FALSE(reshaped.RefCountIsOne());
  EXPECT_FALSE(Tensor::Zeros(DT_FLOAT, {2}).value().IsBorrowed());
}

TEST(Tensor, BorrowReleasesOnceWhenTheLastSharerGoes) {
  Lender lender;
  {
    Tensor t = Tensor::Borrow(DT_FLOAT, {6}, lender.values, 6 * sizeof(float),
                              &Lender::Release, &lender)
                   .value();
    Tensor copy = t;
    Tensor reshaped = t.Reshaped({2, 3}).value();
    t = Tensor();
    copy = Tensor();
    EXPECT_EQ(lender.releases, 0);
  }
  EXPECT_EQ(lender.releases, 1);
}

TEST(Tensor, BorrowReleasesOnTheThreadThatDropsTheLastSharer) {
  Lender lender;
  Tensor t = Tensor::Borrow(DT_FLOAT, {6}, lender.values, 6 * sizeof(float),
                            &Lender::Release, &lender)
                 .value();
  std::thread other([moved = std::move(t)]() mutable { moved = Tensor(); });
  other.join();
  EXPECT_EQ(lender.releases, 1);
}

TEST(Tensor, BorrowRefusesMisalignedMemoryAndTakesNothing) {
  Lender lender;
  absl::StatusOr<Tensor> t =
      Tensor::Borrow(DT_FLOAT, {2}, lender.values + 1, 2 * sizeof(float),
                     &Lender::Release, &lender);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("64-byte aligned"), std::string::npos);
  EXPECT_EQ(lender.releases, 0);
}

TEST(Tensor, BorrowRefusesAByteCountThatIsNotTheShapes) {
  Lender lender;
  absl::StatusOr<Tensor> t =
      Tensor::Borrow(DT_FLOAT, {2, 3}, lender.values, 5 * sizeof(float),
                     &Lender::Release, &lender);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("needs 24 bytes, but 20"),
            std::string::npos);
  EXPECT_EQ(lender.releases, 0);
}

TEST(Tensor, BorrowRefusesAShapeOrDtypeATensorCannotHave) {
  Lender lender;
  EXPECT_EQ(Tensor::Borrow(DT_FLOAT, {-1, 2}, lender.values, 8,
                           &Lender::Release, &lender)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Tensor::Borrow(DT_INVALID, {2}, lender.values, 8, &Lender::Release,
                           &lender)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Tensor::Borrow(DT_FLOAT, {2}, lender.values, 8, nullptr, &lender)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(lender.releases, 0);
}

TEST(Tensor, BuffersAreAlignedForEigen) {
  for (int n : {1, 3, 17, 100}) {
    Tensor t = Tensor::Zeros(DT_FLOAT, {n}).value();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data<float>().data()) % 64, 0u);
  }
}

TEST(Tensor, ZerosAreZero) {
  Tensor t = Tensor::Zeros(DT_INT64, {4}).value();
  for (int64_t v : t.data<int64_t>()) EXPECT_EQ(v, 0);
}

TEST(Tensor, ScalarHasRankZero) {
  Tensor t = Tensor::Scalar<float>(2.5f);
  EXPECT_EQ(t.shape().dims(), 0);
  EXPECT_EQ(t.num_elements(), 1);
  EXPECT_EQ(t.data<float>()[0], 2.5f);
}

TEST(Tensor, BoolTensorsHoldOneBytePerElement) {
  bool v[3] = {true, false, true};
  Tensor t = Tensor::FromData<bool>({3}, absl::MakeConstSpan(v, 3)).value();
  EXPECT_EQ(t.TotalBytes(), 3);
  EXPECT_TRUE(t.data<bool>()[2]);
}

TEST(Tensor, ReshapedSharesTheBufferAndChecksTheCount) {
  Tensor t = Tensor::Zeros(DT_FLOAT, {2, 3}).value();
  Tensor r = t.Reshaped({3, 2}).value();
  EXPECT_TRUE(r.SharesBufferWith(t));
  EXPECT_FALSE(t.Reshaped({4}).ok());
}

// 7 * 0x6DB6DB6DB6DB6DB7 is 1 modulo 2^64: a count that wraps to one
// element.
constexpr int64_t kWrapsToOneWith7 = 0x6DB6DB6DB6DB6DB7;

TEST(Tensor, AllocationLargerThanMaxTensorBytesIsResourceExhausted) {
  // 2^38 floats (1 TiB) is a valid shape, far past this machine's memory:
  // a status, not an allocator failure (ASan would abort on the attempt).
  absl::StatusOr<Tensor> t = Tensor::Zeros(DT_FLOAT, {int64_t{1} << 38});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(t.status().message().find("MaxTensorBytes"), std::string::npos)
      << t.status();
}

TEST(Tensor, SetMaxTensorBytesLowersTheLimitAndZeroRestoresIt) {
  SetMaxTensorBytes(1024);
  EXPECT_EQ(MaxTensorBytes(), 1024);
  EXPECT_TRUE(Tensor::Zeros(DT_FLOAT, {256}).ok());
  EXPECT_EQ(Tensor::Zeros(DT_FLOAT, {257}).status().code(),
            absl::StatusCode::kResourceExhausted);
  SetMaxTensorBytes(0);
  EXPECT_EQ(MaxTensorBytes(), PhysicalMemoryBytes());
  EXPECT_TRUE(Tensor::Zeros(DT_FLOAT, {257}).ok());
}

TEST(Tensor, ReshapedRefusesAShapeWhoseElementCountWraps) {
  Tensor one = Tensor::FromData<float>({1}, std::vector<float>{5}).value();
  absl::StatusOr<Tensor> r = one.Reshaped({7, kWrapsToOneWith7});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("too many elements"), std::string::npos)
      << r.status();
}

TEST(TensorShape, NumElementsIsMinusOneWhenTheCountWouldWrap) {
  EXPECT_EQ(TensorShape({7, kWrapsToOneWith7}).num_elements(), -1);
  EXPECT_EQ(TensorShape({int64_t{1} << 32, int64_t{1} << 32}).num_elements(),
            -1);
  EXPECT_EQ(TensorShape({0, int64_t{1} << 40}).num_elements(), 0);
  EXPECT_EQ(TensorShape({2, 3}).num_elements(), 6);
}

TEST(TensorShape, CheckedNumElementsRefusesACountThatWraps) {
  absl::StatusOr<int64_t> n =
      TensorShape({7, kWrapsToOneWith7}).CheckedNumElements();
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(n.status().message().find("too many elements"), std::string::npos)
      << n.status();
}

TEST(TensorShape, CheckedNumElementsRefusesAnUnknownDimension) {
  absl::StatusOr<int64_t> n = TensorShape({2, -1}).CheckedNumElements();
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorShape, CheckedNumElementsCountsAValidShape) {
  EXPECT_EQ(TensorShape({2, 3, 4}).CheckedNumElements().value(), 24);
  EXPECT_EQ(TensorShape().CheckedNumElements().value(), 1);
  EXPECT_EQ(TensorShape({3, 0}).CheckedNumElements().value(), 0);
}

TEST(MultiplySizes, MultipliesWithinTheLimit) {
  int64_t p = 0;
  EXPECT_TRUE(MultiplySizes(6, 7, &p));
  EXPECT_EQ(p, 42);
  EXPECT_TRUE(MultiplySizes(kMaxTensorElements, 1, &p));
  EXPECT_EQ(p, kMaxTensorElements);
}

TEST(MultiplySizes, RefusesAProductThatWrapsInt64) {
  int64_t p = 0;
  EXPECT_FALSE(MultiplySizes(7, kWrapsToOneWith7, &p,
                             std::numeric_limits<int64_t>::max()));
}

TEST(MultiplySizes, RefusesAProductPastTheLimit) {
  int64_t p = 0;
  EXPECT_FALSE(MultiplySizes(kMaxTensorElements, 2, &p));
  EXPECT_FALSE(MultiplySizes(1 << 20, 1 << 20, &p, /*limit=*/1 << 30));
}

TEST(MultiplySizes, RefusesANegativeSize) {
  int64_t p = 0;
  EXPECT_FALSE(MultiplySizes(-1, 4, &p));
  EXPECT_FALSE(MultiplySizes(4, -1, &p));
}

TEST(Tensor, ClearLetsGoOfTheBufferAndEmptiesTheTensor) {
  Tensor a =
      Tensor::FromData<float>({2, 3}, std::vector<float>(6, 1.f)).value();
  Tensor b = a;
  EXPECT_FALSE(a.RefCountIsOne());
  b.Clear();
  EXPECT_TRUE(a.RefCountIsOne());
  EXPECT_FALSE(b.IsInitialized());
  EXPECT_EQ(b.shape().dims(), 0);
  EXPECT_EQ(b.num_elements(), 0);
  b.Clear();  // clearing an empty tensor is a no-op
  EXPECT_FALSE(b.IsInitialized());
  EXPECT_EQ(a.data<float>()[5], 1.f);
}

TEST(Tensor, ARecycledBufferIsZeroedForZeros) {
  // Each size class reuses the last freed block of its thread: fill one,
  // free it, and ask for zeros of the same size.
  {
    Tensor dirty = Tensor::Uninitialized(DT_FLOAT, {100}).value();
    for (float& v : dirty.mutable_data<float>()) v = 7.f;
  }
  Tensor t = Tensor::Zeros(DT_FLOAT, {100}).value();
  for (float v : t.data<float>()) EXPECT_EQ(v, 0.f);
}

TEST(Tensor, ABufferMayBeFreedOnAnotherThread) {
  // Blocks are cached per thread: one allocated here and released by
  // another thread joins that thread's cache (freed when it exits).
  std::vector<Tensor> made;
  for (int i = 0; i < 100; ++i) {
    made.push_back(
        Tensor::FromData<float>({3}, std::vector<float>{1, 2, 3}).value());
  }
  Tensor kept = made[0];
  std::thread other([moved = std::move(made)]() mutable {
    Tensor fresh = Tensor::Zeros(DT_FLOAT, {3}).value();
    moved.clear();
    EXPECT_EQ(fresh.data<float>()[2], 0.f);
  });
  other.join();
  EXPECT_EQ(kept.data<float>()[2], 3.f);
  EXPECT_TRUE(kept.RefCountIsOne());
}

TEST(Tensor, EmptyTensorIsNotInitialized) {
  Tensor t;
  EXPECT_FALSE(t.IsInitialized());
  EXPECT_EQ(t.DebugString(), "<empty tensor>");
}

}  // namespace
}  // namespace graphgc
