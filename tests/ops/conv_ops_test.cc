#include "ops/conv_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/gradients.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "serialize/graph_def.h"
#include "tests/ops/kernel_test_util.h"

namespace graphgc {
namespace {

using testing::F;
using ::testing::HasSubstr;
using testing::I32;
using testing::RandomTensor;
using testing::Values;

// --- straightforward loop references (NHWC, TensorFlow's window rule) ---

struct Window {
  int64_t out = 0;
  int64_t pad = 0;  // before
};

Window WindowOf(int64_t in, int64_t k, int64_t s, const std::string& padding) {
  Window w;
  if (padding == "VALID") {
    w.out = (in - k) / s + 1;
  } else {
    w.out = (in + s - 1) / s;
    w.pad = std::max<int64_t>((w.out - 1) * s + k - in, 0) / 2;
  }
  return w;
}

// One conv configuration: input [n, h, w, c], filter [kh, kw, c, oc].
struct ConvCase {
  int64_t n, h, w, c, kh, kw, oc, sh, sw;
  std::string padding;
  std::string Name() const {
    return absl::StrCat("input [", n, ",", h, ",", w, ",", c, "] filter [", kh,
                        ",", kw, ",", c, ",", oc, "] strides ", sh, "x", sw,
                        " ", padding);
  }
};

// Odd sizes, strides 1 and 2 (and 3), both paddings, a 1 x 1 filter, an even
// filter under SAME (more padding after than before) and a filter larger than
// the input under SAME.
const ConvCase kConvCases[] = {
    {1, 5, 5, 1, 3, 3, 1, 1, 1, "VALID"}, {2, 7, 6, 3, 3, 2, 4, 2, 2, "SAME"},
    {2, 7, 6, 3, 3, 2, 4, 2, 2, "VALID"}, {1, 4, 4, 2, 1, 1, 3, 1, 1, "SAME"},
    {2, 5, 7, 2, 4, 4, 3, 2, 1, "SAME"},  {1, 3, 3, 2, 5, 5, 2, 1, 1, "SAME"},
    {1, 9, 9, 1, 3, 3, 2, 3, 3, "VALID"}, {3, 6, 5, 2, 2, 3, 1, 1, 2, "SAME"},
};

TensorShape OutShape(const ConvCase& k) {
  return TensorShape{k.n, WindowOf(k.h, k.kh, k.sh, k.padding).out,
                     WindowOf(k.w, k.kw, k.sw, k.padding).out, k.oc};
}

// Calls f(x_index, filter_index, y_index) for every product
// x[b, iy, ix, ci] * filter[ky, kx, ci, co] that adds to y[b, oy, ox, co]
// (padding taps skipped): the conv and both its backprops follow from it.
template <typename Fn>
void ForEachProduct(const ConvCase& k, Fn&& f) {
  const Window wy = WindowOf(k.h, k.kh, k.sh, k.padding);
  const Window wx = WindowOf(k.w, k.kw, k.sw, k.padding);
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t oy = 0; oy < wy.out; ++oy)
      for (int64_t ox = 0; ox < wx.out; ++ox)
        for (int64_t ky = 0; ky < k.kh; ++ky)
          for (int64_t kx = 0; kx < k.kw; ++kx) {
            const int64_t iy = oy * k.sh - wy.pad + ky;
            const int64_t ix = ox * k.sw - wx.pad + kx;
            if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
            for (int64_t ci = 0; ci < k.c; ++ci)
              for (int64_t co = 0; co < k.oc; ++co)
                f(((b * k.h + iy) * k.w + ix) * k.c + ci,
                  ((ky * k.kw + kx) * k.c + ci) * k.oc + co,
                  ((b * wy.out + oy) * wx.out + ox) * k.oc + co);
          }
}

// The sum over all products of a[ia] * b[ib] into out[io], where `pick`
// maps the (x, filter, y) indices of a product to (ia, ib, io).
template <typename Pick>
std::vector<double> ReferenceSum(const ConvCase& k, const Tensor& a,
                                 const Tensor& b, int64_t size, Pick pick) {
  std::vector<double> out(size, 0.0);
  const auto av = a.data<float>();
  const auto bv = b.data<float>();
  ForEachProduct(k, [&](int64_t xi, int64_t fi, int64_t yi) {
    const auto [ia, ib, io] = pick(xi, fi, yi);
    out[io] += static_cast<double>(av[ia]) * bv[ib];
  });
  return out;
}

std::vector<double> ReferenceConv(const ConvCase& k, const Tensor& x,
                                  const Tensor& f) {
  return ReferenceSum(k, x, f, OutShape(k).num_elements(),
                      [](int64_t xi, int64_t fi, int64_t yi) {
                        return std::tuple(xi, fi, yi);
                      });
}

std::vector<double> ReferenceConvBackpropInput(const ConvCase& k,
                                               const Tensor& f,
                                               const Tensor& dy) {
  return ReferenceSum(k, f, dy, k.n * k.h * k.w * k.c,
                      [](int64_t xi, int64_t fi, int64_t yi) {
                        return std::tuple(fi, yi, xi);
                      });
}

std::vector<double> ReferenceConvBackpropFilter(const ConvCase& k,
                                                const Tensor& x,
                                                const Tensor& dy) {
  return ReferenceSum(k, x, dy, k.kh * k.kw * k.c * k.oc,
                      [](int64_t xi, int64_t fi, int64_t yi) {
                        return std::tuple(xi, yi, fi);
                      });
}

void ExpectClose(const Tensor& got, const std::vector<double>& want,
                 const std::string& what, double tol = 1e-4) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size())) << what;
  const auto g = got.data<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(g[i], want[i], tol * std::max(1.0, std::abs(want[i])))
        << what << ", element " << i;
  }
}

// A float tensor of distinct values 0.05 apart (shuffled), so that a step
// of 1e-2 never changes which element of a window is the maximum.
Tensor DistinctTensor(const TensorShape& shape, uint32_t seed) {
  std::vector<float> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.05f * static_cast<float>(i);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return F(shape, v);
}

