// Convolution-layer ops over NHWC float32 tensors: Conv2D and its two
// backprop ops (im2col + Eigen GEMM), MaxPool, MaxPoolGrad, AvgPool,
// AvgPoolGrad,
// FusedBatchNormV3 and FusedBatchNormGradV3.
//
// Window geometry follows TensorFlow (GetWindowedOutputSize): VALID gives
// out = (in - k) / s + 1 and needs k <= in; SAME gives out = ceil(in / s)
// with pad_total = max((out - 1) * s + k - in, 0), of which pad_total / 2
// goes before. Every size product is overflow-checked.
#include "ops/conv_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "Eigen/Core"
#include "absl/strings/str_join.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "ops/parallel.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

using op_util::GradName;
using op_util::MakeOp;
using op_util::MustRegister;

using Grads = std::vector<std::optional<Output>>;
using RowMatrix =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using MatrixMap = Eigen::Map<RowMatrix>;

absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

// a * b * ..., or InvalidArgument naming `what` when the product overflows
// int64. Factors are non-negative.
absl::StatusOr<int64_t> CheckedProduct(std::initializer_list<int64_t> factors,
                                       absl::string_view what) {
  int64_t p = 1;
  for (int64_t f : factors) {
    if (__builtin_mul_overflow(p, f, &p)) {
      return Invalid(absl::StrCat(what, " overflows int64 (",
                                  absl::StrJoin(factors, " * "), ")"));
    }
  }
  return p;
}

// --- attributes ---

enum class Padding { kValid, kSame };

// Strides, window and padding of a conv or pooling node, read from its
// attributes (window is 1 x 1 for Conv2D: the filter gives it).
struct WindowParams {
  int64_t k_h = 1, k_w = 1;
  int64_t s_h = 1, s_w = 1;
  Padding padding = Padding::kValid;
};

absl::Status CheckNhwc(const AttrMap& attrs) {
  const std::string f = GetAttrOr<std::string>(attrs, "data_format", "NHWC");
  if (f != "NHWC") {
    return Invalid(
        absl::StrCat("data_format \"", f, "\" is not supported (only NHWC)"));
  }
  return absl::OkStatus();
}

// A list(int) attr of 4 positive entries [1, h, w, 1].
absl::StatusOr<std::pair<int64_t, int64_t>> SpatialPair(
    const AttrMap& attrs, absl::string_view name) {
  GG_ASSIGN_OR_RETURN(std::vector<int64_t> v,
                      GetAttr<std::vector<int64_t>>(attrs, name));
  if (v.size() != 4) {
    return Invalid(absl::StrCat(name,
                                " must have 4 entries [1, h, w, 1], got [",
                                absl::StrJoin(v, ","), "]"));
  }
  if (v[0] != 1 || v[3] != 1) {
    return Invalid(absl::StrCat(name, " [", absl::StrJoin(v, ","),
                                "]: the batch and channel entries must be 1"));
  }
  if (v[1] <= 0 || v[2] <= 0) {
    return Invalid(
        absl::StrCat(name, " [", absl::StrJoin(v, ","), "] must be positive"));
  }
  return std::make_pair(v[1], v[2]);
}

absl::StatusOr<Padding> ParsePadding(const AttrMap& attrs) {
  GG_ASSIGN_OR_RETURN(std::string p, GetAttr<std::string>(attrs, "padding"));
  const std::vector<int64_t> explicit_paddings =
      GetAttrOr<std::vector<int64_t>>(attrs, "explicit_paddings", {});
  if (p == "EXPLICIT") {
    return Invalid("padding \"EXPLICIT\" is not supported (VALID or SAME)");
  }
  if (p != "VALID" && p != "SAME") {
    return Invalid(
        absl::StrCat("unknown padding \"", p, "\" (must be VALID or SAME)"));
  }
  if (!explicit_paddings.empty()) {
    return Invalid(absl::StrCat("explicit_paddings [",
                                absl::StrJoin(explicit_paddings, ","),
                                "] must be empty unless padding is EXPLICIT"));
  }
  return p == "VALID" ? Padding::kValid : Padding::kSame;
}

// Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter.
absl::StatusOr<WindowParams> ParseConvAttrs(const AttrMap& attrs) {
  GG_RETURN_IF_ERROR(CheckNhwc(attrs));
  WindowParams p;
  GG_ASSIGN_OR_RETURN(std::tie(p.s_h, p.s_w), SpatialPair(attrs, "strides"));
  GG_ASSIGN_OR_RETURN(p.padding, ParsePadding(attrs));
  const std::vector<int64_t> d =
      GetAttrOr<std::vector<int64_t>>(attrs, "dilations", {1, 1, 1, 1});
  if (d.size() != 4 ||
      std::any_of(d.begin(), d.end(), [](int64_t x) { return x != 1; })) {
    return Invalid(absl::StrCat("dilations [", absl::StrJoin(d, ","),
                                "] are not supported (only [1,1,1,1])"));
  }
  return p;
}

// MaxPool, MaxPoolGrad, AvgPool, AvgPoolGrad.
absl::StatusOr<WindowParams> ParsePoolAttrs(const AttrMap& attrs) {
  GG_RETURN_IF_ERROR(CheckNhwc(attrs));
  WindowParams p;
  GG_ASSIGN_OR_RETURN(std::tie(p.k_h, p.k_w), SpatialPair(attrs, "ksize"));
  GG_ASSIGN_OR_RETURN(std::tie(p.s_h, p.s_w), SpatialPair(attrs, "strides"));
  GG_ASSIGN_OR_RETURN(p.padding, ParsePadding(attrs));
  return p;
}

absl::Status CheckFloatInputs(const AttrMap& attrs,
                              absl::Span<const InputInfo> in,
                              std::initializer_list<int> indices) {
  GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
  GG_RETURN_IF_ERROR(op_util::CheckDtype(t, {DT_FLOAT}, "T"));
  for (int i : indices) {
    if (in[i].dtype != t) {
      return Invalid(
          absl::StrCat("input ", i, " is ", DataTypeString(in[i].dtype),
                       " but the op's type T is ", DataTypeString(t)));
    }
  }
  return absl::OkStatus();
}

// --- geometry ---

// One spatial dimension of a window over an input: the output size and the
// padding before, as TensorFlow computes them. `in` or `k` -1 (unknown)
// gives -1s.
absl::Status WindowedOutputSize(int64_t in, int64_t k, int64_t s,
                                Padding padding, absl::string_view dim,
                                absl::string_view window, int64_t* out,
                                int64_t* pad_before) {
  *out = -1;
  *pad_before = -1;
  if (k == 0) return Invalid(absl::StrCat(window, " ", dim, " is 0"));
  if (in < 0 || k < 0) return absl::OkStatus();
  if (padding == Padding::kValid) {
    if (k > in) {
      return Invalid(absl::StrCat(window, " ", dim, " ", k,
                                  " is larger than the input ", dim, " ", in,
                                  " with VALID padding"));
    }
    *out = (in - k) / s + 1;
    *pad_before = 0;
    return absl::OkStatus();
  }
  *out = in / s + (in % s != 0 ? 1 : 0);
  int64_t total = 0;
  if (*out > 0 && (__builtin_mul_overflow(*out - 1, s, &total) ||
                   __builtin_add_overflow(total, k, &total))) {
    return Invalid(absl::StrCat("SAME padding of ", dim, " overflows int64 (",
                                window, " ", k, ", stride ", s, ")"));
  }
  total = *out > 0 ? std::max<int64_t>(total - in, 0) : 0;
  *pad_before = total / 2;
  return absl::OkStatus();
}

// A window's walk over an NHWC input; -1 marks what the static shapes leave
// unknown (never in a kernel).
struct Geometry {
  int64_t batch = -1, in_h = -1, in_w = -1, in_c = -1;
  int64_t k_h = -1, k_w = -1, out_c = -1;
  int64_t s_h = 1, s_w = 1;
  int64_t out_h = -1, out_w = -1;
  int64_t pad_top = 0, pad_left = 0;

  TensorShape output_shape() const {
    return TensorShape{batch, out_h, out_w, out_c};
  }
  TensorShape input_shape() const {
    return TensorShape{batch, in_h, in_w, in_c};
  }
};

