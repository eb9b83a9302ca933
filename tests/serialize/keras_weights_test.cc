#include "serialize/keras_weights.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "hdf5.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/temp_path.h"

// Debian's HDF5 1.10.8 leaks a few hundred bytes on some error paths of a
// corrupt image (inside libhdf5, nothing graphgc holds): LeakSanitizer
// leaves those to HDF5 and still checks everything else.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libhdf5_serial.so\n";
}

namespace graphgc {
namespace {

Tensor Floats(TensorShape shape, float start) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + 0.25f * i;
  return Tensor::FromData<float>(shape, v).value();
}

// Writes `bytes` to a temporary file named for `name` and opens it with
// HDF5 (read-only); a negative id if it cannot.
hid_t OpenAsFile(const std::string& bytes, const std::string& name) {
  const std::string path = TestTempPath("_" + name);
  WriteFileBytes(path, bytes);
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

// Options that list the layer groups into `*seen` and return `status`.
KerasWeightsDecodeOptions ListInto(KerasWeightsLayers* seen, uint64_t max_names,
                                   absl::Status status = absl::OkStatus()) {
  return {.check_layers =
              [seen, status](const KerasWeightsLayers& layers) {
                *seen = layers;
                return status;
              },
          .max_layer_names = max_names};
}

TEST(KerasWeights, ReportsTheLayerGroupsItFindsInNameOrder) {
  std::vector<LayerWeights> layers = TwoDenseLayers();
  layers.push_back({.path = "layers/flatten"});
  const std::string bytes = EncodeKerasWeights(layers).value();
  KerasWeightsLayers seen;
  ASSERT_TRUE(
      DecodeKerasWeights(bytes, TwoDenseSpecs(), "w.h5", ListInto(&seen, 8))
          .ok());
  EXPECT_EQ(seen.count, 3u);
  EXPECT_EQ(seen.names,
            (std::vector<std::string>{"dense", "dense_1", "flatten"}));
}

TEST(KerasWeights, ReportsAtMostMaxLayerNamesButCountsEveryGroup) {
  const std::string bytes = EncodeKerasWeights(TwoDenseLayers()).value();
  KerasWeightsLayers seen;
  ASSERT_TRUE(
      DecodeKerasWeights(bytes, TwoDenseSpecs(), "w.h5", ListInto(&seen, 1))
          .ok());
  EXPECT_EQ(seen.count, 2u);
  EXPECT_EQ(seen.names, (std::vector<std::string>{"dense"}));
}

TEST(KerasWeights, ReportsNoLayerGroupsForAFileWithoutLayers) {
  const std::string bytes = EncodeKerasWeights({}).value();
  KerasWeightsLayers seen{.count = 7, .names = {"stale"}};
  ASSERT_TRUE(DecodeKerasWeights(bytes, {}, "w.h5", ListInto(&seen, 8)).ok());
  EXPECT_EQ(seen.count, 0u);
  EXPECT_TRUE(seen.names.empty());
}

TEST(KerasWeights, ALayerCheckThatRefusesIsReturnedBeforeAnyWeightIsRead) {
  const std::string bytes = EncodeKerasWeights(TwoDenseLayers()).value();
  std::vector<LayerWeightsSpec> specs = TwoDenseSpecs();
  specs[0].shapes[0] = TensorShape({3, 5});  // reading would refuse this
  KerasWeightsLayers seen;
  const absl::Status s =
      DecodeKerasWeights(bytes, specs, "w.h5",
                         ListInto(&seen, 8, absl::InvalidArgumentError("mine")))
          .status();
  EXPECT_EQ(s, absl::InvalidArgumentError("mine"));
  EXPECT_EQ(seen.count, 2u);
}

// The image of an HDF5 file `build` fills in memory (core driver, no
// backing store: nothing is written to disk).
std::string InMemoryImage(const std::function<void(hid_t)>& build) {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_core(fapl, size_t{1} << 16, /*backing_store=*/0);
  // The core driver checks that no file of that name exists: none can in
  // /proc/self.
  const hid_t file = H5Fcreate("/proc/self/keras_weights_test_image",
                               H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  build(file);
  H5Fflush(file, H5F_SCOPE_GLOBAL);
  std::string bytes(static_cast<size_t>(std::max<ssize_t>(
                        H5Fget_file_image(file, nullptr, 0), 0)),
                    '\0');
  H5Fget_file_image(file, bytes.data(), bytes.size());
  H5Fclose(file);
  H5Pclose(fapl);
  return bytes;
}

TEST(KerasWeights, ListingRefusesALayersThatIsASoftLink) {
  const std::string bytes = InMemoryImage([](hid_t file) {
    H5Gclose(
        H5Gcreate2(file, "elsewhere", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Lcreate_soft("/elsewhere", file, "layers", H5P_DEFAULT, H5P_DEFAULT);
  });
  ASSERT_FALSE(bytes.empty());
  KerasWeightsLayers seen;
  const absl::Status s =
      DecodeKerasWeights(bytes, {}, "w.h5", ListInto(&seen, 8)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), "w.h5: ")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "'layers' is a soft")) << s;
  // Without the listing, nothing is read through "layers".
  EXPECT_TRUE(DecodeKerasWeights(bytes, {}, "w.h5").ok());
}

TEST(KerasWeights, ListingRefusesALayersThatIsNotAGroup) {
  const std::string bytes = InMemoryImage([](hid_t file) {
    const hsize_t dims[1] = {2};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    H5Dclose(H5Dcreate2(file, "layers", H5T_IEEE_F32LE, space, H5P_DEFAULT,
                        H5P_DEFAULT, H5P_DEFAULT));
    H5Sclose(space);
  });
  ASSERT_FALSE(bytes.empty());
  KerasWeightsLayers seen;
  const absl::Status s =
      DecodeKerasWeights(bytes, {}, "w.h5", ListInto(&seen, 8)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "'layers' is not a group")) << s;
}

// h5py writes float64 arrays as such; they are read as float32.
TEST(KerasWeights, Float64DatasetsAreReadAsFloat32) {
  const std::string path = TestTempPath("_float64.h5");
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
  const std::string bytes = ReadFileBytes(path);
  auto values = DecodeKerasWeights(
      bytes, {{.path = "layers/dense", .shapes = {{2}}}}, "w.h5");
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ((*values)[0][0].data<float>()[0], 0.5f);
  EXPECT_EQ((*values)[0][0].data<float>()[1], -2.0f);
}

TEST(KerasWeights, AnIntegerDatasetIsRefused) {
  const std::string path = TestTempPath("_int.h5");
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
  const std::string bytes = ReadFileBytes(path);
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

// ---------------------------------------------------------------------------
// Hostile files: each is built with HDF5 on disk, read back as bytes, and
// must be refused naming the file and the object, without its data (or any
// other file's) reaching the caller.

// Eight bytes that are two float32 values no test writes otherwise.
const std::string kMarker = "MARKER!!";

// An HDF5 file on disk whose "/data" is a float32 [2] dataset holding
// kMarker's bytes: what links and virtual datasets point at.
std::string MarkerHdf5File(const std::string& name) {
  const std::string path = TestTempPath("_" + name);
  const hid_t file =
      H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t dims[1] = {2};
  const hid_t space = H5Screate_simple(1, dims, nullptr);
  const hid_t ds = H5Dcreate2(file, "data", H5T_IEEE_F32LE, space, H5P_DEFAULT,
                              H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, kMarker.data());
  H5Dclose(ds);
  H5Sclose(space);
  H5Fclose(file);
  return path;
}

// The bytes of a weights file for OneWeightSpecs() whose group
// "layers/dense/vars" is made by `build(file, group)`: it adds "0".
std::string CraftedFile(const std::string& name,
                        const std::function<void(hid_t, hid_t)>& build) {
  const std::string path = TestTempPath("_" + name);
  const hid_t file =
      H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const hid_t group =
      H5Gcreate2(file, "layers/dense/vars", lcpl, H5P_DEFAULT, H5P_DEFAULT);
  build(file, group);
  H5Gclose(group);
  H5Pclose(lcpl);
  H5Fclose(file);
  return ReadFileBytes(path);
}

std::vector<LayerWeightsSpec> OneWeightSpecs() {
  return {{.path = "layers/dense", .shapes = {{2}}}};
}

// Creates dataset "0" (float32 [2], or `dims` with `maxdims`) in `group`
// with creation properties `dcpl`, writing `data` when given.
void CreateDataset(hid_t group, hid_t dcpl, const float* data,
                   std::vector<hsize_t> dims = {2},
                   std::vector<hsize_t> maxdims = {}) {
  const hid_t space =
      H5Screate_simple(static_cast<int>(dims.size()), dims.data(),
                       maxdims.empty() ? nullptr : maxdims.data());
  const hid_t ds = H5Dcreate2(group, "0", H5T_IEEE_F32LE, space, H5P_DEFAULT,
                              dcpl, H5P_DEFAULT);
  if (data != nullptr) {
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  }
  H5Dclose(ds);
  H5Sclose(space);
}

// A dataset "0" whose raw data is the external file `target`.
std::string ExternalStorageFile(const std::string& name,
                                const std::string& target) {
  return CraftedFile(name, [&](hid_t, hid_t group) {
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    ASSERT_GE(H5Pset_external(dcpl, target.c_str(), 0, 8), 0);
    CreateDataset(group, dcpl, nullptr);
    H5Pclose(dcpl);
  });
}

// `s` is the refusal `code`, names the file and `object`, and quotes
// nothing of kMarker.
void ExpectRefused(const absl::Status& s, absl::StatusCode code,
                   const std::string& object, const std::string& says) {
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), "hostile.h5: ")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), object)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), says)) << s;
  EXPECT_FALSE(absl::StrContains(s.message(), "MARKER")) << s;
}