class ConvOpsTest : public ::testing::Test {
 protected:
  Output P(const TensorShape& shape, const std::string& name = "") {
    return ops::Placeholder(g_, DT_FLOAT, shape, {.name = name}).value();
  }
  Output C(Tensor t) { return ops::Const(g_, std::move(t)).value(); }
  Tensor Run1(const Output& y, const testing::Feeds& feeds = {}) {
    absl::StatusOr<std::vector<Tensor>> out = session_.Run(feeds, {y});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0] : Tensor();
  }

  // Checks the gradients AddGradients builds for L = sum(y * c), c fixed
  // random, with respect to each of `xs` (Placeholders fed in `feeds`),
  // against central differences of L computed in double from y as
  // Session::Run returns it: |analytic - numeric| <= tol * max(1,
  // |numeric|).
  void ExpectGradientsMatchFiniteDifferences(const Output& y,
                                             const std::vector<Output>& xs,
                                             const testing::Feeds& feeds,
                                             double step = 1e-2,
                                             double tol = 1e-2) {
    const Tensor y0 = Run1(y, feeds);
    const Tensor c = RandomTensor(y0.shape(), 11);
    absl::StatusOr<std::vector<Output>> grads = AddGradients(y, xs, C(c));
    ASSERT_TRUE(grads.ok()) << grads.status();
    absl::StatusOr<std::vector<Tensor>> analytic = session_.Run(feeds, *grads);
    ASSERT_TRUE(analytic.ok()) << analytic.status();
    auto loss = [&](const testing::Feeds& f) {
      const Tensor yv = Run1(y, f);
      double l = 0;
      for (int64_t k = 0; k < yv.num_elements(); ++k) {
        l += static_cast<double>(yv.data<float>()[k]) * c.data<float>()[k];
      }
      return l;
    };
    for (size_t i = 0; i < xs.size(); ++i) {
      size_t fi = 0;
      while (fi < feeds.size() && !(feeds[fi].first == xs[i])) ++fi;
      ASSERT_LT(fi, feeds.size()) << "x " << i << " is not fed";
      const Tensor& x0 = feeds[fi].second;
      ASSERT_EQ((*analytic)[i].shape(), x0.shape());
      const std::vector<float> base = Values(x0);
      for (int64_t j = 0; j < x0.num_elements(); ++j) {
        testing::Feeds plus = feeds, minus = feeds;
        std::vector<float> vp = base, vm = base;
        vp[j] += static_cast<float>(step);
        vm[j] -= static_cast<float>(step);
        plus[fi].second = F(x0.shape(), vp);
        minus[fi].second = F(x0.shape(), vm);
        const double numeric =
            (loss(plus) - loss(minus)) / (static_cast<double>(vp[j]) - vm[j]);
        const double a = (*analytic)[i].data<float>()[j];
        EXPECT_NEAR(a, numeric, tol * std::max(1.0, std::abs(numeric)))
            << "x " << i << " element " << j;
      }
    }
  }

  // Expects `r` to fail with InvalidArgument naming `op 'name'` and holding
  // every one of `parts`, and the graph to hold as many nodes as before.
  template <typename T>
  void ExpectRefused(const absl::StatusOr<T>& r, int64_t nodes_before,
                     const std::string& prefix,
                     std::vector<std::string> parts) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(prefix));
    for (const std::string& p : parts) {
      EXPECT_THAT(r.status().message(), HasSubstr(p));
    }
    EXPECT_EQ(g_.num_nodes(), nodes_before);
  }

  Graph g_;
  Session session_{g_};
};

// --- Conv2D ---

TEST_F(ConvOpsTest, Conv2DMatchesALoopReference) {
  uint32_t seed = 1;
  for (const ConvCase& k : kConvCases) {
    const Tensor x = RandomTensor({k.n, k.h, k.w, k.c}, seed++);
    const Tensor f = RandomTensor({k.kh, k.kw, k.c, k.oc}, seed++);
    Output y =
        ops::Conv2D(C(x), C(f),
                    {.strides = {1, k.sh, k.sw, 1}, .padding = k.padding})
            .value();
    EXPECT_EQ(y.shape(), OutShape(k)) << k.Name();
    const Tensor out = Run1(y);
    EXPECT_EQ(out.shape(), OutShape(k)) << k.Name();
    ExpectClose(out, ReferenceConv(k, x, f), k.Name());
  }
}

TEST_F(ConvOpsTest, Conv2DInfersStaticOutputShapes) {
  Output x = P({-1, 28, 27, 3});
  Output f = P({5, 5, 3, 8});
  EXPECT_EQ(ops::Conv2D(x, f, {.strides = {1, 2, 2, 1}, .padding = "SAME"})
                .value()
                .shape(),
            (TensorShape{-1, 14, 14, 8}));
  EXPECT_EQ(ops::Conv2D(x, f, {.padding = "VALID"}).value().shape(),
            (TensorShape{-1, 24, 23, 8}));
  EXPECT_EQ(ops::Conv2D(P({2, -1, 9, 3}), f, {.strides = {1, 1, 3, 1}})
                .value()
                .shape(),
            (TensorShape{2, -1, 2, 8}));
}

TEST_F(ConvOpsTest, Conv2DRejectsMismatchedChannels) {
  Output x = P({1, 5, 5, 3});
  Output f = P({3, 3, 4, 8});
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::Conv2D(x, f, {.name = "conv"}), before, "Conv2D 'conv'",
                {"[1,5,5,3]", "[3,3,4,8]", "3 channels", "expects 4"});
}

TEST_F(ConvOpsTest, Conv2DRejectsFilterLargerThanInputWithValidPadding) {
  Output x = P({1, 5, 5, 1});
  Output f = P({6, 3, 1, 1});
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::Conv2D(x, f, {.name = "conv", .padding = "VALID"}), before,
                "Conv2D 'conv'",
                {"filter height 6 is larger than the input height 5", "VALID",
                 "[1,5,5,1]", "[6,3,1,1]"});
}

TEST_F(ConvOpsTest, Conv2DRejectsInputsThatAreNot4D) {
  Output x = P({5, 5, 1});
  Output f = P({3, 3, 1, 1});
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::Conv2D(x, f, {.name = "conv"}), before, "Conv2D 'conv'",
                {"input must be 4-D", "[5,5,1]", "[3,3,1,1]"});
}

TEST_F(ConvOpsTest, Conv2DRejectsNonPositiveStrides) {
  Output x = P({1, 5, 5, 1});
  Output f = P({3, 3, 1, 1});
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::Conv2D(x, f, {.name = "conv", .strides = {1, 0, 1, 1}}),
                before, "Conv2D 'conv'", {"strides [1,0,1,1]", "positive"});
  ExpectRefused(ops::Conv2D(x, f, {.name = "conv", .strides = {1, 1}}), before,
                "Conv2D 'conv'", {"strides must have 4 entries"});
}

TEST_F(ConvOpsTest, Conv2DRejectsUnknownPadding) {
  Output x = P({1, 5, 5, 1});
  Output f = P({3, 3, 1, 1});
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::Conv2D(x, f, {.name = "conv", .padding = "FULL"}), before,
                "Conv2D 'conv'", {"unknown padding \"FULL\""});
  ExpectRefused(ops::Conv2D(x, f, {.name = "conv", .padding = "EXPLICIT"}),
                before, "Conv2D 'conv'", {"EXPLICIT\" is not supported"});
}