absl::Status CheckRank4(const TensorShape& s, absl::string_view what,
                        absl::string_view layout, absl::string_view context) {
  if (s.dims() != 4) {
    return Invalid(absl::StrCat(what, " must be 4-D ", layout, ", got ",
                                s.DebugString(), context));
  }
  return absl::OkStatus();
}

// Fills the output sizes of `g` from its input sizes and window.
absl::Status ComputeOutput(const WindowParams& p, absl::string_view window,
                           absl::string_view context, Geometry& g) {
  g.s_h = p.s_h;
  g.s_w = p.s_w;
  absl::Status s = WindowedOutputSize(g.in_h, g.k_h, p.s_h, p.padding, "height",
                                      window, &g.out_h, &g.pad_top);
  if (s.ok()) {
    s = WindowedOutputSize(g.in_w, g.k_w, p.s_w, p.padding, "width", window,
                           &g.out_w, &g.pad_left);
  }
  if (!s.ok()) return Invalid(absl::StrCat(s.message(), context));
  return absl::OkStatus();
}

// Conv2D's geometry from the input's and the filter's shapes.
absl::StatusOr<Geometry> ConvGeometry(const TensorShape& input,
                                      const TensorShape& filter,
                                      const WindowParams& p) {
  const std::string context = absl::StrCat(
      " (input ", input.DebugString(), ", filter ", filter.DebugString(), ")");
  GG_RETURN_IF_ERROR(
      CheckRank4(input, "input", "[batch, height, width, channels]", context));
  GG_RETURN_IF_ERROR(CheckRank4(
      filter, "filter", "[height, width, in_channels, out_channels]", context));
  if (input[3] >= 0 && filter[2] >= 0 && input[3] != filter[2]) {
    return Invalid(absl::StrCat("input ", input.DebugString(), " has ",
                                input[3], " channels but filter ",
                                filter.DebugString(), " expects ", filter[2]));
  }
  Geometry g;
  g.batch = input[0];
  g.in_h = input[1];
  g.in_w = input[2];
  g.in_c = input[3] >= 0 ? input[3] : filter[2];
  g.k_h = filter[0];
  g.k_w = filter[1];
  g.out_c = filter[3];
  GG_RETURN_IF_ERROR(ComputeOutput(p, "filter", context, g));
  return g;
}

// MaxPool's geometry from the input's shape.
absl::StatusOr<Geometry> PoolGeometry(const TensorShape& input,
                                      const WindowParams& p) {
  const std::string context =
      absl::StrCat(" (input ", input.DebugString(), ", ksize [1,", p.k_h, ",",
                   p.k_w, ",1], strides [1,", p.s_h, ",", p.s_w, ",1])");
  GG_RETURN_IF_ERROR(
      CheckRank4(input, "input", "[batch, height, width, channels]", context));
  Geometry g;
  g.batch = input[0];
  g.in_h = input[1];
  g.in_w = input[2];
  g.in_c = g.out_c = input[3];
  g.k_h = p.k_h;
  g.k_w = p.k_w;
  GG_RETURN_IF_ERROR(ComputeOutput(p, "window", context, g));
  return g;
}

// OK when `shape` (dims may be -1) can be `want` (dims may be -1); else
// "<what> [..] does not match <expected> [..]".
absl::Status CheckShapeMatches(const TensorShape& shape,
                               const TensorShape& want, absl::string_view what,
                               absl::string_view expected) {
  bool ok = shape.dims() == want.dims();
  for (int d = 0; ok && d < shape.dims(); ++d) {
    ok = shape[d] < 0 || want[d] < 0 || shape[d] == want[d];
  }
  if (!ok) {
    return Invalid(absl::StrCat(what, " ", shape.DebugString(),
                                " does not match ", expected, " ",
                                want.DebugString()));
  }
  return absl::OkStatus();
}

// `a` with its unknown dims taken from `b` (same rank).
TensorShape Merge(TensorShape a, const TensorShape& b) {
  for (int d = 0; d < a.dims() && d < b.dims(); ++d) {
    if (a[d] < 0) a.set_dim(d, b[d]);
  }
  return a;
}

// The shape an int32 sizes input (input_sizes, filter_sizes) describes at
// build time: its value when known (dims may be -1), else four unknowns.
absl::StatusOr<TensorShape> SizesInputShape(const InputInfo& in,
                                            absl::string_view name) {
  if (in.dtype != DT_INT32) {
    return Invalid(
        absl::StrCat(name, " must be int32, got ", DataTypeString(in.dtype)));
  }
  if (in.shape.dims() != 1 || (in.shape[0] >= 0 && in.shape[0] != 4)) {
    return Invalid(absl::StrCat(name,
                                " must be a vector of 4 sizes, got shape ",
                                in.shape.DebugString()));
  }
  std::optional<TensorShape> v = op_util::KnownShapeValue(in);
  if (!v.has_value()) return TensorShape{-1, -1, -1, -1};
  for (int d = 0; d < v->dims(); ++d) {
    if ((*v)[d] < 0 && (in.value.has_value() || (*v)[d] != -1)) {
      return Invalid(
          absl::StrCat(name, " ", v->DebugString(), " holds a negative size"));
    }
  }
  return *v;
}

// The same from the tensor at run time.
absl::StatusOr<TensorShape> SizesTensorShape(const Tensor& t,
                                             absl::string_view name) {
  if (t.dtype() != DT_INT32 || t.shape().dims() != 1 || t.num_elements() != 4) {
    return Invalid(
        absl::StrCat(name, " must be an int32 vector of 4 sizes, got ",
                     DataTypeString(t.dtype()), " ", t.shape().DebugString()));
  }
  std::vector<int64_t> dims(t.data<int32_t>().begin(), t.data<int32_t>().end());
  for (int64_t d : dims) {
    if (d < 0) {
      return Invalid(absl::StrCat(name, " [", absl::StrJoin(dims, ","),
                                  "] holds a negative size"));
    }
  }
  return TensorShape(dims);
}

// Binds a kernel body to the node's attributes, parsed once per plan; a
// node whose attributes do not parse gets a kernel returning the error.
template <typename Params>
op_util::KernelBinder BindKernel(
    absl::StatusOr<Params> (*parse)(const AttrMap&),
    absl::Status (*body)(OpKernelContext&, const Params&)) {
  return [parse, body](const AttrMap& attrs) -> KernelFn {
    absl::StatusOr<Params> p = parse(attrs);
    if (!p.ok()) {
      return [s = p.status()](OpKernelContext& ctx) {
        return ctx.InvalidArgument(s.message());
      };
    }
    return
        [body, params = *p](OpKernelContext& ctx) { return body(ctx, params); };
  };
}

// Runs `s` through ctx.InvalidArgument (op and node name in front).
absl::Status InContext(const OpKernelContext& ctx, const absl::Status& s) {
  return s.ok() ? s : ctx.InvalidArgument(s.message());
}

// --- Conv2D kernels: im2col + GEMM ---

// Rows of the patch matrix per block: about 4 MiB of floats, at least one
// row.
constexpr int64_t kPatchBlockFloats = int64_t{1} << 20;

// The patch matrix's rows [r0, r1): row r = (b, oy, ox) of the output holds
// the k_h x k_w x in_c input values under the filter there (zeros in the
// padding), in the filter's (ky, kx, c) order.
void Im2Col(const Geometry& g, const float* input, int64_t r0, int64_t r1,
            float* patches) {
  const int64_t per_image = g.out_h * g.out_w;
  float* dst = patches;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / per_image;
    const int64_t oy = (r % per_image) / g.out_w;
    const int64_t ox = r % g.out_w;
    const float* image = input + b * g.in_h * g.in_w * g.in_c;
    for (int64_t ky = 0; ky < g.k_h; ++ky) {
      const int64_t iy = oy * g.s_h - g.pad_top + ky;
      for (int64_t kx = 0; kx < g.k_w; ++kx, dst += g.in_c) {
        const int64_t ix = ox * g.s_w - g.pad_left + kx;
        if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) {
          std::fill(dst, dst + g.in_c, 0.f);
        } else {
          std::copy_n(image + (iy * g.in_w + ix) * g.in_c, g.in_c, dst);
        }
      }
    }
  }
}

