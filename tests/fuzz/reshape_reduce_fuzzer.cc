// tests/fuzz/reshape_reduce_fuzzer.cc
//
// libFuzzer target for run-time shapes: bytes -> a small GraphDef (a
// Placeholder x, a Reshape of it to a fed shape, then Sum, Mean or ArgMax
// with constant or fed axes) plus the feed values -> ImportGraphDef into a
// fresh Graph -> Session::Run. Statuses are fine; a crash, a sanitizer
// report or an output whose element count disagrees with its shape is not.
// Input layout:
//   byte 0: bits 0-1 dtype of x (float, int32, int64; 3 = float);
//           bits 2-3 the reduction (Sum, Mean, ArgMax, none: fetch the
//           Reshape itself); bit 4: axes fed (else a Const); bit 5:
//           keep_dims; bit 6: the shape is int32 (else int64); bit 7: the
//           axes are int64 (else int32).
//   byte 1: bits 0-2 the number of x's elements (0-7); bits 3-5 the rank of
//           the fed shape (mod 5); bits 6-7 the number of axes (0-3; ArgMax
//           always takes one, a scalar).
//   then per shape dimension one tag byte: < 0x80 a small size (tag & 0x7,
//           or -1 when tag & 0x7 == 7); < 0xf0 a boundary value (2^31,
//           2^32, 2^40, 2^62, INT64_MAX, ...; chosen by bits 4-6) plus an
//           offset of (tag & 0xf) - 8; else the next 8 bytes little-endian.
//   then one byte per axis (as a signed int8).
//   rest: the elements of x, cycled when too few.
// Built and run by build_fuzzers.sh / run_fuzzers.sh like the other
// targets; its seeds come from make_seed_corpus.cc.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
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

constexpr int64_t kBoundary[] = {
    int64_t{1} << 31,
    int64_t{1} << 32,
    int64_t{1} << 40,
    int64_t{1} << 62,
    std::numeric_limits<int64_t>::max(),
    int64_t{1} << 61,
    int64_t{1} << 21,
    std::numeric_limits<int64_t>::min(),
};

int64_t Dim(Reader& in) {
  const uint8_t tag = in.Byte();
  if (tag < 0x80) return (tag & 7) == 7 ? -1 : tag & 7;
  if (tag < 0xf0) {
    const int64_t base = kBoundary[(tag >> 4) & 7];
    const int64_t offset = static_cast<int64_t>(tag & 0xf) - 8;
    // Wrapping on purpose (INT64_MIN - 8 becomes a large positive value).
    return static_cast<int64_t>(static_cast<uint64_t>(base) +
                                static_cast<uint64_t>(offset));
  }
  return in.Int64();
}

void SetType(graphgc::proto::NodeDef* n, const char* attr, DataType dt) {
  (*n->mutable_attr())[attr].set_type(
      static_cast<graphgc::proto::DataType>(dt));
}

graphgc::proto::NodeDef* AddNode(graphgc::proto::GraphDef& def,
                                 const char* name, const char* op,
                                 std::initializer_list<const char*> inputs) {
  graphgc::proto::NodeDef* n = def.add_node();
  n->set_name(name);
  n->set_op(op);
  for (const char* i : inputs) n->add_input(i);
  return n;
}

// A Placeholder of `dtype` and static shape `dims` (-1: unknown).
void AddPlaceholder(graphgc::proto::GraphDef& def, const char* name,
                    DataType dtype, std::initializer_list<int64_t> dims) {
  graphgc::proto::NodeDef* n = AddNode(def, name, "Placeholder", {});
  SetType(n, "dtype", dtype);
  graphgc::proto::TensorShapeProto* s =
      (*n->mutable_attr())["shape"].mutable_shape();
  for (int64_t d : dims) s->add_dim()->set_size(d);
}

template <typename T>
Tensor Vector(const std::vector<int64_t>& v, bool scalar) {
  std::vector<T> data(v.begin(), v.end());
  graphgc::TensorShape shape;
  if (!scalar) shape.AddDim(static_cast<int64_t>(v.size()));
  absl::StatusOr<Tensor> t = Tensor::FromData<T>(shape, data);
  if (!t.ok()) std::abort();  // a vector of a few elements always fits
  return *std::move(t);
}

Tensor IndexTensor(const std::vector<int64_t>& v, bool wide, bool scalar) {
  return wide ? Vector<int64_t>(v, scalar) : Vector<int32_t>(v, scalar);
}