TEST_F(ConvOpsTest, Conv2DRejectsNchwAndDilations) {
  Output x = P({1, 5, 5, 1});
  Output f = P({3, 3, 1, 1});
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::Conv2D(x, f, {.name = "conv", .data_format = "NCHW"}),
                before, "Conv2D 'conv'", {"data_format \"NCHW\""});
  ExpectRefused(ops::Conv2D(x, f, {.name = "conv", .dilations = {1, 2, 2, 1}}),
                before, "Conv2D 'conv'",
                {"dilations [1,2,2,1] are not supported"});
}

TEST_F(ConvOpsTest, Conv2DRejectsIntegerInputs) {
  Output x = ops::Placeholder(g_, DT_INT32, {1, 5, 5, 1}).value();
  Output f = ops::Placeholder(g_, DT_INT32, {3, 3, 1, 1}).value();
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::Conv2D(x, f, {.name = "conv"}), before, "Conv2D 'conv'",
                {"T must be one of {float}, got int32"});
}

TEST_F(ConvOpsTest, Conv2DReportsShapesKnownOnlyAtRunTime) {
  Output x = P({-1, -1, -1, -1}, "x");
  Output f = C(RandomTensor({3, 3, 2, 1}, 1));
  Output y = ops::Conv2D(x, f, {.name = "conv"}).value();
  EXPECT_EQ(y.shape(), (TensorShape{-1, -1, -1, 1}));
  absl::StatusOr<std::vector<Tensor>> r =
      session_.Run({{x, RandomTensor({1, 2, 2, 2}, 2)}}, {y});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("Conv2D 'conv'"));
  EXPECT_THAT(r.status().message(),
              HasSubstr("filter height 3 is larger than the input height 2"));
  EXPECT_THAT(r.status().message(), HasSubstr("[1,2,2,2]"));
  EXPECT_THAT(r.status().message(), HasSubstr("[3,3,2,1]"));
}

TEST_F(ConvOpsTest, Conv2DOfEmptyBatchIsEmpty) {
  Output y = ops::Conv2D(C(F({0, 4, 4, 2}, {})),
                         C(RandomTensor({3, 3, 2, 5}, 1)), {.padding = "SAME"})
                 .value();
  EXPECT_EQ(Run1(y).shape(), (TensorShape{0, 4, 4, 5}));
}

// --- Conv2DBackpropInput, Conv2DBackpropFilter ---

TEST_F(ConvOpsTest, Conv2DBackpropInputMatchesALoopReference) {
  uint32_t seed = 100;
  for (const ConvCase& k : kConvCases) {
    const Tensor f = RandomTensor({k.kh, k.kw, k.c, k.oc}, seed++);
    const Tensor dy = RandomTensor(OutShape(k), seed++);
    Output dx =
        ops::Conv2DBackpropInput(
            C(I32({4}, {static_cast<int32_t>(k.n), static_cast<int32_t>(k.h),
                        static_cast<int32_t>(k.w), static_cast<int32_t>(k.c)})),
            C(f), C(dy), {.strides = {1, k.sh, k.sw, 1}, .padding = k.padding})
            .value();
    EXPECT_EQ(dx.shape(), (TensorShape{k.n, k.h, k.w, k.c})) << k.Name();
    ExpectClose(Run1(dx), ReferenceConvBackpropInput(k, f, dy), k.Name());
  }
}

TEST_F(ConvOpsTest, Conv2DBackpropFilterMatchesALoopReference) {
  uint32_t seed = 200;
  for (const ConvCase& k : kConvCases) {
    const Tensor x = RandomTensor({k.n, k.h, k.w, k.c}, seed++);
    const Tensor dy = RandomTensor(OutShape(k), seed++);
    Output df =
        ops::Conv2DBackpropFilter(
            C(x),
            C(I32({4},
                  {static_cast<int32_t>(k.kh), static_cast<int32_t>(k.kw),
                   static_cast<int32_t>(k.c), static_cast<int32_t>(k.oc)})),
            C(dy), {.strides = {1, k.sh, k.sw, 1}, .padding = k.padding})
            .value();
    EXPECT_EQ(df.shape(), (TensorShape{k.kh, k.kw, k.c, k.oc})) << k.Name();
    ExpectClose(Run1(df), ReferenceConvBackpropFilter(k, x, dy), k.Name());
  }
}

// Convs with enough work per op that a 4-thread session splits them
// (ops/parallel.h): by patch rows (forward), by images (input gradient),
// by fixed shards of rows summed in order (filter gradient); a 3 x 3 filter
// and a pointwise one, which multiplies the input in place.
TEST_F(ConvOpsTest, ConvsSplitAcrossThreadsMatchTheLoopReferences) {
  Session four(g_, {.intra_op_threads = 4});
  auto run = [&](const Output& y) {
    absl::StatusOr<std::vector<Tensor>> out = four.Run({}, {y});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0] : Tensor();
  };
  const ConvCase large[] = {{8, 24, 24, 8, 3, 3, 16, 1, 1, "SAME"},
                            {8, 24, 24, 16, 1, 1, 32, 1, 1, "SAME"}};
  uint32_t seed = 300;
  for (const ConvCase& k : large) {
    const Tensor x = RandomTensor({k.n, k.h, k.w, k.c}, seed++);
    const Tensor f = RandomTensor({k.kh, k.kw, k.c, k.oc}, seed++);
    const Tensor dy = RandomTensor(OutShape(k), seed++);
    const ops::Conv2DOptions o{.strides = {1, 1, 1, 1}, .padding = k.padding};
    auto dims = [](std::vector<int64_t> d) {
      return I32({4}, std::vector<int32_t>(d.begin(), d.end()));
    };
    ExpectClose(run(ops::Conv2D(C(x), C(f), o).value()), ReferenceConv(k, x, f),
                "forward " + k.Name());
    ExpectClose(run(ops::Conv2DBackpropInput(C(dims({k.n, k.h, k.w, k.c})),
                                             C(f), C(dy), o)
                        .value()),
                ReferenceConvBackpropInput(k, f, dy), "input " + k.Name());
    ExpectClose(run(ops::Conv2DBackpropFilter(
                        C(x), C(dims({k.kh, k.kw, k.c, k.oc})), C(dy), o)
                        .value()),
                ReferenceConvBackpropFilter(k, x, dy), "filter " + k.Name());
  }
}

TEST_F(ConvOpsTest, Conv2DBackpropInputTakesItsShapeFromShapeOfTheInput) {
  Output x = P({-1, 8, 8, 3});
  Output f = P({3, 3, 3, 4});
  Output dy = P({-1, 4, 4, 4});
  Output dx =
      ops::Conv2DBackpropInput(ops::Shape(x).value(), f, dy,
                               {.strides = {1, 2, 2, 1}, .padding = "SAME"})
          .value();
  EXPECT_EQ(dx.shape(), (TensorShape{-1, 8, 8, 3}));
}