// The transpose of Im2Col: adds each patch row's values back onto the input
// positions they were read from (padding dropped).
void Col2ImAdd(const Geometry& g, const float* patches, int64_t r0, int64_t r1,
               float* input) {
  const int64_t per_image = g.out_h * g.out_w;
  const float* src = patches;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / per_image;
    const int64_t oy = (r % per_image) / g.out_w;
    const int64_t ox = r % g.out_w;
    float* image = input + b * g.in_h * g.in_w * g.in_c;
    for (int64_t ky = 0; ky < g.k_h; ++ky) {
      const int64_t iy = oy * g.s_h - g.pad_top + ky;
      for (int64_t kx = 0; kx < g.k_w; ++kx, src += g.in_c) {
        const int64_t ix = ox * g.s_w - g.pad_left + kx;
        if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
        float* d = image + (iy * g.in_w + ix) * g.in_c;
        for (int64_t c = 0; c < g.in_c; ++c) d[c] += src[c];
      }
    }
  }
}

// The sizes of the GEMMs: m output positions, k patch length, n out
// channels. Overflow-checked.
struct GemmSizes {
  int64_t m = 0, k = 0, n = 0;
  // A 1 x 1 filter at stride 1: the input itself is the patch matrix.
  bool pointwise = false;
};

absl::StatusOr<GemmSizes> GemmSizesOf(const Geometry& g) {
  GemmSizes s;
  GG_ASSIGN_OR_RETURN(
      s.m, CheckedProduct({g.batch, g.out_h, g.out_w}, "output positions"));
  GG_ASSIGN_OR_RETURN(
      s.k, CheckedProduct({g.k_h, g.k_w, g.in_c}, "filter patch length"));
  s.n = g.out_c;
  s.pointwise = g.k_h == 1 && g.k_w == 1 && g.s_h == 1 && g.s_w == 1;
  return s;
}

// Calls f(r0, r1, patches) for blocks of patch rows covering [begin, end),
// with `patches` a scratch of (r1 - r0) x k floats.
template <typename F>
void ForEachPatchBlock(const GemmSizes& s, int64_t begin, int64_t end, F&& f) {
  const int64_t rows = std::max<int64_t>(1, kPatchBlockFloats / s.k);
  std::unique_ptr<float[]> scratch(
      new float[std::min(rows, end - begin) * s.k]);
  for (int64_t r0 = begin; r0 < end; r0 += rows) {
    f(r0, std::min(end, r0 + rows), scratch.get());
  }
}

// What one patch row costs a conv GEMM: its k values gathered (not for a
// pointwise filter, whose rows are the input's), n outputs written, n x k
// multiply-adds.
op_util::UnitCost PatchRowCost(const GemmSizes& s) {
  const double k = static_cast<double>(s.k);
  const double n = static_cast<double>(s.n);
  return {.bytes_loaded = 4 * k * (s.pointwise ? 1 : 2),
          .bytes_stored = 4 * n,
          .cycles = op_util::GemmCycles(2 * k * n)};
}

// out[m, n] = patches(input)[m, k] * filter[k, n], its rows shared across
// the intra-op threads when large.
void ConvForward(const OpKernelContext& ctx, const Geometry& g,
                 const GemmSizes& s, const float* input, const float* filter,
                 float* out) {
  const ConstMatrixMap w(filter, s.k, s.n);
  op_util::ParallelFor(ctx, s.m, PatchRowCost(s), [&](int64_t b, int64_t e) {
    if (s.pointwise) {
      MatrixMap(out + b * s.n, e - b, s.n).noalias() =
          ConstMatrixMap(input + b * s.k, e - b, s.k) * w;
      return;
    }
    ForEachPatchBlock(s, b, e, [&](int64_t r0, int64_t r1, float* patches) {
      Im2Col(g, input, r0, r1, patches);
      MatrixMap(out + r0 * s.n, r1 - r0, s.n).noalias() =
          ConstMatrixMap(patches, r1 - r0, s.k) * w;
    });
  });
}

// dw[k, n] = patches(input)^T[k, rows] * d_out[rows, n] over patch rows
// [begin, end).
void FilterGradOfRows(const Geometry& g, const GemmSizes& s, const float* input,
                      const float* d_out, int64_t begin, int64_t end,
                      float* d_filter) {
  MatrixMap dw(d_filter, s.k, s.n);
  if (s.pointwise) {
    dw.noalias() =
        ConstMatrixMap(input + begin * s.k, end - begin, s.k).transpose() *
        ConstMatrixMap(d_out + begin * s.n, end - begin, s.n);
    return;
  }
  dw.setZero();
  ForEachPatchBlock(s, begin, end, [&](int64_t r0, int64_t r1, float* patches) {
    Im2Col(g, input, r0, r1, patches);
    dw.noalias() += ConstMatrixMap(patches, r1 - r0, s.k).transpose() *
                    ConstMatrixMap(d_out + r0 * s.n, r1 - r0, s.n);
  });
}

// d_filter[k, n] = patches(input)^T[k, m] * d_out[m, n]. A sum over the m
// rows: when large, cut into one fixed shard of rows per thread, each
// summed apart, then added in shard order (so the result depends on the
// thread count, never on scheduling).
void ConvBackpropFilter(const OpKernelContext& ctx, const Geometry& g,
                        const GemmSizes& s, const float* input,
                        const float* d_out, float* d_filter) {
  const int shards = op_util::ThreadsFor(ctx, s.m, PatchRowCost(s));
  if (shards <= 1) {
    FilterGradOfRows(g, s, input, d_out, 0, s.m, d_filter);
    return;
  }
  const int64_t size = s.k * s.n;
  // Shard 0 sums into d_filter, the others into their part of `partial`.
  std::unique_ptr<float[]> partial(new float[(shards - 1) * size]);
  const op_util::UnitCost shard_cost{
      .cycles = op_util::GemmCycles(2.0 * static_cast<double>(s.m) *
                                    static_cast<double>(size) / shards)};
  op_util::ParallelFor(ctx, shards, shard_cost, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      FilterGradOfRows(g, s, input, d_out, s.m * i / shards,
                       s.m * (i + 1) / shards,
                       i == 0 ? d_filter : partial.get() + (i - 1) * size);
    }
  });
  MatrixMap dw(d_filter, s.k, s.n);
  for (int i = 1; i < shards; ++i) {
    dw += ConstMatrixMap(partial.get() + (i - 1) * size, s.k, s.n);
  }
}

// d_input = col2im(d_out[m, n] * filter^T[n, k]), shared across the
// intra-op threads by whole images when large (the patches of one image
// overlap in its input; those of two images never do).
void ConvBackpropInput(const OpKernelContext& ctx, const Geometry& g,
                       const GemmSizes& s, const float* filter,
                       const float* d_out, float* d_input) {
  const ConstMatrixMap w(filter, s.k, s.n);
  const int64_t per_image = g.out_h * g.out_w;  // patch rows
  const int64_t image_size = g.in_h * g.in_w * g.in_c;
  op_util::UnitCost image = PatchRowCost(s);
  image.bytes_loaded *= static_cast<double>(per_image);
  image.bytes_stored *= static_cast<double>(per_image);
  image.cycles *= static_cast<double>(per_image);
  op_util::ParallelFor(ctx, g.batch, image, [&](int64_t b0, int64_t b1) {
    const int64_t begin = b0 * per_image, end = b1 * per_image;
    if (s.pointwise) {
      MatrixMap(d_input + begin * s.k, end - begin, s.k).noalias() =
          ConstMatrixMap(d_out + begin * s.n, end - begin, s.n) * w.transpose();
      return;
    }
    std::fill(d_input + b0 * image_size, d_input + b1 * image_size, 0.f);
    ForEachPatchBlock(
        s, begin, end, [&](int64_t r0, int64_t r1, float* patches) {
          MatrixMap(patches, r1 - r0, s.k).noalias() =
              ConstMatrixMap(d_out + r0 * s.n, r1 - r0, s.n) * w.transpose();
          Col2ImAdd(g, patches, r0, r1, d_input);
        });
  });
}

bool HasWork(const GemmSizes& s) { return s.m > 0 && s.k > 0 && s.n > 0; }

// The checks every conv kernel makes on its tensors' dtypes.
absl::Status CheckFloatTensors(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (t->dtype() != DT_FLOAT) {
      return Invalid(absl::StrCat("expected float tensors, got ",
                                  DataTypeString(t->dtype()), " ",
                                  t->shape().DebugString()));
    }
  }
  return absl::OkStatus();
}