template <typename T>
Tensor XValues(int64_t n, Reader& in) {
  std::vector<T> data(static_cast<size_t>(n));
  const size_t avail = in.n;
  for (int64_t i = 0; i < n; ++i) {
    T v{};
    if (avail > 0) {
      unsigned char bytes[sizeof(T)];
      for (size_t b = 0; b < sizeof(T); ++b) {
        bytes[b] = in.p[(static_cast<size_t>(i) * sizeof(T) + b) % avail];
      }
      std::memcpy(&v, bytes, sizeof(T));
    }
    data[static_cast<size_t>(i)] = v;
  }
  absl::StatusOr<Tensor> t = Tensor::FromData<T>({n}, data);
  if (!t.ok()) std::abort();
  return *std::move(t);
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "reshape_reduce_fuzzer: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphgc::fuzz::SilenceProtobufLogs();
  // Legal shapes can still ask for huge outputs (a reduction of an empty
  // [2^34, 0] tensor has 2^34 elements): they must be statuses, within
  // run_fuzzers.sh's 2 GiB malloc budget.
  graphgc::SetMaxTensorBytes(int64_t{256} << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, size};
  const uint8_t mode = in.Byte();
  const uint8_t counts = in.Byte();
  static constexpr DataType kXTypes[] = {graphgc::DT_FLOAT, graphgc::DT_INT32,
                                         graphgc::DT_INT64, graphgc::DT_FLOAT};
  const DataType xtype = kXTypes[mode & 3];
  const int reduction = (mode >> 2) & 3;  // Sum, Mean, ArgMax, none
  const bool axes_fed = (mode & 0x10) != 0;
  const bool keep_dims = (mode & 0x20) != 0;
  const DataType shape_type =
      (mode & 0x40) ? graphgc::DT_INT32 : graphgc::DT_INT64;
  const DataType axes_type =
      (mode & 0x80) ? graphgc::DT_INT64 : graphgc::DT_INT32;
  const int64_t n = counts & 7;
  const int rank = ((counts >> 3) & 7) % 5;
  const bool argmax = reduction == 2;
  const int num_axes = argmax ? 1 : (counts >> 6) & 3;

  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) dims.push_back(Dim(in));
  std::vector<int64_t> axes;
  for (int i = 0; i < num_axes; ++i) {
    axes.push_back(static_cast<int8_t>(in.Byte()));
  }

  // The GraphDef.
  graphgc::proto::GraphDef def;
  // The shape's and the axes' lengths are static (Reshape and Sum need
  // them when the graph is built); their values are fed.
  AddPlaceholder(def, "x", xtype, {-1});
  AddPlaceholder(def, "shape", shape_type, {rank});
  graphgc::proto::NodeDef* reshape =
      AddNode(def, "reshape", "Reshape", {"x", "shape"});
  SetType(reshape, "T", xtype);
  SetType(reshape, "Tshape", shape_type);
  const char* fetch = "reshape";
  const Tensor axes_value = IndexTensor(axes, axes_type == graphgc::DT_INT64,
                                        /*scalar=*/argmax);
  if (reduction != 3) {
    if (axes_fed) {
      if (argmax) {
        AddPlaceholder(def, "axes", axes_type, {});
      } else {
        AddPlaceholder(def, "axes", axes_type, {num_axes});
      }
    } else {
      graphgc::proto::NodeDef* c = AddNode(def, "axes", "Const", {});
      SetType(c, "dtype", axes_type);
      graphgc::proto::TensorProto* p =
          (*c->mutable_attr())["value"].mutable_tensor();
      p->set_dtype(static_cast<graphgc::proto::DataType>(axes_type));
      if (!argmax) p->mutable_tensor_shape()->add_dim()->set_size(num_axes);
      for (int64_t a : axes) {
        if (axes_type == graphgc::DT_INT64) {
          p->add_int64_val(a);
        } else {
          p->add_int_val(static_cast<int32_t>(a));
        }
      }
    }
    static constexpr const char* kOps[] = {"Sum", "Mean", "ArgMax"};
    graphgc::proto::NodeDef* r =
        AddNode(def, "reduce", kOps[reduction], {"reshape", "axes"});
    SetType(r, "T", xtype);
    SetType(r, "Tidx", axes_type);
    if (argmax) {
      SetType(r, "output_type", graphgc::DT_INT64);
    } else {
      (*r->mutable_attr())["keep_dims"].set_b(keep_dims);
    }
    fetch = "reduce";
  }

  // The feeds.
  Tensor x = xtype == graphgc::DT_FLOAT   ? XValues<float>(n, in)
             : xtype == graphgc::DT_INT32 ? XValues<int32_t>(n, in)
                                          : XValues<int64_t>(n, in);
  Tensor shape = IndexTensor(dims, shape_type == graphgc::DT_INT64, false);

  graphgc::Graph graph;
  absl::StatusOr<std::vector<graphgc::NodeHandle>> nodes =
      graphgc::ImportGraphDef(def, graph);
  if (!nodes.ok()) {
    if (graph.num_nodes() != 0) Die("a failed import left nodes behind");
    return 0;
  }
  auto find = [&](const char* name) -> graphgc::Output {
    for (const graphgc::NodeHandle& h : *nodes) {
      graphgc::Output o(h, 0);
      if (o.node_name() == name) return o;
    }
    Die(std::string("imported graph lacks node ") + name);
  };
  std::vector<std::pair<graphgc::Output, Tensor>> feeds = {
      {find("x"), x}, {find("shape"), shape}};
  if (reduction != 3 && axes_fed) feeds.emplace_back(find("axes"), axes_value);

  graphgc::Session session(graph);
  absl::StatusOr<std::vector<Tensor>> out = session.Run(feeds, {find(fetch)});
  if (!out.ok()) return 0;
  if (out->size() != 1) Die("Run returned the wrong number of tensors");
  if (const char* wrong = graphgc::fuzz::ReadEveryByte((*out)[0])) {
    Die(wrong);
  }
  return 0;
}