TEST_F(ConvOpsTest, Conv2DBackpropInputRejectsOutBackpropOfAnotherShape) {
  Output sizes = C(I32({4}, {1, 8, 8, 3}));
  Output f = P({3, 3, 3, 4});
  Output dy = P({1, 5, 4, 4});
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::Conv2DBackpropInput(
                    sizes, f, dy,
                    {.name = "dx", .strides = {1, 2, 2, 1}, .padding = "SAME"}),
                before, "Conv2DBackpropInput 'dx'",
                {"out_backprop [1,5,4,4] does not match", "[1,4,4,4]",
                 "[1,8,8,3]", "[3,3,3,4]"});
}

TEST_F(ConvOpsTest, Conv2DBackpropFilterRejectsFilterSizesOfTheWrongLength) {
  Output x = P({1, 8, 8, 3});
  Output dy = P({1, 6, 6, 4});
  const int64_t before = g_.num_nodes();
  ExpectRefused(
      ops::Conv2DBackpropFilter(x, C(I32({3}, {3, 3, 3})), dy, {.name = "dw"}),
      before + 1, "Conv2DBackpropFilter 'dw'",
      {"filter_sizes must be a vector of 4 sizes", "[3]"});
}

TEST_F(ConvOpsTest, Conv2DBackpropInputReportsBadInputSizesAtRunTime) {
  Output sizes = ops::Placeholder(g_, DT_INT32, {4}, {.name = "sizes"}).value();
  Output dx =
      ops::Conv2DBackpropInput(sizes, C(RandomTensor({3, 3, 3, 4}, 1)),
                               C(RandomTensor({1, 6, 6, 4}, 2)), {.name = "dx"})
          .value();
  absl::StatusOr<std::vector<Tensor>> r =
      session_.Run({{sizes, I32({4}, {1, 8, 8, 5})}}, {dx});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("Conv2DBackpropInput 'dx'"));
  EXPECT_THAT(r.status().message(), HasSubstr("[1,8,8,5]"));
  EXPECT_THAT(r.status().message(), HasSubstr("[3,3,3,4]"));
}

TEST_F(ConvOpsTest, Conv2DGradientsMatchFiniteDifferences) {
  const ConvCase cases[] = {{2, 5, 4, 2, 3, 2, 3, 2, 2, "SAME"},
                            {1, 5, 6, 2, 2, 3, 2, 1, 2, "VALID"}};
  uint32_t seed = 300;
  for (const ConvCase& k : cases) {
    SCOPED_TRACE(k.Name());
    Output x = P({k.n, k.h, k.w, k.c});
    Output f = P({k.kh, k.kw, k.c, k.oc});
    Output y =
        ops::Conv2D(x, f, {.strides = {1, k.sh, k.sw, 1}, .padding = k.padding})
            .value();
    ExpectGradientsMatchFiniteDifferences(
        y, {x, f},
        {{x, RandomTensor({k.n, k.h, k.w, k.c}, seed++)},
         {f, RandomTensor({k.kh, k.kw, k.c, k.oc}, seed++)}});
  }
}

TEST_F(ConvOpsTest, Conv2DGradientUsesTheBackpropOps) {
  Output x = P({1, 4, 4, 1});
  Output f = P({2, 2, 1, 1});
  Output y = ops::Conv2D(x, f, {.name = "conv"}).value();
  std::vector<Output> grads = AddGradients(y, {x, f}).value();
  EXPECT_EQ(g_.Describe(grads[0].handle()).value().op, "Conv2DBackpropInput");
  EXPECT_EQ(g_.Describe(grads[1].handle()).value().op, "Conv2DBackpropFilter");
  EXPECT_EQ(grads[0].shape(), (TensorShape{1, 4, 4, 1}));
  EXPECT_EQ(grads[1].shape(), (TensorShape{2, 2, 1, 1}));
}

TEST_F(ConvOpsTest, Conv2DBackpropInputGradientsMatchFiniteDifferences) {
  const ConvCase cases[] = {{2, 5, 4, 2, 3, 2, 3, 2, 2, "SAME"},
                            {1, 5, 6, 2, 2, 3, 2, 1, 2, "VALID"}};
  uint32_t seed = 400;
  for (const ConvCase& k : cases) {
    SCOPED_TRACE(k.Name());
    const TensorShape out = OutShape(k);
    Output f = P({k.kh, k.kw, k.c, k.oc});
    Output dy = P(out);
    Output dx =
        ops::Conv2DBackpropInput(
            C(I32({4}, {static_cast<int32_t>(k.n), static_cast<int32_t>(k.h),
                        static_cast<int32_t>(k.w), static_cast<int32_t>(k.c)})),
            f, dy, {.strides = {1, k.sh, k.sw, 1}, .padding = k.padding})
            .value();
    ExpectGradientsMatchFiniteDifferences(
        dx, {f, dy},
        {{f, RandomTensor({k.kh, k.kw, k.c, k.oc}, seed++)},
         {dy, RandomTensor(out, seed++)}});
  }
}

TEST_F(ConvOpsTest, Conv2DBackpropInputGradientIsAFilterGradAndAConv) {
  Output sizes = C(I32({4}, {1, 4, 4, 1}));
  Output f = P({2, 2, 1, 3});
  Output dy = P({1, 3, 3, 3});
  Output dx = ops::Conv2DBackpropInput(sizes, f, dy, {.name = "dx"}).value();
  std::vector<Output> grads = AddGradients(dx, {f, dy}).value();
  EXPECT_EQ(g_.Describe(grads[0].handle()).value().op, "Conv2DBackpropFilter");
  EXPECT_EQ(g_.Describe(grads[1].handle()).value().op, "Conv2D");
  EXPECT_EQ(grads[0].shape(), (TensorShape{2, 2, 1, 3}));
  EXPECT_EQ(grads[1].shape(), (TensorShape{1, 3, 3, 3}));
}

TEST_F(ConvOpsTest, Conv2DGraphDefRoundTripsAndRunsToTheSameValues) {
  Output x = P({-1, 6, 5, 2}, "x");
  Output f = C(RandomTensor({3, 3, 2, 4}, 1));
  Output y =
      ops::Conv2D(x, f,
                  {.name = "conv", .strides = {1, 2, 1, 1}, .padding = "SAME"})
          .value();
  proto::GraphDef def = ExportGraphDef({y}).value();
  const proto::NodeDef* conv = nullptr;
  for (const proto::NodeDef& n : def.node()) {
    if (n.name() == "conv") conv = &n;
  }
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op(), "Conv2D");
  for (const char* attr :
       {"T", "strides", "padding", "data_format", "dilations",
        "use_cudnn_on_gpu", "explicit_paddings"}) {
    EXPECT_TRUE(conv->attr().count(attr) == 1) << attr;
  }

  Graph copy;
  std::vector<NodeHandle> imported = ImportGraphDef(def, copy).value();
  Output x2 = Output(*copy.FindNode("x"), 0);
  Output y2 = Output(*copy.FindNode("conv"), 0);
  EXPECT_EQ(y2.shape(), (TensorShape{-1, 3, 5, 4}));
  const Tensor xt = RandomTensor({2, 6, 5, 2}, 2);
  Session s2(copy);
  std::vector<Tensor> got = s2.Run({{x2, xt}}, {y2}).value();
  EXPECT_EQ(Values(got[0]), Values(Run1(y, {{x, xt}})));
}

