#include "serialize/keras_weights.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hdf5.h"

namespace graphgc {
namespace {

Tensor Floats(TensorShape shape, float start) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + 0.25f * i;
  return Tensor::FromData<float>(shape, v).value();
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/keras_weights_", name);
}

// Writes `bytes` to a temporary file named for `name` and opens it with
// HDF5 (read-only); a negative id if it cannot.
hid_t OpenAsFile(const std::string& bytes, const std::string& name) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
}

std::vector<LayerWeights> TwoDenseLayers() {
  return {{.path = "layers/dense",
           .values = {Floats({3, 2}, 1.f), Floats({2}, -1.f)}},
          {.path = "layers/dense_1", .values = {Floats({2, 1}, 7.f)}}};
}

std::vector<LayerWeightsSpec> TwoDenseSpecs() {
  return {{.path = "layers/dense", .shapes = {{3, 2}, {2}}},
          {.path = "layers/dense_1", .shapes = {{2, 1}}}};
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.data<float>().data(), b.data<float>().data(),
                     a.num_elements() * sizeof(float)) == 0;
}

TEST(KerasWeights, EncodeThenDecodeGivesBackEveryValueBitForBit) {
  const std::vector<LayerWeights> layers = TwoDenseLayers();
  absl::StatusOr<std::string> bytes = EncodeKerasWeights(layers);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto values = DecodeKerasWeights(*bytes, TwoDenseSpecs(), "w.h5");
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_EQ(values->size(), 2u);
  ASSERT_EQ((*values)[0].size(), 2u);
  ASSERT_EQ((*values)[1].size(), 1u);
  EXPECT_TRUE(SameBits((*values)[0][0], layers[0].values[0]));
  EXPECT_TRUE(SameBits((*values)[0][1], layers[0].values[1]));
  EXPECT_TRUE(SameBits((*values)[1][0], layers[1].values[0]));
}

// What h5py sees: Keras 3's groups and float32 datasets.
TEST(KerasWeights, WritesKeras3sLayoutAsAnHdf5FileOnDisk) {
  absl::StatusOr<std::string> bytes = EncodeKerasWeights(TwoDenseLayers());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  const hid_t file = OpenAsFile(*bytes, "layout.h5");
  ASSERT_GE(file, 0);
  for (const char* link : {"vars", "layers", "layers/dense",
                           "layers/dense/vars", "layers/dense/vars/0",
                           "layers/dense/vars/1", "layers/dense_1/vars/0"}) {
    EXPECT_GT(H5Lexists(file, link, H5P_DEFAULT), 0) << link;
  }
  const hid_t ds = H5Dopen2(file, "layers/dense/vars/0", H5P_DEFAULT);
  ASSERT_GE(ds, 0);
  const hid_t type = H5Dget_type(ds);
  EXPECT_GT(H5Tequal(type, H5T_IEEE_F32LE), 0);
  const hid_t space = H5Dget_space(ds);
  hsize_t dims[2] = {0, 0};
  EXPECT_EQ(H5Sget_simple_extent_ndims(space), 2);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  EXPECT_EQ(dims[0], 3u);
  EXPECT_EQ(dims[1], 2u);
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(ds);
  H5Fclose(file);
}

// Saving the same weights at another time gives the same bytes: no
// dataset carries a modification or creation time.
TEST(KerasWeights, DatasetsCarryNoTimestamps) {
  absl::StatusOr<std::string> bytes = EncodeKerasWeights(TwoDenseLayers());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  const hid_t file = OpenAsFile(*bytes, "times.h5");
  ASSERT_GE(file, 0);
  for (const char* dataset : {"layers/dense/vars/0", "layers/dense/vars/1",
                              "layers/dense_1/vars/0"}) {
    H5O_info_t info;
    ASSERT_GE(
        H5Oget_info_by_name2(file, dataset, &info, H5O_INFO_TIME, H5P_DEFAULT),
        0)
        << dataset;
    EXPECT_EQ(info.mtime, 0) << dataset;
    EXPECT_EQ(info.ctime, 0) << dataset;
  }
  H5Fclose(file);
}

TEST(KerasWeights, ALayerWithoutWeightsGetsAnEmptyVarsGroup) {
  absl::StatusOr<std::string> bytes =
      EncodeKerasWeights({{.path = "layers/flatten", .values = {}}});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto values = DecodeKerasWeights(
      *bytes, {{.path = "layers/flatten", .shapes = {}}}, "w.h5");
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_TRUE((*values)[0].empty());
}

TEST(KerasWeights, EncodeRefusesANonFloatTensor) {
  const absl::Status s =
      EncodeKerasWeights(
          {{.path = "layers/dense",
            .values = {Tensor::FromData<int32_t>({1}, std::vector<int32_t>{1})
                           .value()}}})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "layers/dense/vars/0")) << s;
}

