// tests/fuzz/kernel_fuzzer.cc
//
// libFuzzer target for the kernels: bytes -> one op of a table (elementwise
// arithmetic and comparisons, AddN, unary math, Cast, BiasAdd, MatMul,
// softmax and cross-entropy, Conv2D and its backprops, MaxPool, AvgPool and
// their gradients, FusedBatchNormV3 and its gradient, Transpose, Fill,
// BroadcastGradientArgs, ConcatV2, Slice, Pad, GatherV2, UnsortedSegmentSum)
// with fuzzed attributes, fed by
// Placeholders of fuzzed shapes and values -> a GraphDef -> ImportGraphDef into
// a fresh Graph -> Session::Run of every output. Statuses are fine; a crash, a
// sanitizer report (signed overflow and float-to-int overflow included) or
// an output whose element count disagrees with its shape is not.
// Input layout:
//   byte 0: the op (index into kOps, modulo its size).
//   byte 1: bits 0-1 the dtype T where the op takes one (float, int32,
//           int64, float); bit 2: placeholders carry the fed shape (else
//           every dimension is unknown, so only the kernel checks it);
//           bit 3: labels and indices are int64 (else int32); bits 4-7 seed
//           the attributes below.
//   byte 2: the attribute byte (see Attrs()).
//   per input: one byte, its rank (mod 5); then per dimension one byte,
//           its size: < 0xf0 the byte mod 6, else one of 7, 16, 64, 300.
//   per input, in order: its elements. Float inputs take 4 bytes each;
//           int32/int64 "size" inputs (Conv2DBackpropInput's input_sizes,
//           Fill's dims, Transpose's perm, ConcatV2's axis, Slice's begin
//           and size, AvgPoolGrad's orig_input_shape, Pad's paddings,
//           GatherV2's axis, UnsortedSegmentSum's num_segments,
//           labels and ids) take one signed byte each
//           (small values, negative ones included); T-typed integer inputs
//           take sizeof(T) bytes each. Bytes are cycled over the rest of
//           the input when too few.
// Built and run by build_fuzzers.sh / run_fuzzers.sh like the other
// targets; its seeds come from make_seed_corpus.cc. With
// GRAPHGC_FUZZ_VERBOSE set, each input prints its op and the status it
// ended with (to check that the seeds reach the kernels).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "serialize/graph.pb.h"
#include "serialize/graph_def.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using graphgc::DataType;
using graphgc::Tensor;
using graphgc::fuzz::Reader;

// How an input's dtype is chosen: T, always float, a small int32 size
// vector, or labels/indices (int32 or int64 by byte 1's bit 3).
enum class In { kT, kFloat, kSizes, kLabels };

enum class AttrKind {
  kT,
  kFloatT,
  kAddN,
  kCast,
  kMatMul,
  kConv,
  kPool,
  kBatchNorm,
  kXent,
  kTranspose,
  kFill,
  kBroadcastArgs,
  kConcat,
  kSlice,
  kPad,
  kGather,
  kSegmentSum
};

struct OpSpec {
  const char* name;
  std::vector<In> inputs;
  AttrKind attrs;
  int outputs;
};