// --- MaxPool, MaxPoolGrad ---

struct PoolCase {
  int64_t n, h, w, c, kh, kw, sh, sw;
  std::string padding;
  std::string Name() const {
    return absl::StrCat("input [", n, ",", h, ",", w, ",", c, "] window ", kh,
                        "x", kw, " strides ", sh, "x", sw, " ", padding);
  }
  TensorShape OutShape() const {
    return TensorShape{n, WindowOf(h, kh, sh, padding).out,
                       WindowOf(w, kw, sw, padding).out, c};
  }
  ops::PoolOptions Options(const std::string& name = "") const {
    return {.name = name,
            .ksize = {1, kh, kw, 1},
            .strides = {1, sh, sw, 1},
            .padding = padding};
  }
};

// Odd sizes, strides 1 and 2, both paddings, overlapping windows (stride
// below the window) and a window wider than the input under SAME.
const PoolCase kPoolCases[] = {
    {1, 4, 4, 1, 2, 2, 2, 2, "VALID"}, {2, 5, 7, 3, 2, 2, 2, 2, "SAME"},
    {2, 5, 7, 3, 3, 3, 2, 2, "VALID"}, {1, 5, 5, 2, 3, 3, 1, 1, "SAME"},
    {1, 3, 4, 2, 3, 5, 1, 2, "SAME"},  {3, 6, 5, 1, 3, 2, 2, 1, "SAME"},
};

// For each output element, the input offset of its window's first maximum
// (row-major window order).
std::vector<int64_t> ReferenceArgMax(const PoolCase& k, const Tensor& x) {
  const Window wy = WindowOf(k.h, k.kh, k.sh, k.padding);
  const Window wx = WindowOf(k.w, k.kw, k.sw, k.padding);
  const auto xv = x.data<float>();
  std::vector<int64_t> arg;
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t oy = 0; oy < wy.out; ++oy)
      for (int64_t ox = 0; ox < wx.out; ++ox)
        for (int64_t ch = 0; ch < k.c; ++ch) {
          int64_t best = -1;
          for (int64_t ky = 0; ky < k.kh; ++ky)
            for (int64_t kx = 0; kx < k.kw; ++kx) {
              const int64_t iy = oy * k.sh - wy.pad + ky;
              const int64_t ix = ox * k.sw - wx.pad + kx;
              if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
              const int64_t at = ((b * k.h + iy) * k.w + ix) * k.c + ch;
              if (best < 0 || xv[at] > xv[best]) best = at;
            }
          arg.push_back(best);
        }
  return arg;
}

TEST_F(ConvOpsTest, MaxPoolMatchesALoopReference) {
  uint32_t seed = 400;
  for (const PoolCase& k : kPoolCases) {
    const Tensor x = RandomTensor({k.n, k.h, k.w, k.c}, seed++);
    Output y = ops::MaxPool(C(x), k.Options()).value();
    EXPECT_EQ(y.shape(), k.OutShape()) << k.Name();
    std::vector<double> want;
    for (int64_t a : ReferenceArgMax(k, x)) want.push_back(x.data<float>()[a]);
    ExpectClose(Run1(y), want, k.Name(), 0);
  }
}

TEST_F(ConvOpsTest, MaxPoolGradMatchesALoopReference) {
  uint32_t seed = 500;
  for (const PoolCase& k : kPoolCases) {
    const Tensor x = RandomTensor({k.n, k.h, k.w, k.c}, seed++);
    const Tensor g = RandomTensor(k.OutShape(), seed++);
    Output y = ops::MaxPool(C(x), k.Options()).value();
    Output dx = ops::MaxPoolGrad(C(x), y, C(g), k.Options()).value();
    EXPECT_EQ(dx.shape(), (TensorShape{k.n, k.h, k.w, k.c})) << k.Name();
    std::vector<double> want(x.num_elements(), 0.0);
    const std::vector<int64_t> arg = ReferenceArgMax(k, x);
    for (size_t i = 0; i < arg.size(); ++i) want[arg[i]] += g.data<float>()[i];
    ExpectClose(Run1(dx), want, k.Name(), 1e-6);
  }
}

TEST_F(ConvOpsTest, MaxPoolGradRoutesTiesToTheFirstMaximumInRowMajorOrder) {
  // One 2 x 3 window whose maximum 5 appears three times.
  const Tensor x = F({1, 2, 3, 1}, {1, 5, 5, 5, 0, 2});
  PoolCase k{1, 2, 3, 1, 2, 3, 1, 1, "VALID"};
  Output y = ops::MaxPool(C(x), k.Options()).value();
  Output dx =
      ops::MaxPoolGrad(C(x), y, C(F({1, 1, 1, 1}, {7})), k.Options()).value();
  EXPECT_EQ(Values(Run1(y)), std::vector<float>({5}));
  EXPECT_EQ(Values(Run1(dx)), std::vector<float>({0, 7, 0, 0, 0, 0}));
}

TEST_F(ConvOpsTest, MaxPoolAndItsGradientOfNoChannelsAreEmpty) {
  PoolCase k{2, 5, 7, 0, 2, 2, 1, 1, "SAME"};
  const Tensor x = F({2, 5, 7, 0}, {});
  Output y = ops::MaxPool(C(x), k.Options()).value();
  Output dx =
      ops::MaxPoolGrad(C(x), y, C(F(k.OutShape(), {})), k.Options()).value();
  const Tensor yv = Run1(y);
  const Tensor dxv = Run1(dx);
  EXPECT_EQ(yv.shape(), k.OutShape());
  EXPECT_EQ(yv.num_elements(), 0);
  EXPECT_EQ(dxv.shape(), (TensorShape{2, 5, 7, 0}));
  EXPECT_EQ(dxv.num_elements(), 0);
}