absl::Status Decode(const std::string& bytes) {
  return DecodeKerasWeights(bytes, OneWeightSpecs(), "hostile.h5").status();
}

TEST(KerasWeights, ExternalStorageAtAnAbsolutePathIsRefused) {
  const std::string secret = TestTempPath("_secret_abs");
  WriteFileBytes(secret, kMarker);
  ExpectRefused(Decode(ExternalStorageFile("ext_abs.h5", secret)),
                absl::StatusCode::kInvalidArgument, "layers/dense/vars/0",
                "external files");
}

// HDF5 resolves a relative external file name against the working
// directory.
TEST(KerasWeights, ExternalStorageAtARelativePathIsRefused) {
  const std::string secret = TestTempPath("_secret_rel");
  WriteFileBytes(secret, kMarker);
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  std::string relative;
  for (const char* c = cwd; *c != '\0'; ++c) {
    if (*c == '/') relative += "../";
  }
  relative += secret.substr(1);
  ExpectRefused(Decode(ExternalStorageFile("ext_rel.h5", relative)),
                absl::StatusCode::kInvalidArgument, "layers/dense/vars/0",
                "external files");
}

// Reading a FIFO would block until a writer comes: refused before any read.
TEST(KerasWeights, ExternalStorageInAFifoIsRefusedWithoutOpeningIt) {
  const std::string fifo = TestTempPath("_fifo");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ExpectRefused(Decode(ExternalStorageFile("ext_fifo.h5", fifo)),
                absl::StatusCode::kInvalidArgument, "layers/dense/vars/0",
                "external files");
}

