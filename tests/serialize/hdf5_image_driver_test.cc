#include "serialize/hdf5_image_driver.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hdf5.h"
#include "runtime/tensor.h"
#include "serialize/hdf5_handles.h"
#include "serialize/keras_weights.h"
#include "util/mutex.h"

// Debian's HDF5 1.10.8 leaks a few hundred bytes on some error paths
// (inside libhdf5, nothing graphgc holds): LeakSanitizer leaves those to
// HDF5 and still checks everything else.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libhdf5_serial.so\n";
}

namespace graphgc {
namespace {

// An image of one layer: "layers/dense/vars/0" holds 1, 2, 3, 4.
std::string DenseImage() {
  const Tensor kernel =
      Tensor::FromData<float>({2, 2}, {1.f, 2.f, 3.f, 4.f}).value();
  return EncodeKerasWeights({{.path = "layers/dense", .values = {kernel}}})
      .value();
}

// Every message on HDF5's error stack, innermost last; clears it.
std::string Hdf5Errors() {
  std::string out;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* err, void* data) -> herr_t {
        if (err->desc != nullptr) {
          absl::StrAppend(static_cast<std::string*>(data), err->desc, "\n");
        }
        return 0;
      },
      &out);
  H5Eclear2(H5E_DEFAULT);
  return out;
}

// Holds the HDF5 lock and a file access property list set to `image`,
// which it keeps alive. DenseImage() (which takes the lock itself) is made
// once, before any test holds it.
class ImageDriverTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dense_ = new std::string(DenseImage()); }
  static void TearDownTestSuite() { delete dense_; }

  void Use(std::string image) {
    image_ = std::move(image);
    ASSERT_TRUE(SetHdf5ImageDriver(fapl_, image_).ok());
  }

  // The image opened at the driver's level, its end of allocation set
  // past the image, so that HDF5's own check of addresses against it lets
  // every read reach the driver.
  H5FD_t* OpenRaw() {
    H5FD_t* file = H5FDopen("image", H5F_ACC_RDONLY, fapl_, HADDR_UNDEF);
    if (file != nullptr) H5FDset_eoa(file, H5FD_MEM_DEFAULT, file->maxaddr);
    return file;
  }

  WriterLock lock_{Hdf5Mutex()};
  hid_t fapl_ = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return H5Pcreate(H5P_FILE_ACCESS);
  }();
  std::string image_;
  static const std::string* dense_;

  ~ImageDriverTest() override { H5Pclose(fapl_); }
};

const std::string* ImageDriverTest::dense_ = nullptr;

TEST_F(ImageDriverTest, OpensAnImageReadOnlyAndReadsItsDatasets) {
  Use(*dense_);
  const hid_t file = H5Fopen("image", H5F_ACC_RDONLY, fapl_);
  ASSERT_GE(file, 0) << Hdf5Errors();
  const hid_t ds = H5Dopen2(file, "layers/dense/vars/0", H5P_DEFAULT);
  ASSERT_GE(ds, 0) << Hdf5Errors();
  float values[4] = {};
  EXPECT_GE(
      H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), 0);
  EXPECT_EQ(values[0], 1.f);
  EXPECT_EQ(values[3], 4.f);
  H5Dclose(ds);
  H5Fclose(file);
}

TEST_F(ImageDriverTest, ReadsInsideTheImageGiveItsBytes) {
  Use(*dense_);
  H5FD_t* file = OpenRaw();
  ASSERT_NE(file, nullptr) << Hdf5Errors();
  EXPECT_EQ(H5FDget_eof(file, H5FD_MEM_DEFAULT), image_.size());
  char head[8];
  ASSERT_GE(H5FDread(file, H5FD_MEM_SUPER, H5P_DEFAULT, 0, 8, head), 0);
  EXPECT_EQ(std::string(head, 8), image_.substr(0, 8));
  char last;
  ASSERT_GE(
      H5FDread(file, H5FD_MEM_DRAW, H5P_DEFAULT, image_.size() - 1, 1, &last),
      0);
  EXPECT_EQ(last, image_.back());
  H5FDclose(file);
}

TEST_F(ImageDriverTest, AReadRunningPastTheEndIsRefused) {
  Use(*dense_);
  H5FD_t* file = OpenRaw();
  ASSERT_NE(file, nullptr) << Hdf5Errors();
  std::vector<char> buffer(16);
  EXPECT_LT(H5FDread(file, H5FD_MEM_DRAW, H5P_DEFAULT, image_.size() - 8, 16,
                     buffer.data()),
            0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(), "runs past the file's end"));
  EXPECT_LT(H5FDread(file, H5FD_MEM_DRAW, H5P_DEFAULT, image_.size() + 1, 1,
                     buffer.data()),
            0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(), "runs past the file's end"));
  H5FDclose(file);
}

TEST_F(ImageDriverTest, AReadAtTheUndefinedAddressIsRefused) {
  Use(*dense_);
  H5FD_t* file = OpenRaw();
  ASSERT_NE(file, nullptr) << Hdf5Errors();
  // HDF5's own check, addr + size > end of allocation, wraps around to 511.
  std::vector<char> buffer(512);
  EXPECT_LT(H5FDread(file, H5FD_MEM_LHEAP, H5P_DEFAULT, HADDR_UNDEF, 512,
                     buffer.data()),
            0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(), "at an undefined address"));
  H5FDclose(file);
}