const std::vector<OpSpec>& Ops() {
  using enum In;
  static const auto* ops = new std::vector<OpSpec>{
      {"AddV2", {kT, kT}, AttrKind::kT, 1},
      {"Sub", {kT, kT}, AttrKind::kT, 1},
      {"Mul", {kT, kT}, AttrKind::kT, 1},
      {"Maximum", {kT, kT}, AttrKind::kT, 1},
      {"Minimum", {kT, kT}, AttrKind::kT, 1},
      {"Greater", {kT, kT}, AttrKind::kT, 1},
      {"LessEqual", {kT, kT}, AttrKind::kT, 1},
      {"Equal", {kT, kT}, AttrKind::kT, 1},
      {"RealDiv", {kFloat, kFloat}, AttrKind::kFloatT, 1},
      {"AddN", {kT, kT, kT}, AttrKind::kAddN, 1},
      {"Neg", {kT}, AttrKind::kT, 1},
      {"Square", {kT}, AttrKind::kT, 1},
      {"Sqrt", {kFloat}, AttrKind::kFloatT, 1},
      {"Exp", {kFloat}, AttrKind::kFloatT, 1},
      {"Log", {kFloat}, AttrKind::kFloatT, 1},
      {"Sigmoid", {kFloat}, AttrKind::kFloatT, 1},
      {"Tanh", {kFloat}, AttrKind::kFloatT, 1},
      {"Relu", {kFloat}, AttrKind::kFloatT, 1},
      {"ReluGrad", {kFloat, kFloat}, AttrKind::kFloatT, 1},
      {"Softmax", {kFloat}, AttrKind::kFloatT, 1},
      {"LogSoftmax", {kFloat}, AttrKind::kFloatT, 1},
      {"Cast", {kT}, AttrKind::kCast, 1},
      {"ZerosLike", {kT}, AttrKind::kT, 1},
      {"BiasAdd", {kFloat, kFloat}, AttrKind::kFloatT, 1},
      {"MatMul", {kFloat, kFloat}, AttrKind::kMatMul, 1},
      {"SparseSoftmaxCrossEntropyWithLogits",
       {kFloat, kLabels},
       AttrKind::kXent,
       2},
      {"Conv2D", {kFloat, kFloat}, AttrKind::kConv, 1},
      {"Conv2DBackpropInput", {kSizes, kFloat, kFloat}, AttrKind::kConv, 1},
      {"Conv2DBackpropFilter", {kFloat, kSizes, kFloat}, AttrKind::kConv, 1},
      {"MaxPool", {kFloat}, AttrKind::kPool, 1},
      {"MaxPoolGrad", {kFloat, kFloat, kFloat}, AttrKind::kPool, 1},
      {"FusedBatchNormV3",
       {kFloat, kFloat, kFloat, kFloat, kFloat},
       AttrKind::kBatchNorm,
       6},
      {"FusedBatchNormGradV3",
       {kFloat, kFloat, kFloat, kFloat, kFloat, kFloat},
       AttrKind::kBatchNorm,
       5},
      {"Transpose", {kT, kSizes}, AttrKind::kTranspose, 1},
      {"Fill", {kSizes, kT}, AttrKind::kFill, 1},
      {"BroadcastGradientArgs", {kSizes, kSizes}, AttrKind::kBroadcastArgs, 2},
      {"ConcatV2", {kT, kT, kSizes}, AttrKind::kConcat, 1},
      {"Slice", {kT, kSizes, kSizes}, AttrKind::kSlice, 1},
      {"GatherV2", {kT, kLabels, kSizes}, AttrKind::kGather, 1},
      {"UnsortedSegmentSum", {kT, kLabels, kSizes}, AttrKind::kSegmentSum, 1},
      {"AvgPool", {kFloat}, AttrKind::kPool, 1},
      {"AvgPoolGrad", {kSizes, kFloat}, AttrKind::kPool, 1},
      {"Pad", {kT, kSizes}, AttrKind::kPad, 1},
  };
  return *ops;
}

constexpr int64_t kLargeDims[] = {7, 16, 64, 300};
// Keeps each input small: the target looks for kernels that misread
// shapes, not for big allocations (reshape_reduce_fuzzer covers those).
constexpr int64_t kMaxInputElements = 1 << 14;

void SetType(graphgc::proto::NodeDef* n, const char* attr, DataType dt) {
  (*n->mutable_attr())[attr].set_type(
      static_cast<graphgc::proto::DataType>(dt));
}

void SetInts(graphgc::proto::NodeDef* n, const char* attr,
             const std::vector<int64_t>& v) {
  graphgc::proto::AttrValue::ListValue* l =
      (*n->mutable_attr())[attr].mutable_list();
  for (int64_t x : v) l->add_i(x);
}