TEST_F(ConvOpsTest, MaxPoolInfersStaticOutputShapes) {
  Output x = P({-1, 28, 27, 16});
  EXPECT_EQ(ops::MaxPool(x).value().shape(), (TensorShape{-1, 14, 13, 16}));
  EXPECT_EQ(ops::MaxPool(x, {.ksize = {1, 3, 3, 1},
                             .strides = {1, 2, 2, 1},
                             .padding = "SAME"})
                .value()
                .shape(),
            (TensorShape{-1, 14, 14, 16}));
}

TEST_F(ConvOpsTest, MaxPoolRejectsAWindowOverTheBatchOrChannels) {
  Output x = P({2, 4, 4, 3});
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::MaxPool(x, {.name = "pool", .ksize = {2, 2, 2, 1}}),
                before, "MaxPool 'pool'",
                {"ksize [2,2,2,1]", "batch and channel entries must be 1"});
  ExpectRefused(ops::MaxPool(x, {.name = "pool", .strides = {1, 2, 2, 3}}),
                before, "MaxPool 'pool'", {"strides [1,2,2,3]"});
}

TEST_F(ConvOpsTest, MaxPoolRejectsAWindowLargerThanTheInputWithValidPadding) {
  Output x = P({1, 3, 8, 1});
  const int64_t before = g_.num_nodes();
  ExpectRefused(
      ops::MaxPool(x, {.name = "pool", .ksize = {1, 4, 2, 1}}), before,
      "MaxPool 'pool'",
      {"window height 4 is larger than the input height 3", "[1,3,8,1]"});
}

TEST_F(ConvOpsTest, MaxPoolGradRejectsGradOfAnotherShape) {
  Output x = P({1, 4, 4, 2});
  Output y = ops::MaxPool(x).value();
  Output g = P({1, 3, 2, 2});
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::MaxPoolGrad(x, y, g, {.name = "dx"}), before,
                "MaxPoolGrad 'dx'",
                {"grad [1,3,2,2] does not match", "[1,2,2,2]", "[1,4,4,2]"});
}

TEST_F(ConvOpsTest, MaxPoolGradientMatchesFiniteDifferences) {
  const PoolCase cases[] = {{2, 5, 4, 2, 2, 2, 2, 2, "SAME"},
                            {1, 5, 5, 2, 3, 3, 1, 1, "VALID"}};
  uint32_t seed = 600;
  for (const PoolCase& k : cases) {
    SCOPED_TRACE(k.Name());
    Output x = P({k.n, k.h, k.w, k.c});
    Output y = ops::MaxPool(x, k.Options()).value();
    ExpectGradientsMatchFiniteDifferences(
        y, {x}, {{x, DistinctTensor({k.n, k.h, k.w, k.c}, seed++)}});
  }
}

TEST_F(ConvOpsTest, MaxPoolGradientUsesMaxPoolGrad) {
  Output x = P({1, 4, 4, 1});
  Output y = ops::MaxPool(x, {.name = "pool"}).value();
  std::vector<Output> grads = AddGradients(y, {x}).value();
  EXPECT_EQ(g_.Describe(grads[0].handle()).value().op, "MaxPoolGrad");
}

// --- AvgPool, AvgPoolGrad ---

// For each output element, the input offsets its window covers inside the
// input (SAME's padding left out).
std::vector<std::vector<int64_t>> ReferenceWindows(const PoolCase& k) {
  const Window wy = WindowOf(k.h, k.kh, k.sh, k.padding);
  const Window wx = WindowOf(k.w, k.kw, k.sw, k.padding);
  std::vector<std::vector<int64_t>> out;
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t oy = 0; oy < wy.out; ++oy)
      for (int64_t ox = 0; ox < wx.out; ++ox)
        for (int64_t ch = 0; ch < k.c; ++ch) {
          std::vector<int64_t>& at = out.emplace_back();
          for (int64_t ky = 0; ky < k.kh; ++ky)
            for (int64_t kx = 0; kx < k.kw; ++kx) {
              const int64_t iy = oy * k.sh - wy.pad + ky;
              const int64_t ix = ox * k.sw - wx.pad + kx;
              if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
              at.push_back(((b * k.h + iy) * k.w + ix) * k.c + ch);
            }
        }
  return out;
}

// An int32 sizes vector, as Shape gives it.
Tensor ShapeTensor(std::vector<int32_t> d) {
  const int64_t n = static_cast<int64_t>(d.size());
  return Tensor::FromData<int32_t>({n}, std::move(d)).value();
}

TEST_F(ConvOpsTest, AvgPoolMatchesALoopReference) {
  uint32_t seed = 700;
  for (const PoolCase& k : kPoolCases) {
    const Tensor x = RandomTensor({k.n, k.h, k.w, k.c}, seed++);
    Output y = ops::AvgPool(C(x), k.Options()).value();
    EXPECT_EQ(y.shape(), k.OutShape()) << k.Name();
    std::vector<double> want;
    for (const std::vector<int64_t>& at : ReferenceWindows(k)) {
      double sum = 0;
      for (int64_t a : at) sum += x.data<float>()[a];
      want.push_back(sum / static_cast<double>(at.size()));
    }
    ExpectClose(Run1(y), want, k.Name(), 1e-5);
  }
}

TEST_F(ConvOpsTest, AvgPoolGradMatchesALoopReference) {
  uint32_t seed = 800;
  for (const PoolCase& k : kPoolCases) {
    const TensorShape in{k.n, k.h, k.w, k.c};
    const Tensor g = RandomTensor(k.OutShape(), seed++);
    const std::vector<int32_t> sizes = {
        static_cast<int32_t>(k.n), static_cast<int32_t>(k.h),
        static_cast<int32_t>(k.w), static_cast<int32_t>(k.c)};
    Output dx =
        ops::AvgPoolGrad(C(ShapeTensor(sizes)), C(g), k.Options()).value();
    EXPECT_EQ(dx.shape(), in) << k.Name();
    std::vector<double> want(in.num_elements(), 0.0);
    const std::vector<std::vector<int64_t>> windows = ReferenceWindows(k);
    for (size_t i = 0; i < windows.size(); ++i) {
      for (int64_t a : windows[i]) {
        want[a] += g.data<float>()[i] / static_cast<double>(windows[i].size());
      }
    }
    ExpectClose(Run1(dx), want, k.Name(), 1e-5);
  }
}

TEST_F(ConvOpsTest, AvgPoolAndItsGradientOfNoChannelsAreEmpty) {
  PoolCase k{2, 5, 7, 0, 2, 2, 1, 1, "SAME"};
  Output y = ops::AvgPool(C(F({2, 5, 7, 0}, {})), k.Options()).value();
  Output dx = ops::AvgPoolGrad(C(ShapeTensor({2, 5, 7, 0})),
                               C(F(k.OutShape(), {})), k.Options())
                  .value();
  EXPECT_EQ(Run1(y).shape(), k.OutShape());
  EXPECT_EQ(Run1(dx).shape(), (TensorShape{2, 5, 7, 0}));
}

