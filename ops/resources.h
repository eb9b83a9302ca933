// ops/resources.h
//
// Per-node state of stateful ops, held in the node's NodeResource slot and
// swept with the node:
//   VariableResource: a VarHandleOp's variable (dtype, static shape, current
//     value). Kernels replace the value with a fresh tensor on every write
//     (tensors are immutable), so a tensor read out stays valid and unchanged.
//   RandomResource: a random op's generator. With seed or seed2 non-zero the
//     sequence is reproducible (same seeds, same numbers); each run draws new
//     numbers from the same stream.
//
// Thread safety: both are internally synchronised (util/mutex.h); kernels of
// concurrent runs may use one resource at once.
#ifndef GRAPHGC_OPS_RESOURCES_H_
#define GRAPHGC_OPS_RESOURCES_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/node_resource.h"
#include "runtime/tensor.h"
#include "util/mutex.h"

namespace graphgc {

// A resource that learns its node's final (uniqued) name once the node is
// added; BuildNode calls set_node_name before any kernel can see it.
class NamedResource : public NodeResource {
 public:
  void set_node_name(std::string name) { name_ = std::move(name); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

class VariableResource final : public NamedResource {
 public:
  VariableResource(DataType dtype, TensorShape shape)
      : dtype_(dtype), shape_(std::move(shape)) {}

  DataType dtype() const { return dtype_; }
  // The declared shape (may hold -1).
  const TensorShape& shape() const { return shape_; }

  // The current value; FailedPrecondition naming the variable when it was
  // never assigned.
  absl::StatusOr<Tensor> Read() const ABSL_LOCKS_EXCLUDED(mu_);
  bool initialized() const ABSL_LOCKS_EXCLUDED(mu_);
  // Replaces the value; InvalidArgument when dtype or shape disagree with the
  // declaration.
  absl::Status Assign(Tensor value) ABSL_LOCKS_EXCLUDED(mu_);
  // Checks `value` against the declaration without assigning it.
  absl::Status CheckCompatible(const Tensor& value) const;

  // For read-modify-write kernels (AssignAdd, optimizers): the lock guarding
  // the value, and access to it while holding that lock.
  ExclusiveMutex& mu() const ABSL_LOCK_RETURNED(mu_) { return mu_; }
  const Tensor& value_locked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return value_;
  }
  void set_value_locked(Tensor t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    value_ = std::move(t);
  }
  // The value itself, for an update written in place. Only when
  // value_locked().RefCountIsOne(): no tensor read earlier may change.
  Tensor& mutable_value_locked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return value_;
  }
  absl::Status UninitializedError() const;

  int64_t ApproxBytes() const override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const DataType dtype_;
  const TensorShape shape_;
  // Exclusive even for reads: each holds it for a reference count's
  // increment, and an optimizer step takes it for every variable it
  // updates, where std::shared_mutex (Mutex's lock then) cost 4x
  // std::mutex (util/mutex.h).
  mutable ExclusiveMutex mu_;
  Tensor value_ ABSL_GUARDED_BY(mu_);  // DT_INVALID until first assigned
};

class RandomResource : public NodeResource {
 public:
  // seed == seed2 == 0: seeded from std::random_device (non-reproducible).
  RandomResource(int64_t seed, int64_t seed2);

  // Fills `out` with uniform floats in [0, 1).
  void FillUniform(absl::Span<float> out) ABSL_LOCKS_EXCLUDED(mu_);
  // Fills `out` with standard normal floats (Box-Muller).
  void FillNormal(absl::Span<float> out) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  float NextUniformLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ExclusiveMutex mu_;
  std::mt19937_64 engine_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphgc

#endif  // GRAPHGC_OPS_RESOURCES_H_
