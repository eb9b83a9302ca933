#include "models/orthogonal.h"

#include <algorithm>
#include <new>
#include <random>

#include "Eigen/Dense"
#include "absl/strings/str_cat.h"
#include "models/random_seed.h"
#include "models/training.h"
#include "util/status_macros.h"

namespace graphgc {
namespace models_internal {

absl::StatusOr<Tensor> Orthogonal(const TensorShape& shape, uint64_t seed,
                                  const std::string& what) {
  if (shape.dims() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(what,
                     ": the orthogonal initializer needs a shape of "
                     "rank >= 2, got ",
                     shape.DebugString()));
  }
  GG_ASSIGN_OR_RETURN(Tensor t,
                      NewTensor(DT_FLOAT, shape, /*zero=*/false, what));
  const int64_t cols = shape[shape.dims() - 1];
  const int64_t rows = cols == 0 ? 0 : shape.num_elements() / cols;
  if (rows == 0 || cols == 0) return t;
  const int64_t tall = std::max(rows, cols), wide = std::min(rows, cols);
  try {
    std::mt19937_64 rng(seed != 0 ? seed : DrawSeed());
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::MatrixXd a(tall, wide);
    // Row by row, as Keras fills its row-major normal matrix.
    for (int64_t i = 0; i < tall; ++i) {
      for (int64_t j = 0; j < wide; ++j) a(i, j) = normal(rng);
    }
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
    Eigen::MatrixXd q =
        qr.householderQ() * Eigen::MatrixXd::Identity(tall, wide);
    for (int64_t j = 0; j < wide; ++j) {
      const double d = qr.matrixQR()(j, j);
      q.col(j) *= d > 0 ? 1.0 : (d < 0 ? -1.0 : 0.0);
    }
    auto out = t.mutable_data<float>();
    // [tall, wide] as it is when rows >= cols, else its transpose.
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        out[r * cols + c] =
            static_cast<float>(rows >= cols ? q(r, c) : q(c, r));
      }
    }
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(what, ": out of memory for the orthogonal initializer of ",
                     shape.DebugString()));
  }
  return t;
}

}  // namespace models_internal
}  // namespace graphgc