TEST_F(ImageDriverTest, AReadWhoseEndWrapsAroundIsRefused) {
  Use(*dense_);
  H5FD_t* file = OpenRaw();
  ASSERT_NE(file, nullptr) << Hdf5Errors();
  std::vector<char> buffer(64);
  EXPECT_LT(H5FDread(file, H5FD_MEM_DRAW, H5P_DEFAULT,
                     ~haddr_t{0} - 32 /* not HADDR_UNDEF */, 64, buffer.data()),
            0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(), "runs past the file's end"));
  H5FDclose(file);
}

TEST_F(ImageDriverTest, WritesAreRefused) {
  Use(*dense_);
  H5FD_t* file = OpenRaw();
  ASSERT_NE(file, nullptr) << Hdf5Errors();
  const char bytes[8] = {};
  EXPECT_LT(H5FDwrite(file, H5FD_MEM_DRAW, H5P_DEFAULT, 0, 8, bytes), 0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(), "read-only"));
  H5FDclose(file);
}

TEST_F(ImageDriverTest, OpeningForWritingIsRefused) {
  Use(*dense_);
  EXPECT_LT(H5Fopen("image", H5F_ACC_RDWR, fapl_), 0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(), "read-only"));
  EXPECT_LT(H5Fcreate("image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl_), 0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(), "read-only"));
}

TEST_F(ImageDriverTest, ALocalHeapDeclaringMoreThanTheImageIsRefused) {
  std::string image = *dense_;
  const size_t heap = image.find("HEAP");
  ASSERT_NE(heap, std::string::npos);
  // The data segment's size (8 bytes in HDF5's default superblock).
  const uint64_t huge = uint64_t{1} << 59;
  std::memcpy(&image[heap + 8], &huge, sizeof(huge));
  Use(image);
  H5FD_t* file = OpenRaw();
  ASSERT_NE(file, nullptr) << Hdf5Errors();
  std::vector<char> buffer(32);
  EXPECT_LT(
      H5FDread(file, H5FD_MEM_LHEAP, H5P_DEFAULT, heap, 32, buffer.data()), 0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(), "declares 576460752303423488"));
  // The same bytes read as anything but a local heap are only bytes.
  EXPECT_GE(H5FDread(file, H5FD_MEM_DRAW, H5P_DEFAULT, heap, 32, buffer.data()),
            0);
  H5FDclose(file);
}

TEST_F(ImageDriverTest, AnObjectHeaderContinuingInAChunkTooLargeIsRefused) {
  std::string image = *dense_;
  // The kernel's dataspace message (version 1 object header): type 1, a
  // body of 40 bytes, then version 1, rank 2. Made a continuation message
  // (type 0x10) to a chunk at 3000 of 2^30 bytes.
  const size_t message =
      image.find(std::string("\x01\x00\x28\x00\x00\x00\x00\x00\x01\x02", 10));
  ASSERT_NE(message, std::string::npos);
  image[message] = 0x10;
  const uint64_t chunk[2] = {3000, uint64_t{1} << 30};
  std::memcpy(&image[message + 8], chunk, sizeof(chunk));
  Use(image);
  const hid_t file = H5Fopen("image", H5F_ACC_RDONLY, fapl_);
  ASSERT_GE(file, 0) << Hdf5Errors();
  EXPECT_LT(H5Dopen2(file, "layers/dense/vars/0", H5P_DEFAULT), 0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(),
                                "continues in a chunk of 1073741824 bytes"));
  H5Fclose(file);
}

TEST_F(ImageDriverTest, ASuperblockWithLengthsOfAnotherSizeIsRefused) {
  std::string image = *dense_;
  ASSERT_EQ(image[14], 8);  // superblock version 0: the size of lengths
  image[14] = 16;
  Use(image);
  EXPECT_LT(H5Fopen("image", H5F_ACC_RDONLY, fapl_), 0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(), "lengths of 16 bytes"));
}

TEST_F(ImageDriverTest, AnImageCutOffAfterTheSignatureIsRefused) {
  // Each length up to the superblock's size fields (found by
  // keras_weights_fuzzer: the 8-byte signature alone), in a buffer of
  // exactly that size, so that ASan sees any read past it.
  for (size_t size = 8; size <= 15; ++size) {
    const std::unique_ptr<char[]> image(new char[size]);
    std::memcpy(image.get(), dense_->data(), size);
    ASSERT_TRUE(
        SetHdf5ImageDriver(fapl_, absl::string_view(image.get(), size)).ok());
    EXPECT_LT(H5Fopen("image", H5F_ACC_RDONLY, fapl_), 0) << size;
    Hdf5Errors();
  }
}

TEST_F(ImageDriverTest, AnOpenWithoutAnImageIsRefused) {
  // A file access list with the driver but no image, as an external link's
  // target would get from a copy of the properties without driver info.
  ASSERT_GE(H5Pset_driver(fapl_, Hdf5ImageDriver(), nullptr), 0);
  EXPECT_LT(H5Fopen("image", H5F_ACC_RDONLY, fapl_), 0);
  EXPECT_TRUE(absl::StrContains(Hdf5Errors(), "no file image"));
}

}  // namespace
}  // namespace graphgc