TEST_F(ConvOpsTest, AvgPoolInfersStaticOutputShapes) {
  Output x = P({-1, 28, 27, 16});
  EXPECT_EQ(ops::AvgPool(x).value().shape(), (TensorShape{-1, 14, 13, 16}));
  EXPECT_EQ(ops::AvgPool(x, {.ksize = {1, 3, 3, 1},
                             .strides = {1, 2, 2, 1},
                             .padding = "SAME"})
                .value()
                .shape(),
            (TensorShape{-1, 14, 14, 16}));
}

TEST_F(ConvOpsTest, AvgPoolRejectsAWindowLargerThanTheInputWithValidPadding) {
  Output x = P({1, 3, 8, 1});
  const int64_t before = g_.num_nodes();
  ExpectRefused(
      ops::AvgPool(x, {.name = "pool", .ksize = {1, 4, 2, 1}}), before,
      "AvgPool 'pool'",
      {"window height 4 is larger than the input height 3", "[1,3,8,1]"});
}

TEST_F(ConvOpsTest, AvgPoolGradRejectsGradOfAnotherShape) {
  Output sizes = C(ShapeTensor({1, 4, 4, 2}));
  Output g = P({1, 3, 2, 2});
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::AvgPoolGrad(sizes, g, {.name = "dx"}), before,
                "AvgPoolGrad 'dx'",
                {"grad [1,3,2,2] does not match", "[1,2,2,2]"});
}

TEST_F(ConvOpsTest, AvgPoolGradRefusesANegativeSizeAtRunTime) {
  Output sizes = ops::Placeholder(g_, DT_INT32, {4}).value();
  Output g = P({1, 2, 2, 1});
  Output dx = ops::AvgPoolGrad(sizes, g, {.name = "dx"}).value();
  absl::StatusOr<std::vector<Tensor>> out = session_.Run(
      {{sizes, ShapeTensor({1, -4, 4, 1})}, {g, F({1, 2, 2, 1}, {1, 2, 3, 4})}},
      {dx});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), ::testing::HasSubstr("negative size"));
}

TEST_F(ConvOpsTest, AvgPoolGradientMatchesFiniteDifferences) {
  const PoolCase cases[] = {{2, 5, 4, 2, 2, 2, 2, 2, "SAME"},
                            {1, 5, 5, 2, 3, 3, 1, 1, "VALID"},
                            {1, 3, 4, 2, 3, 5, 1, 2, "SAME"}};
  uint32_t seed = 900;
  for (const PoolCase& k : cases) {
    SCOPED_TRACE(k.Name());
    Output x = P({k.n, k.h, k.w, k.c});
    Output y = ops::AvgPool(x, k.Options()).value();
    ExpectGradientsMatchFiniteDifferences(
        y, {x}, {{x, DistinctTensor({k.n, k.h, k.w, k.c}, seed++)}});
  }
}

TEST_F(ConvOpsTest, AvgPoolGradientUsesAvgPoolGradOfTheInputsShape) {
  Output x = P({-1, 4, 4, 1});
  Output y = ops::AvgPool(x, {.name = "pool"}).value();
  std::vector<Output> grads = AddGradients(y, {x}).value();
  EXPECT_EQ(g_.Describe(grads[0].handle()).value().op, "AvgPoolGrad");
  EXPECT_EQ(grads[0].shape(), (TensorShape{-1, 4, 4, 1}));
}

// --- FusedBatchNormV3, FusedBatchNormGradV3 ---

// Per-channel mean and biased variance of an NHWC tensor, in double.
std::pair<std::vector<double>, std::vector<double>> ChannelMoments(
    const Tensor& x) {
  const int64_t c = x.shape()[3];
  const int64_t rows = x.num_elements() / c;
  std::vector<double> mean(c, 0.0), var(c, 0.0);
  const auto xv = x.data<float>();
  for (int64_t i = 0; i < x.num_elements(); ++i) mean[i % c] += xv[i];
  for (double& m : mean) m /= rows;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    var[i % c] += (xv[i] - mean[i % c]) * (xv[i] - mean[i % c]);
  }
  for (double& v : var) v /= rows;
  return {mean, var};
}

std::vector<double> ReferenceBatchNorm(const Tensor& x,
                                       const std::vector<double>& mean,
                                       const std::vector<double>& var,
                                       const Tensor& scale,
                                       const Tensor& offset, double eps) {
  const int64_t c = x.shape()[3];
  std::vector<double> y(x.num_elements());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t ch = i % c;
    y[i] = (x.data<float>()[i] - mean[ch]) / std::sqrt(var[ch] + eps) *
               scale.data<float>()[ch] +
           offset.data<float>()[ch];
  }
  return y;
}

std::vector<double> AsDoubles(const Tensor& t) {
  return std::vector<double>(t.data<float>().begin(), t.data<float>().end());
}

TEST_F(ConvOpsTest, FusedBatchNormV3TrainingNormalisesWithBatchStatistics) {
  const Tensor x = RandomTensor({2, 3, 5, 4}, 700, -2.f, 3.f);
  const Tensor scale = RandomTensor({4}, 701);
  const Tensor offset = RandomTensor({4}, 702);
  ops::FusedBatchNormOutputs bn =
      ops::FusedBatchNormV3(C(x), C(scale), C(offset), C(F({0}, {})),
                            C(F({0}, {})), {.epsilon = 0.001f})
          .value();
  EXPECT_EQ(bn.y.shape(), (TensorShape{2, 3, 5, 4}));
  EXPECT_EQ(bn.batch_mean.shape(), TensorShape{4});
  EXPECT_EQ(bn.reserve_space_3.shape(), TensorShape{});
  std::vector<Tensor> out =
      session_
          .Run({}, {bn.y, bn.batch_mean, bn.batch_variance, bn.reserve_space_1,
                    bn.reserve_space_2})
          .value();
  const auto [mean, var] = ChannelMoments(x);
  std::vector<double> unbiased = var;
  for (double& v : unbiased) v *= 30.0 / 29.0;  // 30 values per channel
  ExpectClose(out[0], ReferenceBatchNorm(x, mean, var, scale, offset, 0.001),
              "y");
  ExpectClose(out[1], mean, "batch_mean");
  ExpectClose(out[2], unbiased, "batch_variance (unbiased)");
  ExpectClose(out[3], mean, "reserve_space_1");
  ExpectClose(out[4], var, "reserve_space_2 (biased)");
}