TEST(KerasWeights, ASoftLinkToADatasetIsRefused) {
  const float data[2] = {1, 2};
  const std::string bytes = CraftedFile("soft.h5", [&](hid_t file,
                                                       hid_t group) {
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const hid_t hidden =
        H5Gcreate2(file, "hidden", lcpl, H5P_DEFAULT, H5P_DEFAULT);
    CreateDataset(hidden, H5P_DEFAULT, data);
    H5Gclose(hidden);
    H5Pclose(lcpl);
    ASSERT_GE(H5Lcreate_soft("/hidden/0", group, "0", H5P_DEFAULT, H5P_DEFAULT),
              0);
  });
  ExpectRefused(Decode(bytes), absl::StatusCode::kInvalidArgument,
                "layers/dense/vars/0", "soft link");
}

TEST(KerasWeights, ASoftLinkOnTheWayToTheGroupIsRefused) {
  const float data[2] = {1, 2};
  const std::string path = TestTempPath("_soft_group.h5");
  const hid_t file =
      H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const hid_t group =
      H5Gcreate2(file, "elsewhere/vars", lcpl, H5P_DEFAULT, H5P_DEFAULT);
  CreateDataset(group, H5P_DEFAULT, data);
  H5Gclose(group);
  H5Gclose(H5Gcreate2(file, "layers", lcpl, H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_GE(
      H5Lcreate_soft("/elsewhere", file, "layers/dense", lcpl, H5P_DEFAULT), 0);
  H5Pclose(lcpl);
  H5Fclose(file);
  ExpectRefused(Decode(ReadFileBytes(path)), absl::StatusCode::kInvalidArgument,
                "'layers/dense'", "soft link");
}

TEST(KerasWeights, AnExternalLinkToAnotherFileIsRefused) {
  const std::string other = MarkerHdf5File("elink_target.h5");
  const std::string bytes = CraftedFile("elink.h5", [&](hid_t, hid_t group) {
    ASSERT_GE(H5Lcreate_external(other.c_str(), "/data", group, "0",
                                 H5P_DEFAULT, H5P_DEFAULT),
              0);
  });
  ExpectRefused(Decode(bytes), absl::StatusCode::kInvalidArgument,
                "layers/dense/vars/0", "external link");
}

TEST(KerasWeights, AVirtualDatasetIsRefused) {
  const std::string other = MarkerHdf5File("vds_source.h5");
  const std::string bytes = CraftedFile("vds.h5", [&](hid_t, hid_t group) {
    const hsize_t dims[1] = {2};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    ASSERT_GE(H5Pset_virtual(dcpl, space, other.c_str(), "/data", space), 0);
    CreateDataset(group, dcpl, nullptr);
    H5Pclose(dcpl);
    H5Sclose(space);
  });
  ExpectRefused(Decode(bytes), absl::StatusCode::kInvalidArgument,
                "layers/dense/vars/0", "virtual dataset");
}

// A filter id HDF5 does not know, marked optional: HDF5 writes the data
// unfiltered and would read it back.
TEST(KerasWeights, AnUnknownFilterIsRefused) {
  const float data[2] = {1, 2};
  const std::string bytes = CraftedFile("filter.h5", [&](hid_t, hid_t group) {
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t chunk[1] = {2};
    H5Pset_chunk(dcpl, 1, chunk);
    ASSERT_GE(H5Pset_filter(dcpl, 32000, H5Z_FLAG_OPTIONAL, 0, nullptr), 0);
    CreateDataset(group, dcpl, data);
    H5Pclose(dcpl);
  });
  ExpectRefused(Decode(bytes), absl::StatusCode::kInvalidArgument,
                "layers/dense/vars/0", "filter 32000");
}

// A small dataset whose one compressed chunk inflates to 4 MiB.
TEST(KerasWeights, ACompressedChunkIsRefused) {
  const std::vector<float> data(1 << 20, 0.f);
  const std::string bytes = CraftedFile("deflate.h5", [&](hid_t, hid_t group) {
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t chunk[1] = {1 << 20};
    H5Pset_chunk(dcpl, 1, chunk);
    H5Pset_deflate(dcpl, 9);
    CreateDataset(group, dcpl, data.data(), {2}, {H5S_UNLIMITED});
    H5Pclose(dcpl);
  });
  ASSERT_LT(bytes.size(), 64u << 10);
  ExpectRefused(Decode(bytes), absl::StatusCode::kInvalidArgument,
                "layers/dense/vars/0", "filter 1");
}

TEST(KerasWeights, AChunkLargerThanItsDatasetIsResourceExhausted) {
  const std::vector<float> data(1 << 19, 0.f);
  const std::string bytes =
      CraftedFile("big_chunk.h5", [&](hid_t, hid_t group) {
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        const hsize_t chunk[1] = {1 << 19};
        H5Pset_chunk(dcpl, 1, chunk);
        CreateDataset(group, dcpl, data.data(), {2}, {H5S_UNLIMITED});
        H5Pclose(dcpl);
      });
  ExpectRefused(Decode(bytes), absl::StatusCode::kResourceExhausted,
                "layers/dense/vars/0", "budget");
}

// Chunked datasets as h5py writes them (shuffle, Fletcher-32) are read.
TEST(KerasWeights, ShuffledChunksWithChecksumsAreRead) {
  const float data[6] = {1, 2, 3, 4, 5, 6};
  const std::string bytes = CraftedFile("fletcher.h5", [&](hid_t, hid_t group) {
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t chunk[2] = {2, 1};
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_fletcher32(dcpl);
    CreateDataset(group, dcpl, data, {3, 2});
    H5Pclose(dcpl);
  });
  auto values = DecodeKerasWeights(
      bytes, {{.path = "layers/dense", .shapes = {{3, 2}}}}, "w.h5");
  ASSERT_TRUE(values.ok()) << values.status();
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ((*values)[0][0].data<float>()[i], data[i]);
  }
}

// A dataset created but never written reads as fill values: its storage
// is missing, which is what a file whose declared sizes are far larger
// than its bytes looks like.
TEST(KerasWeights, ADatasetWithoutStoredDataIsRefused) {
  const std::string bytes = CraftedFile(
      "unwritten.h5",
      [&](hid_t, hid_t group) { CreateDataset(group, H5P_DEFAULT, nullptr); });
  ExpectRefused(Decode(bytes), absl::StatusCode::kDataLoss,
                "layers/dense/vars/0", "stores 0 bytes");
}

// A 256 MiB dataset that was never written: the file is a few KiB, and
// reading it would allocate the tensor and fill it with fill values.
TEST(KerasWeights, WeightsLargerThanTheFileAreResourceExhaustedBeforeReading) {
  const std::string bytes = CraftedFile("sparse.h5", [&](hid_t, hid_t group) {
    CreateDataset(group, H5P_DEFAULT, nullptr, {1 << 16, 1024});
  });
  ASSERT_LT(bytes.size(), 64u << 10);
  const absl::Status s =
      DecodeKerasWeights(
          bytes, {{.path = "layers/dense", .shapes = {{1 << 16, 1024}}}},
          "hostile.h5")
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), "hostile.h5: ")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "budget")) << s;
}

