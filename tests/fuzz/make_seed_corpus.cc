// tests/fuzz/make_seed_corpus.cc
//
// Writes the seed corpora of tests/fuzz/corpus/ with graphgc's own code:
//   graph_def/   DeterministicBytes of ExportGraphDef of small graphs
//                (a dense layer with softmax and cross-entropy, its
//                gradients, integer/bool constants, reshapes and casts)
//   event_file/  an events file written by EventFileWriter (raw mode, first
//                byte 0), the same with a torn tail, and framed-mode inputs
//                (first byte 1) of serialized events
//   tensor/      encoded shapes and data for tensor_fuzzer.cc's layout
//   reshape_reduce/  encoded graphs and feeds for reshape_reduce_fuzzer.cc's
//                layout (a Reshape to a fed shape, then Sum, Mean or ArgMax)
//   kernel/      encoded ops, attributes, shapes and feeds for
//                kernel_fuzzer.cc's layout: one valid run of each op
//   keras_weights/  model.weights.h5 images of KerasWeightsFuzzSpecs()'s
//                model: EncodeKerasWeights's, and HDF5-written variants
//                (chunked with shuffle and Fletcher-32, float64, compact)
// Usage: make_seed_corpus OUT_DIR   (OUT_DIR/<target>/ must not matter:
// files are overwritten by name). build_fuzzers.sh builds it; run it as
//   build-fuzz/make_seed_corpus tests/fuzz/corpus
// The events file's first event carries the current wall time, so its
// bytes change with each run; everything else is deterministic.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hdf5.h"
#include "ops/gradients.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"
#include "serialize/event.pb.h"
#include "serialize/event_file.h"
#include "serialize/graph_def.h"
#include "serialize/keras_weights.h"
#include "tests/fuzz/fuzz_util.h"