TEST_F(ConvOpsTest, FusedBatchNormV3BlendsRunningStatisticsByTheAvgFactor) {
  const Tensor x = RandomTensor({3, 2, 2, 2}, 710);
  const Tensor running_mean = F({2}, {0.5f, -1.f});
  const Tensor running_var = F({2}, {2.f, 0.25f});
  ops::FusedBatchNormOutputs bn =
      ops::FusedBatchNormV3(C(x), C(F({2}, {1, 1})), C(F({2}, {0, 0})),
                            C(running_mean), C(running_var),
                            {.exponential_avg_factor = 0.25f})
          .value();
  std::vector<Tensor> out =
      session_.Run({}, {bn.batch_mean, bn.batch_variance}).value();
  const auto [mean, var] = ChannelMoments(x);
  std::vector<double> want_mean(2), want_var(2);
  for (int ch = 0; ch < 2; ++ch) {
    want_mean[ch] = 0.75 * running_mean.data<float>()[ch] + 0.25 * mean[ch];
    want_var[ch] =
        0.75 * running_var.data<float>()[ch] + 0.25 * var[ch] * 12.0 / 11.0;
  }
  ExpectClose(out[0], want_mean, "batch_mean");
  ExpectClose(out[1], want_var, "batch_variance");
}

TEST_F(ConvOpsTest, FusedBatchNormV3InferenceUsesTheGivenStatistics) {
  const Tensor x = RandomTensor({2, 3, 3, 3}, 720);
  const Tensor scale = RandomTensor({3}, 721);
  const Tensor offset = RandomTensor({3}, 722);
  const Tensor mean = F({3}, {0.1f, -0.2f, 0.3f});
  const Tensor var = F({3}, {1.5f, 0.5f, 2.f});
  ops::FusedBatchNormOutputs bn =
      ops::FusedBatchNormV3(C(x), C(scale), C(offset), C(mean), C(var),
                            {.is_training = false})
          .value();
  std::vector<Tensor> out =
      session_.Run({}, {bn.y, bn.batch_mean, bn.batch_variance}).value();
  ExpectClose(out[0],
              ReferenceBatchNorm(x, AsDoubles(mean), AsDoubles(var), scale,
                                 offset, 0.0001),
              "y");
  EXPECT_EQ(Values(out[1]), Values(mean));
  EXPECT_EQ(Values(out[2]), Values(var));
}

TEST_F(ConvOpsTest, FusedBatchNormV3RejectsA2DInput) {
  Output x = P({8, 4});
  Output v = C(F({4}, {1, 1, 1, 1}));
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::FusedBatchNormV3(x, v, v, v, v, {.name = "bn"}), before,
                "FusedBatchNormV3 'bn'",
                {"x must be 4-D NHWC", "[8,4]", "takes no other rank"});
}

TEST_F(ConvOpsTest, FusedBatchNormV3RejectsScaleOfAnotherChannelCount) {
  Output x = P({2, 3, 3, 4});
  Output scale = C(F({3}, {1, 1, 1}));
  Output v = C(F({4}, {1, 1, 1, 1}));
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::FusedBatchNormV3(x, scale, v, v, v, {.name = "bn"}),
                before, "FusedBatchNormV3 'bn'",
                {"scale [3]", "[2,3,3,4]", "4 channels"});
}

TEST_F(ConvOpsTest, FusedBatchNormV3InferenceRejectsAMissingMean) {
  Output x = P({2, 3, 3, 4});
  Output v = C(F({4}, {1, 1, 1, 1}));
  Output empty = C(F({0}, {}));
  const int64_t before = g_.num_nodes();
  ExpectRefused(ops::FusedBatchNormV3(x, v, v, empty, v,
                                      {.name = "bn", .is_training = false}),
                before, "FusedBatchNormV3 'bn'", {"mean [0]", "4 channels"});
}

TEST_F(ConvOpsTest, FusedBatchNormV3TrainingGradientsMatchFiniteDifferences) {
  Output x = P({2, 3, 2, 3});
  Output scale = P({3});
  Output offset = P({3});
  ops::FusedBatchNormOutputs bn =
      ops::FusedBatchNormV3(x, scale, offset, C(F({0}, {})), C(F({0}, {})),
                            {.epsilon = 0.001f})
          .value();
  ExpectGradientsMatchFiniteDifferences(
      bn.y, {x, scale, offset},
      {{x, RandomTensor({2, 3, 2, 3}, 730, -1.f, 2.f)},
       {scale, RandomTensor({3}, 731, 0.5f, 1.5f)},
       {offset, RandomTensor({3}, 732)}});
}

TEST_F(ConvOpsTest, FusedBatchNormV3InferenceGradientsMatchFiniteDifferences) {
  Output x = P({2, 2, 3, 3});
  Output scale = P({3});
  Output offset = P({3});
  ops::FusedBatchNormOutputs bn =
      ops::FusedBatchNormV3(x, scale, offset, C(F({3}, {0.1f, 0.f, -0.3f})),
                            C(F({3}, {0.5f, 1.f, 2.f})), {.is_training = false})
          .value();
  ExpectGradientsMatchFiniteDifferences(bn.y, {x, scale, offset},
                                        {{x, RandomTensor({2, 2, 3, 3}, 740)},
                                         {scale, RandomTensor({3}, 741)},
                                         {offset, RandomTensor({3}, 742)}});
}

TEST_F(ConvOpsTest, FusedBatchNormV3GradientUsesFusedBatchNormGradV3) {
  Output x = P({2, 2, 2, 3});
  Output v = C(F({3}, {1, 1, 1}));
  ops::FusedBatchNormOutputs bn =
      ops::FusedBatchNormV3(x, v, v, v, v, {.name = "bn"}).value();
  std::vector<Output> grads = AddGradients(bn.y, {x}).value();
  NodeInfo grad = g_.Describe(grads[0].handle()).value();
  EXPECT_EQ(grad.op, "FusedBatchNormGradV3");
  EXPECT_EQ(grad.inputs[3], bn.reserve_space_1);
  EXPECT_EQ(grad.inputs[4], bn.reserve_space_2);
  EXPECT_FALSE(grad.attrs.contains("exponential_avg_factor"));
}

TEST_F(ConvOpsTest, FusedBatchNormGradV3HasTensorFlowsOutputShapes) {
  Output x = P({-1, 4, 4, 3});
  Output v = C(F({3}, {1, 1, 1}));
  ops::FusedBatchNormGradOutputs g =
      ops::FusedBatchNormGradV3(x, x, v, v, v, C(F({}, {0}))).value();
  EXPECT_EQ(g.x_backprop.shape(), (TensorShape{-1, 4, 4, 3}));
  EXPECT_EQ(g.scale_backprop.shape(), TensorShape{3});
  EXPECT_EQ(g.offset_backprop.shape(), TensorShape{3});
  EXPECT_EQ(g.reserve_space_4.shape(), TensorShape{0});
  EXPECT_EQ(g.reserve_space_5.shape(), TensorShape{0});
}

}  // namespace
}  // namespace graphgc