// A float type of 16 bytes would make HDF5 convert elements of that size
// (a corrupted size field asks for gigabytes).
TEST(KerasWeights, AFloatOfAnotherSizeIsRefused) {
  const std::string bytes = CraftedFile("f128.h5", [&](hid_t, hid_t group) {
    const hid_t type = H5Tcopy(H5T_IEEE_F64LE);
    ASSERT_GE(H5Tset_size(type, 16), 0);
    const hsize_t dims[1] = {2};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t ds = H5Dcreate2(group, "0", type, space, H5P_DEFAULT,
                                H5P_DEFAULT, H5P_DEFAULT);
    const double data[2] = {1, 2};
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
    H5Sclose(space);
    H5Tclose(type);
  });
  ExpectRefused(Decode(bytes), absl::StatusCode::kInvalidArgument,
                "layers/dense/vars/0", "16 bytes");
}

// Byte ranges of `bytes` (an HDF5 image) holding the raw data of
// `datasets`.
std::vector<std::pair<size_t, size_t>> RawDataRanges(
    const std::string& bytes, const std::vector<std::string>& datasets) {
  const std::string path = TestTempPath("_ranges.h5");
  WriteFileBytes(path, bytes);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  std::vector<std::pair<size_t, size_t>> out;
  for (const std::string& name : datasets) {
    const hid_t ds = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
    const haddr_t at = H5Dget_offset(ds);
    out.emplace_back(at, at + H5Dget_storage_size(ds));
    H5Dclose(ds);
  }
  H5Fclose(file);
  return out;
}