// Output 0 of `shape`, all zeros when the GEMMs have no work (an empty
// dimension); otherwise left for the kernel to write in full.
absl::StatusOr<Tensor*> AllocateConvOutput(OpKernelContext& ctx,
                                           const TensorShape& shape,
                                           bool has_work) {
  GG_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DT_FLOAT, shape));
  if (!has_work && out->num_elements() > 0) {
    std::fill_n(out->mutable_data<float>().data(), out->num_elements(), 0.f);
  }
  return out;
}

// The geometry of a backprop op, checked against out_backprop's shape.
absl::StatusOr<Geometry> BackpropGeometry(const TensorShape& input,
                                          const TensorShape& filter,
                                          const TensorShape& out_backprop,
                                          const WindowParams& p) {
  GG_ASSIGN_OR_RETURN(Geometry g, ConvGeometry(input, filter, p));
  GG_RETURN_IF_ERROR(CheckShapeMatches(
      out_backprop, g.output_shape(), "out_backprop",
      absl::StrCat("the output of input ", input.DebugString(), " and filter ",
                   filter.DebugString(), ", which is")));
  return g;
}

// What a conv kernel computes: Conv2D's output, or the gradient of its
// input or of its filter.
enum class ConvResult { kOutput, kInputGrad, kFilterGrad };

// The kernel of Conv2D (inputs: input, filter), Conv2DBackpropInput
// (input_sizes, filter, out_backprop) and Conv2DBackpropFilter (input,
// filter_sizes, out_backprop): every shape checked at run time against the
// tensors, errors naming the node and the shapes.
template <ConvResult kResult>
absl::Status ConvKernel(OpKernelContext& ctx, const WindowParams& p) {
  const bool backprop = kResult != ConvResult::kOutput;
  const int sizes_input = kResult == ConvResult::kInputGrad ? 0 : 1;
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  const Tensor& d_out = ctx.input(backprop ? 2 : 1);
  const Tensor& data = kResult == ConvResult::kInputGrad ? filter : input;
  GG_RETURN_IF_ERROR(InContext(ctx, CheckFloatTensors({&data, &d_out})));
  // The shape input_sizes or filter_sizes holds (backprop ops only).
  TensorShape sizes;
  if (backprop) {
    absl::StatusOr<TensorShape> given =
        SizesTensorShape(ctx.input(sizes_input),
                         sizes_input == 0 ? "input_sizes" : "filter_sizes");
    GG_RETURN_IF_ERROR(InContext(ctx, given.status()));
    sizes = *given;
  }
  const TensorShape& input_shape =
      kResult == ConvResult::kInputGrad ? sizes : input.shape();
  const TensorShape& filter_shape =
      kResult == ConvResult::kFilterGrad ? sizes : filter.shape();
  absl::StatusOr<Geometry> g =
      backprop ? BackpropGeometry(input_shape, filter_shape, d_out.shape(), p)
               : ConvGeometry(input_shape, filter_shape, p);
  GG_RETURN_IF_ERROR(InContext(ctx, g.status()));
  absl::StatusOr<GemmSizes> s = GemmSizesOf(*g);
  GG_RETURN_IF_ERROR(InContext(ctx, s.status()));
  const TensorShape out_shape =
      kResult == ConvResult::kOutput ? g->output_shape() : sizes;
  GG_ASSIGN_OR_RETURN(Tensor * out,
                      AllocateConvOutput(ctx, out_shape, HasWork(*s)));
  if (!HasWork(*s)) return absl::OkStatus();
  float* o = out->mutable_data<float>().data();
  if constexpr (kResult == ConvResult::kOutput) {
    ConvForward(ctx, *g, *s, input.data<float>().data(),
                filter.data<float>().data(), o);
  } else if constexpr (kResult == ConvResult::kInputGrad) {
    ConvBackpropInput(ctx, *g, *s, filter.data<float>().data(),
                      d_out.data<float>().data(), o);
  } else {
    ConvBackpropFilter(ctx, *g, *s, input.data<float>().data(),
                       d_out.data<float>().data(), o);
  }
  return absl::OkStatus();
}

// --- Conv2D shape functions and gradient ---

absl::StatusOr<std::vector<OutputInfo>> Conv2DShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(CheckFloatInputs(attrs, in, {0, 1}));
  GG_ASSIGN_OR_RETURN(WindowParams p, ParseConvAttrs(attrs));
  GG_ASSIGN_OR_RETURN(Geometry g, ConvGeometry(in[0].shape, in[1].shape, p));
  return std::vector<OutputInfo>{{DT_FLOAT, g.output_shape()}};
}

absl::StatusOr<std::vector<OutputInfo>> Conv2DBackpropInputShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(CheckFloatInputs(attrs, in, {1, 2}));
  GG_ASSIGN_OR_RETURN(WindowParams p, ParseConvAttrs(attrs));
  GG_ASSIGN_OR_RETURN(TensorShape sizes, SizesInputShape(in[0], "input_sizes"));
  GG_ASSIGN_OR_RETURN(Geometry g,
                      BackpropGeometry(sizes, in[1].shape, in[2].shape, p));
  // Unknown sizes: the batch from out_backprop, the channels from the filter.
  TensorShape out =
      Merge(sizes, TensorShape{in[2].shape.dims() == 4 ? in[2].shape[0] : -1,
                               -1, -1, g.in_c});
  return std::vector<OutputInfo>{{DT_FLOAT, out}};
}

absl::StatusOr<std::vector<OutputInfo>> Conv2DBackpropFilterShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(CheckFloatInputs(attrs, in, {0, 2}));
  GG_ASSIGN_OR_RETURN(WindowParams p, ParseConvAttrs(attrs));
  GG_ASSIGN_OR_RETURN(TensorShape sizes,
                      SizesInputShape(in[1], "filter_sizes"));
  GG_ASSIGN_OR_RETURN(Geometry g,
                      BackpropGeometry(in[0].shape, sizes, in[2].shape, p));
  TensorShape out =
      Merge(sizes, TensorShape{-1, -1, g.in_c,
                               in[2].shape.dims() == 4 ? in[2].shape[3] : -1});
  return std::vector<OutputInfo>{{DT_FLOAT, out}};
}

// TensorFlow's _Conv2DGrad: the backprop ops, with the sizes taken by Shape
// of the forward inputs, and the forward node's attributes as they are.
absl::StatusOr<Grads> Conv2DGrad(const GradContext& ctx) {
  if (!ctx.grad_outputs[0].has_value()) return Grads(2);
  const Output& input = ctx.node.inputs[0];
  const Output& filter = ctx.node.inputs[1];
  const Output& g = *ctx.grad_outputs[0];
  GG_ASSIGN_OR_RETURN(Output input_sizes,
                      ops::Shape(input, {.name = GradName(ctx, "Shape")}));
  GG_ASSIGN_OR_RETURN(Output filter_sizes,
                      ops::Shape(filter, {.name = GradName(ctx, "Shape_1")}));
  GG_ASSIGN_OR_RETURN(NodeHandle dx,
                      BuildNode(*input.graph(), "Conv2DBackpropInput",
                                GradName(ctx, "Conv2DBackpropInput"),
                                {input_sizes, filter, g}, {}, ctx.node.attrs));
  GG_ASSIGN_OR_RETURN(NodeHandle dw,
                      BuildNode(*input.graph(), "Conv2DBackpropFilter",
                                GradName(ctx, "Conv2DBackpropFilter"),
                                {input, filter_sizes, g}, {}, ctx.node.attrs));
  return Grads{Output(dx, 0), Output(dw, 0)};
}

// TensorFlow's _Conv2DBackpropInputGrad: Conv2DBackpropInput is linear in
// its filter and its out_backprop, so their gradients are the filter
// gradient of a Conv2D of `dy` against out_backprop, and the Conv2D of `dy`;
// none for the int32 input_sizes.
absl::StatusOr<Grads> Conv2DBackpropInputGrad(const GradContext& ctx) {
  if (!ctx.grad_outputs[0].has_value()) return Grads(3);
  const Output& filter = ctx.node.inputs[1];
  const Output& out_backprop = ctx.node.inputs[2];
  const Output& g = *ctx.grad_outputs[0];
  GG_ASSIGN_OR_RETURN(Output filter_sizes,
                      ops::Shape(filter, {.name = GradName(ctx, "Shape")}));
  GG_ASSIGN_OR_RETURN(
      NodeHandle dw,
      BuildNode(*filter.graph(), "Conv2DBackpropFilter",
                GradName(ctx, "Conv2DBackpropFilter"),
                {g, filter_sizes, out_backprop}, {}, ctx.node.attrs));
  GG_ASSIGN_OR_RETURN(
      NodeHandle dy,
      BuildNode(*filter.graph(), "Conv2D", GradName(ctx, "Conv2D"), {g, filter},
                {}, ctx.node.attrs));
  return Grads{std::nullopt, Output(dw, 0), Output(dy, 0)};
}