// A list of four ints for strides, ksize or dilations: [1, h, w, 1] most of
// the time, hostile values (0, negative, huge, a non-1 batch stride, a
// short list) otherwise.
std::vector<int64_t> Window(uint8_t b, Reader& in) {
  switch (b & 3) {
    case 0:
      return {1, 1 + (in.Byte() & 3), 1 + (in.Byte() & 3), 1};
    case 1:
      return {1, 2, 2, 1};
    case 2: {
      std::vector<int64_t> v(4);
      for (int64_t& x : v) x = static_cast<int8_t>(in.Byte());
      return v;
    }
    default:
      return {1, in.Int64(), 1};
  }
}

// Fills `n`'s attributes from the attribute byte `a` (and more bytes of
// `in` where a list is fuzzed).
void Attrs(const OpSpec& op, DataType t, DataType labels, uint8_t a, Reader& in,
           graphgc::proto::NodeDef* n) {
  static constexpr const char* kPaddings[] = {"VALID", "SAME", "EXPLICIT",
                                              "bogus"};
  switch (op.attrs) {
    case AttrKind::kT:
      SetType(n, "T", t);
      break;
    case AttrKind::kFloatT:
      SetType(n, "T", graphgc::DT_FLOAT);
      break;
    case AttrKind::kAddN:
      SetType(n, "T", t);
      (*n->mutable_attr())["N"].set_i(3);
      break;
    case AttrKind::kCast: {
      static constexpr DataType kDst[] = {graphgc::DT_FLOAT, graphgc::DT_INT32,
                                          graphgc::DT_INT64, graphgc::DT_BOOL};
      SetType(n, "SrcT", t);
      SetType(n, "DstT", kDst[a & 3]);
      break;
    }
    case AttrKind::kMatMul:
      SetType(n, "T", graphgc::DT_FLOAT);
      (*n->mutable_attr())["transpose_a"].set_b(a & 1);
      (*n->mutable_attr())["transpose_b"].set_b(a & 2);
      break;
    case AttrKind::kConv:
      SetType(n, "T", graphgc::DT_FLOAT);
      SetInts(n, "strides", Window(a, in));
      (*n->mutable_attr())["padding"].set_s(kPaddings[(a >> 2) & 3]);
      if (a & 0x10) SetInts(n, "dilations", Window(a >> 5, in));
      if (a & 0x80) (*n->mutable_attr())["data_format"].set_s("NCHW");
      break;
    case AttrKind::kPool:
      SetType(n, "T", graphgc::DT_FLOAT);
      SetInts(n, "ksize", Window(a, in));
      SetInts(n, "strides", Window(a >> 2, in));
      (*n->mutable_attr())["padding"].set_s(kPaddings[(a >> 4) & 3]);
      if (a & 0x80) (*n->mutable_attr())["data_format"].set_s("NCHW");
      break;
    case AttrKind::kBatchNorm: {
      SetType(n, "T", graphgc::DT_FLOAT);
      SetType(n, "U", graphgc::DT_FLOAT);
      static constexpr float kEpsilon[] = {0.001f, 0.f, -1.f, 1e30f};
      (*n->mutable_attr())["epsilon"].set_f(kEpsilon[a & 3]);
      (*n->mutable_attr())["is_training"].set_b(a & 4);
      if (op.outputs == 6) {
        static constexpr float kFactor[] = {1.f, 0.01f, 0.f, -2.f};
        (*n->mutable_attr())["exponential_avg_factor"].set_f(
            kFactor[(a >> 3) & 3]);
      }
      break;
    }
    case AttrKind::kXent:
      SetType(n, "T", graphgc::DT_FLOAT);
      SetType(n, "Tlabels", labels);
      break;
    case AttrKind::kTranspose:
      SetType(n, "T", t);
      SetType(n, "Tperm", graphgc::DT_INT32);
      break;
    case AttrKind::kFill:
      SetType(n, "T", t);
      SetType(n, "index_type", graphgc::DT_INT32);
      break;
    case AttrKind::kBroadcastArgs:
      SetType(n, "T", graphgc::DT_INT32);
      break;
    case AttrKind::kConcat:
      // The axis is a kSizes input: a scalar only when its rank byte is 0.
      SetType(n, "T", t);
      SetType(n, "Tidx", graphgc::DT_INT32);
      (*n->mutable_attr())["N"].set_i(2);
      break;
    case AttrKind::kSlice:
      SetType(n, "T", t);
      SetType(n, "Index", graphgc::DT_INT32);
      break;
    case AttrKind::kPad:
      SetType(n, "T", t);
      SetType(n, "Tpaddings", graphgc::DT_INT32);
      break;
    case AttrKind::kGather:
      // The axis and the ids are small signed bytes: in and out of range.
      SetType(n, "Tparams", t);
      SetType(n, "Tindices", labels);
      SetType(n, "Taxis", graphgc::DT_INT32);
      if (a & 1) (*n->mutable_attr())["batch_dims"].set_i(a >> 1);
      break;
    case AttrKind::kSegmentSum:
      SetType(n, "T", t);
      SetType(n, "Tindices", labels);
      SetType(n, "Tnumsegments", graphgc::DT_INT32);
      break;
  }
}