// Every 4-byte overwrite of a real file either is refused, or decodes to
// the spec's shapes with values that differ from the saved ones only when
// the overwrite hit raw data (HDF5 keeps no checksum of it).
TEST(KerasWeights, ACorruptedFileIsRefusedOrDecodesOnlyRawDataChanges) {
  const std::vector<LayerWeights> layers = TwoDenseLayers();
  const std::string bytes = EncodeKerasWeights(layers).value();
  const auto raw = RawDataRanges(
      bytes,
      {"layers/dense/vars/0", "layers/dense/vars/1", "layers/dense_1/vars/0"});
  const std::vector<LayerWeightsSpec> specs = TwoDenseSpecs();
  int refused = 0;
  // Every fourth offset (few enough to stay quick under ASan), each with
  // one of three values: large, huge and all ones, as a corrupted size or
  // address would be.
  const uint32_t kValues[] = {0x40000000u, 0x7fffffffu, 0xffffffffu};
  for (size_t at = 0; at + 4 <= bytes.size(); at += 4) {
    {
      const uint32_t value = kValues[(at / 4) % 3];
      std::string corrupt = bytes;
      std::memcpy(corrupt.data() + at, &value, 4);
      auto values = DecodeKerasWeights(corrupt, specs, "w.h5");
      if (!values.ok()) {
        ++refused;
        EXPECT_TRUE(absl::StartsWith(values.status().message(), "w.h5: "))
            << at << ": " << values.status();
        continue;
      }
      bool in_raw = false;
      for (const auto& [begin, end] : raw) {
        in_raw = in_raw || (at < end && at + 4 > begin);
      }
      ASSERT_EQ(values->size(), 2u);
      for (size_t l = 0; l < 2; ++l) {
        ASSERT_EQ((*values)[l].size(), specs[l].shapes.size());
        for (size_t i = 0; i < specs[l].shapes.size(); ++i) {
          ASSERT_EQ((*values)[l][i].shape(), specs[l].shapes[i]) << at;
          if (!in_raw) {
            EXPECT_TRUE(SameBits((*values)[l][i], layers[l].values[i]))
                << "overwrite at " << at << " with " << value
                << " changed layer " << l << " weight " << i;
          }
        }
      }
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace graphgc