// Attributes of Conv2D and its backprop ops, as TensorFlow declares them.
std::vector<AttrSpec> ConvAttrs() {
  return {
      {"T", "type"},
      {"strides", "list(int)"},
      {"use_cudnn_on_gpu", "bool", AttrValue(true)},
      {"padding", "string"},
      {"explicit_paddings", "list(int)", AttrValue(std::vector<int64_t>{})},
      {"data_format", "string", AttrValue(std::string("NHWC"))},
      {"dilations", "list(int)", AttrValue(std::vector<int64_t>{1, 1, 1, 1})}};
}

// --- MaxPool, MaxPoolGrad ---

// Calls f(window_offset, y0, y1, x0, x1, out_offset) for every output
// position: the window clipped to the input (never empty: SAME pads less
// than a window), the offset of its input image and of the output pixel.
// Without channels there is nothing to pool and no window is visited: the
// walk over batch x rows x columns would otherwise cost its full size for
// an empty tensor (a fuzzed [300, 300, 300, 0] input took 10 s under ASan).
template <typename F>
void ForEachPoolWindow(const Geometry& g, F&& f) {
  if (g.in_c == 0) return;
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t image = b * g.in_h * g.in_w * g.in_c;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      const int64_t y0 = std::max<int64_t>(0, oy * g.s_h - g.pad_top);
      const int64_t y1 = std::min(g.in_h, oy * g.s_h - g.pad_top + g.k_h);
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        const int64_t x0 = std::max<int64_t>(0, ox * g.s_w - g.pad_left);
        const int64_t x1 = std::min(g.in_w, ox * g.s_w - g.pad_left + g.k_w);
        f(image, y0, y1, x0, x1, ((b * g.out_h + oy) * g.out_w + ox) * g.in_c);
      }
    }
  }
}

// For each channel, the input offset of the window's maximum: the first one
// in row-major window order on ties, as TensorFlow's CPU MaxPoolGrad.
void WindowArgMax(const Geometry& g, const float* in, int64_t image, int64_t y0,
                  int64_t y1, int64_t x0, int64_t x1, float* max,
                  int64_t* arg) {
  const int64_t c = g.in_c;
  const int64_t first = image + (y0 * g.in_w + x0) * c;
  for (int64_t ch = 0; ch < c; ++ch) {
    max[ch] = in[first + ch];
    arg[ch] = first + ch;
  }
  for (int64_t y = y0; y < y1; ++y) {
    for (int64_t x = x0; x < x1; ++x) {
      const int64_t at = image + (y * g.in_w + x) * c;
      for (int64_t ch = 0; ch < c; ++ch) {
        if (in[at + ch] > max[ch]) {
          max[ch] = in[at + ch];
          arg[ch] = at + ch;
        }
      }
    }
  }
}

absl::Status MaxPoolKernel(OpKernelContext& ctx, const WindowParams& p) {
  const Tensor& input = ctx.input(0);
  GG_RETURN_IF_ERROR(InContext(ctx, CheckFloatTensors({&input})));
  absl::StatusOr<Geometry> g = PoolGeometry(input.shape(), p);
  GG_RETURN_IF_ERROR(InContext(ctx, g.status()));
  GG_ASSIGN_OR_RETURN(Tensor * out,
                      ctx.allocate_output(0, DT_FLOAT, g->output_shape()));
  const float* in = input.data<float>().data();
  float* o = out->mutable_data<float>().data();
  std::vector<int64_t> arg(g->in_c);
  ForEachPoolWindow(*g, [&](int64_t image, int64_t y0, int64_t y1, int64_t x0,
                            int64_t x1, int64_t at) {
    WindowArgMax(*g, in, image, y0, y1, x0, x1, o + at, arg.data());
  });
  return absl::OkStatus();
}

absl::Status MaxPoolGradKernel(OpKernelContext& ctx, const WindowParams& p) {
  const Tensor& input = ctx.input(0);
  const Tensor& output = ctx.input(1);
  const Tensor& grad = ctx.input(2);
  GG_RETURN_IF_ERROR(
      InContext(ctx, CheckFloatTensors({&input, &output, &grad})));
  absl::StatusOr<Geometry> g = PoolGeometry(input.shape(), p);
  GG_RETURN_IF_ERROR(InContext(ctx, g.status()));
  const std::string expected =
      absl::StrCat("the pooled shape of orig_input ",
                   input.shape().DebugString(), ", which is");
  GG_RETURN_IF_ERROR(
      InContext(ctx, CheckShapeMatches(output.shape(), g->output_shape(),
                                       "orig_output", expected)));
  GG_RETURN_IF_ERROR(InContext(
      ctx,
      CheckShapeMatches(grad.shape(), g->output_shape(), "grad", expected)));
  GG_ASSIGN_OR_RETURN(Tensor * dx,
                      ctx.allocate_output(0, DT_FLOAT, input.shape()));
  float* d = dx->mutable_data<float>().data();
  std::fill_n(d, dx->num_elements(), 0.f);
  const float* in = input.data<float>().data();
  const float* gr = grad.data<float>().data();
  std::vector<float> max(g->in_c);
  std::vector<int64_t> arg(g->in_c);
  ForEachPoolWindow(*g, [&](int64_t image, int64_t y0, int64_t y1, int64_t x0,
                            int64_t x1, int64_t at) {
    WindowArgMax(*g, in, image, y0, y1, x0, x1, max.data(), arg.data());
    for (int64_t ch = 0; ch < g->in_c; ++ch) d[arg[ch]] += gr[at + ch];
  });
  return absl::OkStatus();
}

// MaxPool's and AvgPool's.
absl::StatusOr<std::vector<OutputInfo>> MaxPoolShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(CheckFloatInputs(attrs, in, {0}));
  GG_ASSIGN_OR_RETURN(WindowParams p, ParsePoolAttrs(attrs));
  GG_ASSIGN_OR_RETURN(Geometry g, PoolGeometry(in[0].shape, p));
  return std::vector<OutputInfo>{{DT_FLOAT, g.output_shape()}};
}

absl::StatusOr<std::vector<OutputInfo>> MaxPoolGradShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(CheckFloatInputs(attrs, in, {0, 1, 2}));
  GG_ASSIGN_OR_RETURN(WindowParams p, ParsePoolAttrs(attrs));
  GG_ASSIGN_OR_RETURN(Geometry g, PoolGeometry(in[0].shape, p));
  const std::string expected =
      absl::StrCat("the pooled shape of orig_input ", in[0].shape.DebugString(),
                   ", which is");
  GG_RETURN_IF_ERROR(CheckShapeMatches(in[1].shape, g.output_shape(),
                                       "orig_output", expected));
  GG_RETURN_IF_ERROR(
      CheckShapeMatches(in[2].shape, g.output_shape(), "grad", expected));
  return std::vector<OutputInfo>{{DT_FLOAT, in[0].shape}};
}

// TensorFlow's _MaxPoolGrad: the gradient goes to each window's maximum.
absl::StatusOr<Grads> MaxPoolGradFn(const GradContext& ctx) {
  if (!ctx.grad_outputs[0].has_value()) return Grads(1);
  const Output& input = ctx.node.inputs[0];
  GG_ASSIGN_OR_RETURN(
      NodeHandle dx,
      BuildNode(*input.graph(), "MaxPoolGrad", GradName(ctx, "MaxPoolGrad"),
                {input, ctx.outputs[0], *ctx.grad_outputs[0]}, {},
                ctx.node.attrs));
  return Grads{Output(dx, 0)};
}

// Attributes of MaxPool and MaxPoolGrad, as TensorFlow declares them.
std::vector<AttrSpec> PoolAttrs() {
  return {{"T", "type", AttrValue(DT_FLOAT)},
          {"ksize", "list(int)"},
          {"strides", "list(int)"},
          {"padding", "string"},
          {"explicit_paddings", "list(int)", AttrValue(std::vector<int64_t>{})},
          {"data_format", "string", AttrValue(std::string("NHWC"))}};
}

