#include "ops/resources.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace graphgc {

absl::Status VariableResource::UninitializedError() const {
  return absl::FailedPreconditionError(
      absl::StrCat("variable '", name(),
                   "' is read before it was initialised (assign it "
                   "first, e.g. run its initializer)"));
}

absl::StatusOr<Tensor> VariableResource::Read() const {
  ExclusiveLock l(mu_);
  if (!value_.IsInitialized()) return UninitializedError();
  return value_;
}

bool VariableResource::initialized() const {
  ExclusiveLock l(mu_);
  return value_.IsInitialized();
}

absl::Status VariableResource::CheckCompatible(const Tensor& value) const {
  if (value.dtype() != dtype_) {
    return absl::InvalidArgumentError(
        absl::StrCat("variable '", name(), "' holds ", DataTypeString(dtype_),
                     ", cannot assign ", DataTypeString(value.dtype())));
  }
  if (!shape_.IsCompatibleWith(value.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "variable '", name(), "' has shape ", shape_.DebugString(),
        ", cannot assign a value of shape ", value.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::Status VariableResource::Assign(Tensor value) {
  absl::Status s = CheckCompatible(value);
  if (!s.ok()) return s;
  ExclusiveLock l(mu_);
  value_ = std::move(value);
  return absl::OkStatus();
}

int64_t VariableResource::ApproxBytes() const {
  ExclusiveLock l(mu_);
  return static_cast<int64_t>(sizeof(*this)) + value_.TotalBytes();
}

RandomResource::RandomResource(int64_t seed, int64_t seed2) {
  ExclusiveLock l(mu_);
  if (seed == 0 && seed2 == 0) {
    std::random_device rd;
    engine_.seed((static_cast<uint64_t>(rd()) << 32) ^ rd());
  } else {
    std::seed_seq seq{
        static_cast<uint32_t>(seed),
        static_cast<uint32_t>(static_cast<uint64_t>(seed) >> 32),
        static_cast<uint32_t>(seed2),
        static_cast<uint32_t>(static_cast<uint64_t>(seed2) >> 32)};
    engine_.seed(seq);
  }
}

float RandomResource::NextUniformLocked() {
  // 24 random mantissa bits: exactly representable, in [0, 1).
  return static_cast<float>(engine_() >> 40) * (1.0f / 16777216.0f);
}

void RandomResource::FillUniform(absl::Span<float> out) {
  ExclusiveLock l(mu_);
  for (float& v : out) v = NextUniformLocked();
}

void RandomResource::FillNormal(absl::Span<float> out) {
  ExclusiveLock l(mu_);
  constexpr double kTwoPi = 6.283185307179586;
  for (size_t i = 0; i < out.size(); i += 2) {
    // u1 in (0, 1] so the log is finite.
    const double u1 = 1.0 - static_cast<double>(NextUniformLocked());
    const double u2 = static_cast<double>(NextUniformLocked());
    const double r = std::sqrt(-2.0 * std::log(u1));
    out[i] = static_cast<float>(r * std::cos(kTwoPi * u2));
    if (i + 1 < out.size())
      out[i + 1] = static_cast<float>(r * std::sin(kTwoPi * u2));
  }
}

}  // namespace graphgc