// The elements of an input of `dtype` and `n` elements, read from the
// rest of `in` (cycled; zeros when nothing is left). Sizes and labels take
// one signed byte per element.
template <typename T>
Tensor Values(const graphgc::TensorShape& shape, int64_t n, bool small,
              Reader& in) {
  std::vector<T> data(static_cast<size_t>(n));
  const size_t width = small ? 1 : sizeof(T);
  for (int64_t i = 0; i < n; ++i) {
    if (in.n == 0) break;
    unsigned char bytes[sizeof(T)] = {};
    for (size_t b = 0; b < width; ++b) {
      bytes[b] = in.p[(static_cast<size_t>(i) * width + b) % in.n];
    }
    if (small) {
      data[static_cast<size_t>(i)] =
          static_cast<T>(static_cast<int8_t>(bytes[0]));
    } else {
      std::memcpy(&data[static_cast<size_t>(i)], bytes, sizeof(T));
    }
  }
  // Consume what was used, so the next input reads fresh bytes.
  const size_t used = std::min(in.n, static_cast<size_t>(n) * width);
  in.p += used;
  in.n -= used;
  absl::StatusOr<Tensor> t = Tensor::FromData<T>(shape, data);
  if (!t.ok()) std::abort();  // at most kMaxInputElements, always fits
  return *std::move(t);
}