// --- AvgPool, AvgPoolGrad ---

// The mean of each window clipped to the input: SAME's padding is left out
// of the count, as TensorFlow's AvgPool.
absl::Status AvgPoolKernel(OpKernelContext& ctx, const WindowParams& p) {
  const Tensor& input = ctx.input(0);
  GG_RETURN_IF_ERROR(InContext(ctx, CheckFloatTensors({&input})));
  absl::StatusOr<Geometry> g = PoolGeometry(input.shape(), p);
  GG_RETURN_IF_ERROR(InContext(ctx, g.status()));
  GG_ASSIGN_OR_RETURN(Tensor * out,
                      ctx.allocate_output(0, DT_FLOAT, g->output_shape()));
  const float* in = input.data<float>().data();
  float* o = out->mutable_data<float>().data();
  const int64_t c = g->in_c;
  ForEachPoolWindow(*g, [&](int64_t image, int64_t y0, int64_t y1, int64_t x0,
                            int64_t x1, int64_t at) {
    float* sum = o + at;
    std::fill_n(sum, c, 0.f);
    for (int64_t y = y0; y < y1; ++y) {
      for (int64_t x = x0; x < x1; ++x) {
        const float* v = in + image + (y * g->in_w + x) * c;
        for (int64_t ch = 0; ch < c; ++ch) sum[ch] += v[ch];
      }
    }
    const float inv = 1.f / static_cast<float>((y1 - y0) * (x1 - x0));
    for (int64_t ch = 0; ch < c; ++ch) sum[ch] *= inv;
  });
  return absl::OkStatus();
}

// Each window's `grad` shared evenly among the input pixels it averaged.
absl::Status AvgPoolGradKernel(OpKernelContext& ctx, const WindowParams& p) {
  const Tensor& grad = ctx.input(1);
  GG_RETURN_IF_ERROR(InContext(ctx, CheckFloatTensors({&grad})));
  absl::StatusOr<TensorShape> shape =
      SizesTensorShape(ctx.input(0), "orig_input_shape");
  GG_RETURN_IF_ERROR(InContext(ctx, shape.status()));
  absl::StatusOr<Geometry> g = PoolGeometry(*shape, p);
  GG_RETURN_IF_ERROR(InContext(ctx, g.status()));
  GG_RETURN_IF_ERROR(InContext(
      ctx,
      CheckShapeMatches(grad.shape(), g->output_shape(), "grad",
                        absl::StrCat("the pooled shape of ",
                                     shape->DebugString(), ", which is"))));
  GG_ASSIGN_OR_RETURN(Tensor * dx, ctx.allocate_output(0, DT_FLOAT, *shape));
  float* d = dx->mutable_data<float>().data();
  std::fill_n(d, dx->num_elements(), 0.f);
  const float* gr = grad.data<float>().data();
  const int64_t c = g->in_c;
  ForEachPoolWindow(*g, [&](int64_t image, int64_t y0, int64_t y1, int64_t x0,
                            int64_t x1, int64_t at) {
    const float inv = 1.f / static_cast<float>((y1 - y0) * (x1 - x0));
    for (int64_t y = y0; y < y1; ++y) {
      for (int64_t x = x0; x < x1; ++x) {
        float* v = d + image + (y * g->in_w + x) * c;
        for (int64_t ch = 0; ch < c; ++ch) v[ch] += gr[at + ch] * inv;
      }
    }
  });
  return absl::OkStatus();
}

absl::StatusOr<std::vector<OutputInfo>> AvgPoolGradShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(CheckFloatInputs(attrs, in, {1}));
  GG_ASSIGN_OR_RETURN(WindowParams p, ParsePoolAttrs(attrs));
  GG_ASSIGN_OR_RETURN(TensorShape sizes,
                      SizesInputShape(in[0], "orig_input_shape"));
  // Unknown sizes: the batch and channels from grad.
  if (in[1].shape.dims() == 4) {
    sizes = Merge(sizes, TensorShape{in[1].shape[0], -1, -1, in[1].shape[3]});
  }
  GG_ASSIGN_OR_RETURN(Geometry g, PoolGeometry(sizes, p));
  GG_RETURN_IF_ERROR(CheckShapeMatches(
      in[1].shape, g.output_shape(), "grad",
      absl::StrCat("the pooled shape of ", sizes.DebugString(), ", which is")));
  return std::vector<OutputInfo>{{DT_FLOAT, sizes}};
}

// TensorFlow's _AvgPoolGrad: AvgPoolGrad of the input's Shape.
absl::StatusOr<Grads> AvgPoolGradFn(const GradContext& ctx) {
  if (!ctx.grad_outputs[0].has_value()) return Grads(1);
  const Output& input = ctx.node.inputs[0];
  GG_ASSIGN_OR_RETURN(Output shape,
                      ops::Shape(input, {.name = GradName(ctx, "Shape")}));
  GG_ASSIGN_OR_RETURN(
      NodeHandle dx,
      BuildNode(*input.graph(), "AvgPoolGrad", GradName(ctx, "AvgPoolGrad"),
                {shape, *ctx.grad_outputs[0]}, {}, ctx.node.attrs));
  return Grads{Output(dx, 0)};
}

// Attributes of AvgPool and AvgPoolGrad, as TensorFlow declares them (no
// explicit_paddings).
std::vector<AttrSpec> AvgPoolAttrs() {
  return {{"ksize", "list(int)"},
          {"strides", "list(int)"},
          {"padding", "string"},
          {"data_format", "string", AttrValue(std::string("NHWC"))},
          {"T", "type", AttrValue(DT_FLOAT)}};
}

// --- FusedBatchNormV3, FusedBatchNormGradV3 ---

struct BatchNormParams {
  float epsilon = 0.0001f;
  float exponential_avg_factor = 1.0f;
  bool is_training = true;
};

absl::StatusOr<BatchNormParams> ParseBatchNormAttrs(const AttrMap& attrs) {
  GG_RETURN_IF_ERROR(CheckNhwc(attrs));
  BatchNormParams p;
  GG_ASSIGN_OR_RETURN(p.epsilon, GetAttr<float>(attrs, "epsilon"));
  p.exponential_avg_factor =
      GetAttrOr<float>(attrs, "exponential_avg_factor", 1.0f);
  GG_ASSIGN_OR_RETURN(p.is_training, GetAttr<bool>(attrs, "is_training"));
  if (!(p.epsilon >= 0)) {
    return Invalid(absl::StrCat("epsilon ", p.epsilon, " must be >= 0"));
  }
  return p;
}

// Training with factor 1 ignores the mean and variance inputs (TensorFlow
// lets them be empty then).
bool UsesPopulationStats(const BatchNormParams& p) {
  return !p.is_training || p.exponential_avg_factor != 1.0f;
}