namespace graphgc {
namespace {

void WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

template <typename T>
T Must(absl::StatusOr<T> v) {
  if (!v.ok()) {
    std::fprintf(stderr, "make_seed_corpus: %s\n",
                 v.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(v);
}

std::string Bytes(absl::Span<const NodeHandle> roots) {
  return DeterministicBytes(Must(ExportGraphDef(roots)));
}

std::vector<std::pair<std::string, std::string>> GraphDefs() {
  std::vector<std::pair<std::string, std::string>> out;
  {  // A dense layer, softmax, cross-entropy, a control input.
    Graph g;
    Output x = Must(ops::Placeholder(g, DT_FLOAT, {-1, 3}, {.name = "x"}));
    Output labels =
        Must(ops::Placeholder(g, DT_INT32, {-1}, {.name = "labels"}));
    Output w =
        Must(ops::Const(g,
                        Must(Tensor::FromData<float>(
                            {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6})),
                        {.name = "dense/kernel"}));
    Output mm =
        Must(ops::MatMul(x, w, {.name = "dense/MatMul", .transpose_b = true}));
    Output var = Must(ops::VarHandleOp(g, DT_FLOAT, {2}, {.name = "bias"}));
    Output read = Must(ops::ReadVariableOp(var, {.name = "bias/read"}));
    Output biased = Must(ops::BiasAdd(mm, read, {.name = "dense/BiasAdd"}));
    Output relu = Must(ops::Relu(biased, {.name = "dense/Relu"}));
    Output softmax = Must(ops::Softmax(relu, {.name = "softmax"}));
    Output init = Must(ops::NoOp(g, {.name = "init"}));
    Output total = Must(ops::Sum(softmax, {.name = "total",
                                           .control_inputs = {init.handle()},
                                           .axes = {1},
                                           .keep_dims = true}));
    ops::SoftmaxCrossEntropyOutputs xent =
        Must(ops::SparseSoftmaxCrossEntropyWithLogits(relu, labels,
                                                      {.name = "xent"}));
    Output loss = Must(ops::Mean(xent.loss, {.name = "loss"}));
    out.emplace_back("dense_model",
                     Bytes({total.handle(), xent.backprop.handle()}));
    // Its gradients with respect to the kernel.
    std::vector<Output> grads = Must(AddGradients(loss, {w}));
    out.emplace_back("dense_gradients", Bytes({grads[0].handle()}));
  }
  {  // Integer and bool constants, shape ops, casts, comparisons.
    Graph g;
    Output a = Must(ops::Const(g,
                               Must(Tensor::FromData<int32_t>(
                                   {2, 2}, std::vector<int32_t>{1, -2, 3, 4})),
                               {.name = "a"}));
    Output b =
        Must(ops::Const(g,
                        Must(Tensor::FromData<int64_t>(
                            {4}, std::vector<int64_t>{7, 0, -1, 1 << 30})),
                        {.name = "b"}));
    const bool flag_values[3] = {true, false, true};
    Output flags = Must(ops::Const(
        g, Must(Tensor::FromData<bool>({3}, absl::MakeConstSpan(flag_values))),
        {.name = "flags"}));
    Output r = Must(ops::Reshape(a, {4}, {.name = "reshape"}));
    Output c = Must(ops::Cast(r, DT_INT64, {.name = "cast"}));
    Output sum = Must(ops::AddV2(c, b, {.name = "sum"}));
    Output eq = Must(ops::Equal(sum, b, {.name = "eq"}));
    Output shape = Must(ops::Shape(a, {.name = "shape"}));
    Output f = Must(ops::Cast(a, DT_FLOAT, {.name = "f"}));
    Output t = Must(ops::Transpose(f, {1, 0}, {.name = "transpose"}));
    Output sq = Must(ops::Square(t, {.name = "square"}));
    out.emplace_back("int_ops", Bytes({eq.handle(), shape.handle(), sq.handle(),
                                       flags.handle()}));
  }
  {  // A single scalar constant; an empty GraphDef.
    Graph g;
    Output two = Must(ops::Const(g, 2.0f, {.name = "two"}));
    out.emplace_back("scalar_const", Bytes({two.handle()}));
    out.emplace_back("empty", Bytes({}));
  }
  return out;
}

std::string EventFileBytes(const std::string& graph_def_bytes) {
  char tmpl[] = "/tmp/make_seed_corpus.XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) std::exit(1);
  ::close(fd);
  {
    std::unique_ptr<EventFileWriter> w =
        Must(EventFileWriter::CreateAtPathForTesting(tmpl));
    proto::GraphDef def;
    def.ParseFromString(graph_def_bytes);
    if (!w->WriteGraph(def).ok() || !w->WriteScalar("loss", 1, 0.5f).ok() ||
        !w->WriteScalar("loss", 2, 0.25f).ok() ||
        !w->WriteScalar("accuracy", 2, 0.75f).ok() || !w->Close().ok()) {
      std::exit(1);
    }
  }
  std::ifstream in(tmpl, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  ::unlink(tmpl);
  return bytes;
}

std::string ScalarEvent(const std::string& tag, int64_t step, float value) {
  proto::Event e;
  e.set_wall_time(1700000000.0 + step);
  e.set_step(step);
  auto* v = e.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(value);
  return e.SerializeAsString();
}

// tensor_fuzzer.cc layout: mode byte, rank byte, dim tags, element bytes.
std::string EncodedTensor(uint8_t mode, const std::vector<uint8_t>& dim_tags,
                          const std::string& data) {
  std::string s;
  s.push_back(static_cast<char>(mode));
  s.push_back(static_cast<char>(dim_tags.size()));
  for (uint8_t t : dim_tags) s.push_back(static_cast<char>(t));
  return s + data;
}

template <typename T>
std::string RawData(const Tensor& t) {
  absl::Span<const T> d = t.data<T>();
  return std::string(reinterpret_cast<const char*>(d.data()),
                     d.size() * sizeof(T));
}

// reshape_reduce_fuzzer.cc layout: mode byte, counts byte, one tag byte per
// shape dimension (small sizes only here), one byte per axis, x's bytes.
std::string EncodedReshapeReduce(uint8_t mode, int elements,
                                 const std::vector<uint8_t>& dims,
                                 const std::vector<int8_t>& axes,
                                 const std::string& x) {
  std::string s;
  s.push_back(static_cast<char>(mode));
  s.push_back(static_cast<char>(elements | (dims.size() << 3) |
                                ((axes.size() & 3) << 6)));
  for (uint8_t d : dims) s.push_back(static_cast<char>(d));
  for (int8_t a : axes) s.push_back(static_cast<char>(a));
  return s + x;
}

// kernel_fuzzer.cc layout: op index, mode byte, attribute byte, per input
// its rank and dimension bytes, then the elements.
std::string EncodedKernel(uint8_t op, uint8_t mode, uint8_t attr,
                          const std::vector<std::vector<uint8_t>>& shapes,
                          const std::string& values) {
  std::string s;
  s.push_back(static_cast<char>(op));
  s.push_back(static_cast<char>(mode));
  s.push_back(static_cast<char>(attr));
  for (const std::vector<uint8_t>& dims : shapes) {
    s.push_back(static_cast<char>(dims.size()));
    for (uint8_t d : dims) s.push_back(static_cast<char>(d));
  }
  return s + values;
}

// One valid run of each of kernel_fuzzer.cc's ops (indices into its table,
// in its order), named after the op.
void WriteKernelSeeds(const std::filesystem::path& dir) {
  std::vector<float> pattern;
  for (int k = 0; k < 48; ++k) pattern.push_back(0.25f * ((k * 7) % 11) - 1);
  const std::string floats(reinterpret_cast<const char*>(pattern.data()),
                           pattern.size() * sizeof(float));
  auto ints = [](std::vector<int8_t> v) {
    return std::string(v.begin(), v.end());
  };
  const std::vector<uint8_t> m22 = {2, 2};
  const std::vector<uint8_t> image = {1, 4, 4, 1};
  const std::vector<uint8_t> pooled = {1, 2, 2, 1};
  constexpr uint8_t kStatic = 0x04;  // placeholders carry the fed shapes
  struct Seed {
    const char* name;
    uint8_t mode;
    uint8_t attr;
    std::vector<std::vector<uint8_t>> shapes;
    std::string values;
  };
  const std::vector<Seed> seeds = {
      {"AddV2", 0x01, 0, {m22, {2}}, floats},
      {"Sub", 0x02, 0, {m22, m22}, floats},
      {"Mul", 0x01 | kStatic, 0, {m22, {}}, floats},
      {"Maximum", 0, 0, {m22, {2, 1}}, floats},
      {"Minimum", 0x02, 0, {{1, 2}, {2, 1}}, floats},
      {"Greater", 0x01, 0, {m22, m22}, floats},
      {"LessEqual", 0, 0, {m22, m22}, floats},
      {"Equal", 0x02, 0, {{3}, {3}}, floats},
      {"RealDiv", 0, 0, {m22, m22}, floats},
      {"AddN", 0x01, 0, {m22, m22, m22}, floats},
      {"Neg", 0x01, 0, {m22}, floats},
      {"Square", 0x02, 0, {m22}, floats},
      {"Sqrt", 0, 0, {m22}, floats},
      {"Exp", 0, 0, {m22}, floats},
      {"Log", 0, 0, {m22}, floats},
      {"Sigmoid", 0, 0, {m22}, floats},
      {"Tanh", 0, 0, {m22}, floats},
      {"Relu", 0, 0, {m22}, floats},
      {"ReluGrad", 0, 0, {m22, m22}, floats},
      {"Softmax", kStatic, 0, {{2, 3}}, floats},
      {"LogSoftmax", 0, 0, {{2, 3}}, floats},
      {"Cast", 0, 0x01, {m22}, floats},
      {"ZerosLike", 0x02, 0, {m22}, floats},
      {"BiasAdd", 0, 0, {{2, 3}, {3}}, floats},
      {"MatMul", kStatic, 0x02, {{2, 3}, {2, 3}}, floats},
      {"SparseSoftmaxCrossEntropyWithLogits",
       0,
       0,
       {{2, 3}, {2}},
       floats.substr(0, 24) + ints({0, 2})},
      {"Conv2D", kStatic, 0x01, {image, {2, 2, 1, 2}}, floats},
      {"Conv2DBackpropInput",
       0,
       0x01,
       {{4}, {2, 2, 1, 2}, {1, 2, 2, 2}},
       ints({1, 4, 4, 1}) + floats},
      {"Conv2DBackpropFilter",
       0,
       0x01,
       {image, {4}, {1, 2, 2, 2}},
       floats.substr(0, 64) + ints({2, 2, 1, 2}) + floats},
      {"MaxPool", kStatic, 0x05, {image}, floats},
      {"MaxPoolGrad", 0, 0x05, {image, pooled, pooled}, floats},
      {"FusedBatchNormV3", 0, 0x04, {{1, 2, 2, 3}, {3}, {3}, {3}, {3}}, floats},
      {"FusedBatchNormGradV3",
       0,
       0x04,
       {{1, 2, 2, 3}, {1, 2, 2, 3}, {3}, {3}, {3}, {0}},
       floats},
      {"Transpose", 0, 0, {{2, 3}, {2}}, floats.substr(0, 24) + ints({1, 0})},
      {"Fill",
       0x01 | kStatic,
       0,
       {{2}, {}},
       ints({2, 3}) + std::string("\x07\0\0\0", 4)},
      {"BroadcastGradientArgs", 0, 0, {{2}, {1}}, ints({2, 3, 3})},
      {"ConcatV2",
       kStatic,
       0,
       {m22, {2, 1}, {}},
       floats.substr(0, 24) + ints({1})},
      {"Slice",
       kStatic,
       0,
       {{2, 3}, {2}, {2}},
       floats.substr(0, 24) + ints({0, 1, -1, 2})},
      {"GatherV2",
       kStatic,
       0,
       {{3, 2}, {2}, {}},
       floats.substr(0, 24) + ints({2, 0}) + ints({0})},
      {"UnsortedSegmentSum",
       kStatic,
       0,
       {{3, 2}, {3}, {}},
       floats.substr(0, 24) + ints({1, 0, 1}) + ints({2})},
      {"AvgPool", kStatic, 0x05, {image}, floats},
      {"AvgPoolGrad", 0, 0x05, {{4}, pooled}, ints({1, 4, 4, 1}) + floats},
      {"Pad",
       kStatic,
       0,
       {{2, 3}, {2, 2}},
       floats.substr(0, 24) + ints({1, 0, 0, 2})},
  };
  for (size_t k = 0; k < seeds.size(); ++k) {
    const Seed& seed = seeds[k];
    WriteFile(dir / seed.name,
              EncodedKernel(static_cast<uint8_t>(k), seed.mode, seed.attr,
                            seed.shapes, seed.values));
  }
}

}  // namespace
}  // namespace graphgc

namespace graphgc {

// The image of a weights file for KerasWeightsFuzzSpecs() written by HDF5
// with dataset creation properties from `dcpl` (per dataset) and type
// `type`, in memory (core driver, no file on disk).
std::string Hdf5WeightsImage(hid_t (*dcpl_for)(const std::vector<hsize_t>&),
                             hid_t type) {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_core(fapl, size_t{1} << 16, 0);
  const hid_t file = H5Fcreate("/proc/self/graphgc-seed-image", H5F_ACC_TRUNC,
                               H5P_DEFAULT, fapl);
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  H5Gclose(H5Gcreate2(file, "vars", lcpl, H5P_DEFAULT, H5P_DEFAULT));
  float next = 0.5f;
  for (const LayerWeightsSpec& spec : fuzz::KerasWeightsFuzzSpecs()) {
    const hid_t group = H5Gcreate2(file, (spec.path + "/vars").c_str(), lcpl,
                                   H5P_DEFAULT, H5P_DEFAULT);
    for (size_t i = 0; i < spec.shapes.size(); ++i) {
      const auto dims = spec.shapes[i].dim_sizes();
      std::vector<hsize_t> hdims(dims.begin(), dims.end());
      std::vector<float> data(spec.shapes[i].num_elements());
      for (float& v : data) v = next += 0.25f;
      const hid_t space = H5Screate_simple(static_cast<int>(hdims.size()),
                                           hdims.data(), nullptr);
      const hid_t dcpl = dcpl_for(hdims);
      const hid_t ds = H5Dcreate2(group, std::to_string(i).c_str(), type, space,
                                  H5P_DEFAULT, dcpl, H5P_DEFAULT);
      H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
               data.data());
      H5Dclose(ds);
      H5Pclose(dcpl);
      H5Sclose(space);
    }
    H5Gclose(group);
  }
  H5Fflush(file, H5F_SCOPE_GLOBAL);
  std::string bytes(static_cast<size_t>(H5Fget_file_image(file, nullptr, 0)),
                    '\0');
  H5Fget_file_image(file, bytes.data(), bytes.size());
  H5Pclose(lcpl);
  H5Fclose(file);
  H5Pclose(fapl);
  return bytes;
}

void WriteKerasWeightsSeeds(const std::filesystem::path& dir) {
  std::vector<LayerWeights> layers;
  float next = 1.f;
  for (const LayerWeightsSpec& spec : fuzz::KerasWeightsFuzzSpecs()) {
    LayerWeights layer{.path = spec.path, .values = {}};
    for (const TensorShape& shape : spec.shapes) {
      std::vector<float> v(static_cast<size_t>(shape.num_elements()));
      for (float& x : v) x = next *= -1.5f;
      layer.values.push_back(Must(Tensor::FromData<float>(shape, v)));
    }
    layers.push_back(std::move(layer));
  }
  WriteFile(dir / "encoded", Must(EncodeKerasWeights(layers)));
  WriteFile(dir / "chunked_shuffle_fletcher32",
            Hdf5WeightsImage(
                [](const std::vector<hsize_t>& dims) {
                  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
                  std::vector<hsize_t> chunk(dims.size(), 1);
                  H5Pset_chunk(dcpl, static_cast<int>(chunk.size()),
                               chunk.data());
                  H5Pset_shuffle(dcpl);
                  H5Pset_fletcher32(dcpl);
                  return dcpl;
                },
                H5T_IEEE_F32LE));
  WriteFile(dir / "float64_compact", Hdf5WeightsImage(
                                         [](const std::vector<hsize_t>&) {
                                           const hid_t dcpl =
                                               H5Pcreate(H5P_DATASET_CREATE);
                                           H5Pset_layout(dcpl, H5D_COMPACT);
                                           return dcpl;
                                         },
                                         H5T_IEEE_F64BE));
}

}  // namespace graphgc

int main(int argc, char** argv) {
  using namespace graphgc;  // NOLINT
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  for (const char* d : {"graph_def", "event_file", "tensor", "reshape_reduce",
                        "kernel", "keras_weights"}) {
    std::filesystem::create_directories(root / d);
  }

  std::vector<std::pair<std::string, std::string>> defs = GraphDefs();
  for (const auto& [name, bytes] : defs) {
    WriteFile(root / "graph_def" / name, bytes);
  }

  const std::string events = EventFileBytes(defs[0].second);
  WriteFile(root / "event_file" / "events_raw", std::string(1, '\0') + events);
  WriteFile(root / "event_file" / "events_torn",
            std::string(1, '\0') + events.substr(0, events.size() - 5));
  WriteFile(root / "event_file" / "framed_scalars",
            std::string(1, '\1') + ScalarEvent("loss", 1, 0.5f) + "\n--\n" +
                ScalarEvent("loss", 2, 0.25f));
  {
    proto::Event e;
    e.set_wall_time(1700000000.0);
    e.set_file_version(kEventFileVersion);
    WriteFile(root / "event_file" / "framed_version_torn",
              std::string(1, '\x07') + e.SerializeAsString());
  }

  // Tensors: data from tensors the project built.
  Tensor f = Must(Tensor::FromData<float>(
      {2, 3}, std::vector<float>{1.5f, -2, 0, 3.25f, 1e30f, -1e-30f}));
  Tensor i = Must(
      Tensor::FromData<int32_t>({4}, std::vector<int32_t>{1, -1, 1 << 30, 0}));
  Tensor l = Must(Tensor::FromData<int64_t>(
      {2, 1}, std::vector<int64_t>{int64_t{1} << 40, -7}));
  WriteFile(root / "tensor" / "float_2x3",
            EncodedTensor(0, {2, 3}, RawData<float>(f)));
  WriteFile(root / "tensor" / "int32_4_fit",
            EncodedTensor(1 | 4, {4}, RawData<int32_t>(i)));
  WriteFile(root / "tensor" / "int64_2x1",
            EncodedTensor(2, {2, 1}, RawData<int64_t>(l)));
  WriteFile(root / "tensor" / "bool_scalar", EncodedTensor(3, {}, "\x01"));
  // Special dims: -1 (tag 0x40), 0 (0x41), 2^62 (0x4a), raw INT64_MIN.
  WriteFile(root / "tensor" / "unknown_dim",
            EncodedTensor(0 | 4, {0x40, 3}, RawData<float>(f)));
  WriteFile(root / "tensor" / "zero_and_huge",
            EncodedTensor(1 | 4, {0x41, 0x4a, 0x4a}, ""));
  WriteFile(root / "tensor" / "raw_int64_min",
            EncodedTensor(
                2, {0x80},
                std::string("\0\0\0\0\0\0\0\x80", 8) + RawData<int64_t>(l)));

  // Reshape to a fed shape, then a reduction (mode bits: 0-1 dtype, 2-3
  // Sum/Mean/ArgMax/none, 4 fed axes, 5 keep_dims, 6 int32 shape, 7 int64
  // axes). Six floats of f as x.
  const std::filesystem::path rr = root / "reshape_reduce";
  const std::string x6 = RawData<float>(f);
  WriteFile(rr / "sum_2x3_axis1",
            EncodedReshapeReduce(0x00, 6, {2, 3}, {1}, x6));
  WriteFile(rr / "mean_fed_axes_keep_dims",
            EncodedReshapeReduce(0x04 | 0x10 | 0x20, 6, {3, 2}, {0}, x6));
  WriteFile(rr / "argmax_unknown_dim",
            EncodedReshapeReduce(0x08 | 0x40, 6, {7, 2}, {1}, x6));
  WriteFile(
      rr / "sum_int32_all_axes",
      EncodedReshapeReduce(0x01 | 0x80, 4, {2, 1, 2}, {}, RawData<int32_t>(i)));
  WriteFile(rr / "reshape_only_rank3",
            EncodedReshapeReduce(0x0c, 6, {1, 2, 3}, {}, x6));
  WriteFile(rr / "sum_empty_fed_axes_int64",
            EncodedReshapeReduce(0x02 | 0x10, 0, {2, 0, 1}, {-1, 0},
                                 RawData<int64_t>(l)));
  WriteKernelSeeds(root / "kernel");
  WriteKerasWeightsSeeds(root / "keras_weights");
  std::printf("seed corpus written to %s\n", root.c_str());
  return 0;
}