// The op and how its run ended, when GRAPHGC_FUZZ_VERBOSE is set.
void Report(const OpSpec& op, const absl::Status& status) {
  static const bool verbose = std::getenv("GRAPHGC_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    std::fprintf(stderr, "kernel_fuzzer: %s: %s\n", op.name,
                 status.ToString().c_str());
  }
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "kernel_fuzzer: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphgc::fuzz::SilenceProtobufLogs();
  // Fill and the backprops can ask for large outputs from small inputs:
  // they must be statuses, within run_fuzzers.sh's 2 GiB malloc budget.
  graphgc::SetMaxTensorBytes(int64_t{256} << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, size};
  const OpSpec& op = Ops()[in.Byte() % Ops().size()];
  const uint8_t mode = in.Byte();
  const uint8_t attr = in.Byte();
  static constexpr DataType kTypes[] = {graphgc::DT_FLOAT, graphgc::DT_INT32,
                                        graphgc::DT_INT64, graphgc::DT_FLOAT};
  const DataType t = kTypes[mode & 3];
  const bool static_shapes = (mode & 4) != 0;
  const DataType labels = (mode & 8) ? graphgc::DT_INT64 : graphgc::DT_INT32;

  // Shapes.
  std::vector<graphgc::TensorShape> shapes;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const int rank = in.Byte() % 5;
    graphgc::TensorShape s;
    for (int d = 0; d < rank; ++d) {
      const uint8_t b = in.Byte();
      s.AddDim(b < 0xf0 ? b % 6 : kLargeDims[b & 3]);
    }
    if (s.num_elements() > kMaxInputElements) return 0;
    shapes.push_back(s);
  }

  // The GraphDef: one Placeholder per input, then the op.
  graphgc::proto::GraphDef def;
  std::vector<DataType> dtypes;
  graphgc::proto::NodeDef* node = nullptr;
  {
    std::vector<std::string> names;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const DataType dt = op.inputs[i] == In::kT       ? t
                          : op.inputs[i] == In::kFloat ? graphgc::DT_FLOAT
                          : op.inputs[i] == In::kSizes ? graphgc::DT_INT32
                                                       : labels;
      dtypes.push_back(dt);
      names.push_back("in" + std::to_string(i));
      graphgc::proto::NodeDef* p = def.add_node();
      p->set_name(names.back());
      p->set_op("Placeholder");
      SetType(p, "dtype", dt);
      graphgc::proto::TensorShapeProto* sp =
          (*p->mutable_attr())["shape"].mutable_shape();
      for (int d = 0; d < shapes[i].dims(); ++d) {
        sp->add_dim()->set_size(static_shapes ? shapes[i][d] : -1);
      }
    }
    node = def.add_node();
    node->set_name("op");
    node->set_op(op.name);
    for (const std::string& name : names) node->add_input(name);
  }
  Attrs(op, t, labels, attr, in, node);

  // The feeds.
  std::vector<Tensor> values;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const bool small =
        op.inputs[i] == In::kSizes || op.inputs[i] == In::kLabels;
    const int64_t n = shapes[i].num_elements();
    switch (dtypes[i]) {
      case graphgc::DT_FLOAT:
        values.push_back(Values<float>(shapes[i], n, false, in));
        break;
      case graphgc::DT_INT32:
        values.push_back(Values<int32_t>(shapes[i], n, small, in));
        break;
      default:
        values.push_back(Values<int64_t>(shapes[i], n, small, in));
        break;
    }
  }

  graphgc::Graph graph;
  absl::StatusOr<std::vector<graphgc::NodeHandle>> nodes =
      graphgc::ImportGraphDef(def, graph);
  if (!nodes.ok()) {
    Report(op, nodes.status());
    if (graph.num_nodes() != 0) Die("a failed import left nodes behind");
    return 0;
  }
  std::vector<std::pair<graphgc::Output, Tensor>> feeds;
  std::vector<graphgc::Output> fetches;
  for (const graphgc::NodeHandle& h : *nodes) {
    const graphgc::Output o(h, 0);
    const std::string name = o.node_name();
    if (name == "op") {
      for (int k = 0; k < op.outputs; ++k) fetches.emplace_back(h, k);
    } else if (name.rfind("in", 0) == 0) {
      feeds.emplace_back(o, values[std::stoul(name.substr(2))]);
    }
  }
  if (fetches.size() != static_cast<size_t>(op.outputs) ||
      feeds.size() != op.inputs.size()) {
    Die("the imported graph lacks a node");
  }
  graphgc::Session session(graph);
  absl::StatusOr<std::vector<Tensor>> out = session.Run(feeds, fetches);
  Report(op, out.status());
  if (!out.ok()) return 0;
  if (out->size() != fetches.size()) {
    Die("Run returned the wrong number of tensors");
  }
  for (const Tensor& y : *out) {
    if (const char* wrong = graphgc::fuzz::ReadEveryByte(y)) Die(wrong);
  }
  return 0;
}