// T and U (float only), and the inputs' dtypes: `t_inputs` of type T, the
// rest of type U, except the grad op's scale, which is always float.
absl::Status CheckBatchNormTypes(const AttrMap& attrs,
                                 absl::Span<const InputInfo> in,
                                 int num_t_inputs) {
  GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
  GG_ASSIGN_OR_RETURN(DataType u, GetAttr<DataType>(attrs, "U"));
  GG_RETURN_IF_ERROR(op_util::CheckDtype(t, {DT_FLOAT}, "T"));
  GG_RETURN_IF_ERROR(op_util::CheckDtype(u, {DT_FLOAT}, "U"));
  for (size_t i = 0; i < in.size(); ++i) {
    const DataType want = static_cast<int>(i) < num_t_inputs ? t : u;
    if (in[i].dtype != want) {
      return Invalid(absl::StrCat("input ", i, " is ",
                                  DataTypeString(in[i].dtype), ", expected ",
                                  DataTypeString(want)));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBatchNormX(const TensorShape& x, absl::string_view name) {
  if (x.dims() != 4) {
    return Invalid(absl::StrCat(
        name, " must be 4-D NHWC [batch, height, width, channels], got ",
        x.DebugString(),
        " (TensorFlow's fused batch norm takes no other rank)"));
  }
  return absl::OkStatus();
}

// `v` must be [channels]; `channels` (-1: unknown) is merged with it.
absl::Status MergeChannelVector(const TensorShape& v, absl::string_view name,
                                const TensorShape& x, int64_t& channels) {
  if (v.dims() != 1 || (channels >= 0 && v[0] >= 0 && v[0] != channels)) {
    return Invalid(absl::StrCat(name, " ", v.DebugString(),
                                " must be a vector of x ", x.DebugString(),
                                "'s ", channels, " channels"));
  }
  if (channels < 0) channels = v[0];
  return absl::OkStatus();
}

absl::StatusOr<std::vector<OutputInfo>> FusedBatchNormV3Shape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(CheckBatchNormTypes(attrs, in, 1));
  GG_ASSIGN_OR_RETURN(BatchNormParams p, ParseBatchNormAttrs(attrs));
  const TensorShape& x = in[0].shape;
  GG_RETURN_IF_ERROR(CheckBatchNormX(x, "x"));
  int64_t c = x[3];
  GG_RETURN_IF_ERROR(MergeChannelVector(in[1].shape, "scale", x, c));
  GG_RETURN_IF_ERROR(MergeChannelVector(in[2].shape, "offset", x, c));
  if (UsesPopulationStats(p)) {
    GG_RETURN_IF_ERROR(MergeChannelVector(in[3].shape, "mean", x, c));
    GG_RETURN_IF_ERROR(MergeChannelVector(in[4].shape, "variance", x, c));
  }
  const OutputInfo vec{DT_FLOAT, TensorShape{c}};
  return std::vector<OutputInfo>{{DT_FLOAT, TensorShape{x[0], x[1], x[2], c}},
                                 vec,
                                 vec,
                                 vec,
                                 vec,
                                 {DT_FLOAT, TensorShape{}}};
}

absl::StatusOr<std::vector<OutputInfo>> FusedBatchNormGradV3Shape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_RETURN_IF_ERROR(CheckBatchNormTypes(attrs, in, 3));
  GG_RETURN_IF_ERROR(ParseBatchNormAttrs(attrs).status());
  const TensorShape& dy = in[0].shape;
  const TensorShape& x = in[1].shape;
  GG_RETURN_IF_ERROR(CheckBatchNormX(dy, "y_backprop"));
  GG_RETURN_IF_ERROR(CheckBatchNormX(x, "x"));
  GG_RETURN_IF_ERROR(CheckShapeMatches(dy, x, "y_backprop", "x"));
  TensorShape merged = Merge(x, dy);
  int64_t c = merged[3];
  GG_RETURN_IF_ERROR(MergeChannelVector(in[2].shape, "scale", x, c));
  GG_RETURN_IF_ERROR(MergeChannelVector(in[3].shape, "reserve_space_1", x, c));
  GG_RETURN_IF_ERROR(MergeChannelVector(in[4].shape, "reserve_space_2", x, c));
  merged.set_dim(3, c);
  const OutputInfo vec{DT_FLOAT, TensorShape{c}};
  const OutputInfo empty{DT_FLOAT, TensorShape{0}};
  return std::vector<OutputInfo>{{DT_FLOAT, merged}, vec, vec, empty, empty};
}

// The same checks on the kernel's tensors: x 4-D, each vector [channels].
absl::Status CheckBatchNormTensors(const Tensor& x,
                                   std::initializer_list<const Tensor*> vectors,
                                   std::initializer_list<const char*> names) {
  GG_RETURN_IF_ERROR(CheckBatchNormX(x.shape(), "x"));
  int64_t c = x.shape()[3];
  auto name = names.begin();
  for (const Tensor* v : vectors) {
    GG_RETURN_IF_ERROR(MergeChannelVector(v->shape(), *name++, x.shape(), c));
  }
  return absl::OkStatus();
}

// Per-channel sums over the rows of a [rows, c] matrix, in double.
template <typename F>
void ChannelSums(int64_t rows, int64_t c, std::vector<double>& sum, F&& f) {
  sum.assign(c, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t ch = 0; ch < c; ++ch) sum[ch] += f(r * c + ch, ch);
  }
}

absl::Status FusedBatchNormV3Kernel(OpKernelContext& ctx,
                                    const BatchNormParams& p) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor& offset = ctx.input(2);
  const Tensor& mean_in = ctx.input(3);
  const Tensor& var_in = ctx.input(4);
  GG_RETURN_IF_ERROR(InContext(
      ctx, CheckFloatTensors({&x, &scale, &offset, &mean_in, &var_in})));
  GG_RETURN_IF_ERROR(InContext(
      ctx,
      UsesPopulationStats(p)
          ? CheckBatchNormTensors(x, {&scale, &offset, &mean_in, &var_in},
                                  {"scale", "offset", "mean", "variance"})
          : CheckBatchNormTensors(x, {&scale, &offset}, {"scale", "offset"})));
  const int64_t c = x.shape()[3];
  const int64_t rows = c > 0 ? x.num_elements() / c : 0;
  GG_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DT_FLOAT, x.shape()));
  float* stats[4];
  for (int i = 0; i < 4; ++i) {
    GG_ASSIGN_OR_RETURN(Tensor * t,
                        ctx.allocate_output(i + 1, DT_FLOAT, TensorShape{c}));
    stats[i] = t->mutable_data<float>().data();
  }
  GG_ASSIGN_OR_RETURN(Tensor * rs3,
                      ctx.allocate_output(5, DT_FLOAT, TensorShape{}));
  rs3->mutable_data<float>()[0] = 0.f;
  const float* xv = x.data<float>().data();
  const float* sc = scale.data<float>().data();
  const float* of = offset.data<float>().data();
  std::vector<float> mean(c), var(c);
  if (p.is_training) {
    std::vector<double> sum;
    ChannelSums(rows, c, sum, [&](int64_t i, int64_t) { return xv[i]; });
    for (int64_t ch = 0; ch < c; ++ch) mean[ch] = sum[ch] / rows;
    ChannelSums(rows, c, sum, [&](int64_t i, int64_t ch) {
      const double d = xv[i] - mean[ch];
      return d * d;
    });
    for (int64_t ch = 0; ch < c; ++ch) var[ch] = sum[ch] / rows;
    // Bessel's correction for the reported variance, as TensorFlow.
    const double unbias = rows > 1 ? static_cast<double>(rows) / (rows - 1) : 1;
    const float f = p.exponential_avg_factor;
    for (int64_t ch = 0; ch < c; ++ch) {
      const float unbiased = static_cast<float>(var[ch] * unbias);
      stats[0][ch] = f == 1.0f
                         ? mean[ch]
                         : (1 - f) * mean_in.data<float>()[ch] + f * mean[ch];
      stats[1][ch] = f == 1.0f
                         ? unbiased
                         : (1 - f) * var_in.data<float>()[ch] + f * unbiased;
      stats[2][ch] = mean[ch];
      stats[3][ch] = var[ch];
    }
  } else {
    std::copy_n(mean_in.data<float>().data(), c, mean.data());
    std::copy_n(var_in.data<float>().data(), c, var.data());
    for (int64_t ch = 0; ch < c; ++ch) {
      stats[0][ch] = stats[2][ch] = mean[ch];
      stats[1][ch] = stats[3][ch] = var[ch];
    }
  }
  // y = x * a + b per channel, a = scale / sqrt(var + eps).
  std::vector<float> a(c), b(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    a[ch] = sc[ch] / std::sqrt(var[ch] + p.epsilon);
    b[ch] = of[ch] - mean[ch] * a[ch];
  }
  float* yv = y->mutable_data<float>().data();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t ch = 0; ch < c; ++ch) {
      yv[r * c + ch] = xv[r * c + ch] * a[ch] + b[ch];
    }
  }
  return absl::OkStatus();
}