TEST(KerasWeights, EncodeRefusesADuplicatePath) {
  std::vector<LayerWeights> layers = TwoDenseLayers();
  layers[1].path = layers[0].path;
  EXPECT_EQ(EncodeKerasWeights(layers).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KerasWeights, TruncatedBytesAreDataLossNamingTheFile) {
  const std::string bytes = EncodeKerasWeights(TwoDenseLayers()).value();
  for (size_t keep : {bytes.size() / 2, size_t{100}, size_t{8}}) {
    const absl::Status s =
        DecodeKerasWeights(bytes.substr(0, keep), TwoDenseSpecs(), "dir/w.h5")
            .status();
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << keep << ": " << s;
    EXPECT_TRUE(absl::StartsWith(s.message(), "dir/w.h5: ")) << s;
  }
}

TEST(KerasWeights, BytesThatAreNotHdf5AreDataLoss) {
  const absl::Status s =
      DecodeKerasWeights(std::string(4096, 'x'), TwoDenseSpecs(), "w.h5")
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(s.message(), "not a valid HDF5 file")) << s;
}

TEST(KerasWeights, EmptyBytesAreDataLoss) {
  EXPECT_EQ(DecodeKerasWeights("", TwoDenseSpecs(), "w.h5").status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(KerasWeights, CorruptBytesPrintNothingToStderr) {
  std::string bytes = EncodeKerasWeights(TwoDenseLayers()).value();
  bytes.resize(bytes.size() / 2);
  testing::internal::CaptureStderr();
  const absl::Status s =
      DecodeKerasWeights(bytes, TwoDenseSpecs(), "w.h5").status();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(err, "");
}

TEST(KerasWeights, AShapeOtherThanTheSpecsIsRefusedNamingTheDataset) {
  const std::string bytes = EncodeKerasWeights(TwoDenseLayers()).value();
  std::vector<LayerWeightsSpec> specs = TwoDenseSpecs();
  specs[0].shapes[0] = TensorShape({3, 5});
  const absl::Status s = DecodeKerasWeights(bytes, specs, "w.h5").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "layers/dense/vars/0")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "[3, 2]")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "[3,5]") ||
              absl::StrContains(s.message(), "[3, 5]"))
      << s;
}

TEST(KerasWeights, ACountOtherThanTheSpecsIsRefused) {
  const std::string bytes = EncodeKerasWeights(TwoDenseLayers()).value();
  std::vector<LayerWeightsSpec> specs = TwoDenseSpecs();
  specs[1].shapes.push_back(TensorShape({1}));
  const absl::Status s = DecodeKerasWeights(bytes, specs, "w.h5").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "layers/dense_1/vars")) << s;
}

TEST(KerasWeights, AMissingGroupIsRefusedNamingIt) {
  const std::string bytes = EncodeKerasWeights(TwoDenseLayers()).value();
  std::vector<LayerWeightsSpec> specs = TwoDenseSpecs();
  specs.push_back({.path = "layers/dense_2", .shapes = {{1}}});
  const absl::Status s = DecodeKerasWeights(bytes, specs, "w.h5").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "layers/dense_2/vars")) << s;
}

// h5py writes float64 arrays as such; they are read as float32.
TEST(KerasWeights, Float64DatasetsAreReadAsFloat32) {
  const std::string path = TempPath("float64.h5");
  {
    const hid_t file =
        H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const hid_t group =
        H5Gcreate2(file, "layers/dense/vars", lcpl, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[1] = {2};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t ds = H5Dcreate2(group, "0", H5T_IEEE_F64LE, space, H5P_DEFAULT,
                                H5P_DEFAULT, H5P_DEFAULT);
    const double data[2] = {0.5, -2.0};
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
    H5Sclose(space);
    H5Gclose(group);
    H5Pclose(lcpl);
    H5Fclose(file);
  }
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  auto values = DecodeKerasWeights(
      bytes, {{.path = "layers/dense", .shapes = {{2}}}}, "w.h5");
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ((*values)[0][0].data<float>()[0], 0.5f);
  EXPECT_EQ((*values)[0][0].data<float>()[1], -2.0f);
}

TEST(KerasWeights, AnIntegerDatasetIsRefused) {
  const std::string path = TempPath("int.h5");
  {
    const hid_t file =
        H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const hid_t group =
        H5Gcreate2(file, "layers/dense/vars", lcpl, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[1] = {2};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t ds = H5Dcreate2(group, "0", H5T_STD_I32LE, space, H5P_DEFAULT,
                                H5P_DEFAULT, H5P_DEFAULT);
    const int data[2] = {1, 2};
    H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
    H5Sclose(space);
    H5Gclose(group);
    H5Pclose(lcpl);
    H5Fclose(file);
  }
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  const absl::Status s =
      DecodeKerasWeights(bytes, {{.path = "layers/dense", .shapes = {{2}}}},
                         "w.h5")
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "not floating point")) << s;
}

// Debian's HDF5 is not thread-safe: graphgc serialises its calls.
TEST(KerasWeights, ConcurrentEncodesAndDecodesAreSafe) {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 20; ++i) {
        absl::StatusOr<std::string> bytes =
            EncodeKerasWeights(TwoDenseLayers());
        if (!bytes.ok() ||
            !DecodeKerasWeights(*bytes, TwoDenseSpecs(), "w.h5").ok()) {
          ++failures[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

}  // namespace
}  // namespace graphgc