absl::Status FusedBatchNormGradV3Kernel(OpKernelContext& ctx,
                                        const BatchNormParams& p) {
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& scale = ctx.input(2);
  const Tensor& mean_t = ctx.input(3);
  const Tensor& var_t = ctx.input(4);
  GG_RETURN_IF_ERROR(
      InContext(ctx, CheckFloatTensors({&dy, &x, &scale, &mean_t, &var_t})));
  GG_RETURN_IF_ERROR(InContext(
      ctx,
      CheckBatchNormTensors(x, {&scale, &mean_t, &var_t},
                            {"scale", "reserve_space_1", "reserve_space_2"})));
  if (dy.shape() != x.shape()) {
    return ctx.InvalidArgument(
        absl::StrCat("y_backprop ", dy.shape().DebugString(),
                     " does not match x ", x.shape().DebugString()));
  }
  const int64_t c = x.shape()[3];
  const int64_t rows = c > 0 ? x.num_elements() / c : 0;
  GG_ASSIGN_OR_RETURN(Tensor * dx, ctx.allocate_output(0, DT_FLOAT, x.shape()));
  GG_ASSIGN_OR_RETURN(Tensor * dscale,
                      ctx.allocate_output(1, DT_FLOAT, TensorShape{c}));
  GG_ASSIGN_OR_RETURN(Tensor * doffset,
                      ctx.allocate_output(2, DT_FLOAT, TensorShape{c}));
  GG_RETURN_IF_ERROR(ctx.allocate_output(3, DT_FLOAT, TensorShape{0}).status());
  GG_RETURN_IF_ERROR(ctx.allocate_output(4, DT_FLOAT, TensorShape{0}).status());
  const float* g = dy.data<float>().data();
  const float* xv = x.data<float>().data();
  const float* sc = scale.data<float>().data();
  const float* mean = mean_t.data<float>().data();
  std::vector<double> inv(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    inv[ch] = 1.0 / std::sqrt(static_cast<double>(var_t.data<float>()[ch]) +
                              p.epsilon);
  }
  std::vector<double> sum_g, sum_gx;
  ChannelSums(rows, c, sum_g, [&](int64_t i, int64_t) { return g[i]; });
  ChannelSums(rows, c, sum_gx, [&](int64_t i, int64_t ch) {
    return static_cast<double>(g[i]) * (xv[i] - mean[ch]);
  });
  float* ds = dscale->mutable_data<float>().data();
  float* dof = doffset->mutable_data<float>().data();
  // dx = scale * inv * (g - mean(g) - (x - mean) * inv^2 * mean(g * (x -
  // mean))) in training; scale * inv * g with fixed statistics.
  std::vector<double> k(c), shift(c), slope(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    ds[ch] = static_cast<float>(sum_gx[ch] * inv[ch]);
    dof[ch] = static_cast<float>(sum_g[ch]);
    k[ch] = sc[ch] * inv[ch];
    shift[ch] = p.is_training && rows > 0 ? sum_g[ch] / rows : 0.0;
    slope[ch] =
        p.is_training && rows > 0 ? inv[ch] * inv[ch] * sum_gx[ch] / rows : 0.0;
  }
  float* d = dx->mutable_data<float>().data();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t i = r * c + ch;
      d[i] = static_cast<float>(
          k[ch] * (g[i] - shift[ch] - (xv[i] - mean[ch]) * slope[ch]));
    }
  }
  return absl::OkStatus();
}

// TensorFlow's _FusedBatchNormV3Grad: in training the statistics are the
// forward node's reserve spaces 1 and 2, in inference the population mean
// and variance it was given. No gradient for mean and variance.
absl::StatusOr<Grads> FusedBatchNormV3Grad(const GradContext& ctx) {
  if (!ctx.grad_outputs[0].has_value()) return Grads(5);
  const bool training = GetAttrOr<bool>(ctx.node.attrs, "is_training", true);
  const Output& x = ctx.node.inputs[0];
  AttrMap attrs = ctx.node.attrs;
  attrs.erase("exponential_avg_factor");
  GG_ASSIGN_OR_RETURN(NodeHandle h,
                      BuildNode(*x.graph(), "FusedBatchNormGradV3",
                                GradName(ctx, "FusedBatchNormGradV3"),
                                {*ctx.grad_outputs[0], x, ctx.node.inputs[1],
                                 training ? ctx.outputs[3] : ctx.node.inputs[3],
                                 training ? ctx.outputs[4] : ctx.node.inputs[4],
                                 ctx.outputs[5]},
                                {}, std::move(attrs)));
  return Grads{Output(h, 0), Output(h, 1), Output(h, 2), std::nullopt,
               std::nullopt};
}

std::vector<AttrSpec> BatchNormAttrs(bool forward) {
  std::vector<AttrSpec> a = {
      {"T", "type"},
      {"U", "type"},
      {"epsilon", "float", AttrValue(0.0001f)},
      {"data_format", "string", AttrValue(std::string("NHWC"))},
      {"is_training", "bool", AttrValue(true)}};
  if (forward) {
    a.push_back({"exponential_avg_factor", "float", AttrValue(1.0f)});
  }
  return a;
}

}  // namespace

void RegisterConvOps(OpRegistry& r) {
  MustRegister(
      r, MakeOp("Conv2D", {"input", "filter"}, 1, ConvAttrs(), Conv2DShape,
                BindKernel(ParseConvAttrs, ConvKernel<ConvResult::kOutput>),
                Conv2DGrad));
  MustRegister(
      r,
      MakeOp("Conv2DBackpropInput", {"input_sizes", "filter", "out_backprop"},
             1, ConvAttrs(), Conv2DBackpropInputShape,
             BindKernel(ParseConvAttrs, ConvKernel<ConvResult::kInputGrad>),
             Conv2DBackpropInputGrad));
  MustRegister(
      r,
      MakeOp("Conv2DBackpropFilter", {"input", "filter_sizes", "out_backprop"},
             1, ConvAttrs(), Conv2DBackpropFilterShape,
             BindKernel(ParseConvAttrs, ConvKernel<ConvResult::kFilterGrad>)));
  MustRegister(
      r, MakeOp("MaxPool", {"input"}, 1, PoolAttrs(), MaxPoolShape,
                BindKernel(ParsePoolAttrs, MaxPoolKernel), MaxPoolGradFn));
  MustRegister(r, MakeOp("MaxPoolGrad", {"orig_input", "orig_output", "grad"},
                         1, PoolAttrs(), MaxPoolGradShape,
                         BindKernel(ParsePoolAttrs, MaxPoolGradKernel)));
  MustRegister(
      r, MakeOp("AvgPool", {"value"}, 1, AvgPoolAttrs(), MaxPoolShape,
                BindKernel(ParsePoolAttrs, AvgPoolKernel), AvgPoolGradFn));
  MustRegister(r, MakeOp("AvgPoolGrad", {"orig_input_shape", "grad"}, 1,
                         AvgPoolAttrs(), AvgPoolGradShape,
                         BindKernel(ParsePoolAttrs, AvgPoolGradKernel)));
  MustRegister(
      r,
      MakeOp("FusedBatchNormV3", {"x", "scale", "offset", "mean", "variance"},
             6, BatchNormAttrs(true), FusedBatchNormV3Shape,
             BindKernel(ParseBatchNormAttrs, FusedBatchNormV3Kernel),
             FusedBatchNormV3Grad));
  MustRegister(
      r, MakeOp("FusedBatchNormGradV3",
                {"y_backprop", "x", "scale", "reserve_space_1",
                 "reserve_space_2", "reserve_space_3"},
                5, BatchNormAttrs(false), FusedBatchNormGradV3Shape,
                BindKernel(ParseBatchNormAttrs, FusedBatchNormGradV3Kernel)));
}

namespace ops {
namespace {

absl::StatusOr<Output> BuildPool(absl::string_view op,
                                 std::vector<BuildInput> inputs,
                                 const Output& first, DataType t,
                                 PoolOptions options) {
  if (!first.valid()) {
    return Invalid(absl::StrCat(op, " '",
                                options.name.empty() ? op : options.name,
                                "': input 0 is an empty Output"));
  }
  GG_ASSIGN_OR_RETURN(
      NodeHandle h,
      BuildNode(*first.graph(), op, options.name, std::move(inputs),
                std::move(options.control_inputs),
                {{"T", t},
                 {"ksize", options.ksize},
                 {"strides", options.strides},
                 {"padding", options.padding},
                 {"data_format", options.data_format}}));
  return Output(std::move(h), 0);
}

}  // namespace

absl::StatusOr<Output> AvgPool(const Output& value, PoolOptions options) {
  return BuildPool("AvgPool", {value}, value,
                   value.valid() ? value.dtype() : DT_FLOAT,
                   std::move(options));
}

absl::StatusOr<Output> AvgPoolGrad(const Output& orig_input_shape,
                                   const Output& grad, PoolOptions options) {
  return BuildPool("AvgPoolGrad", {orig_input_shape, grad}, orig_input_shape,
                   grad.valid() ? grad.dtype() : DT_FLOAT, std::move(options));
}

}  // namespace ops
}  // namespace graphgc
