// Random ops: RandomUniform ([0, 1)) and RandomStandardNormal, float. Each
// node owns a RandomResource (ops/resources.h): repeated runs continue one
// stream, and non-zero seed/seed2 make that stream reproducible.
#include "ops/random_ops.h"

#include "ops/op_util.h"
#include "ops/resources.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

using op_util::CheckDtype;
using op_util::MakeOp;
using op_util::MustRegister;

absl::StatusOr<std::vector<OutputInfo>> RandomShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(DataType dt, GetAttr<DataType>(attrs, "dtype"));
  GG_RETURN_IF_ERROR(CheckDtype(dt, {DT_FLOAT}, "dtype"));
  GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
  GG_RETURN_IF_ERROR(CheckDtype(t, {DT_INT32, DT_INT64}, "T"));
  if (in[0].dtype != t) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape is ", DataTypeString(in[0].dtype), ", T is ",
                     DataTypeString(t)));
  }
  if (in[0].shape.dims() != 1) {
    return absl::InvalidArgumentError("shape must be a vector");
  }
  std::optional<TensorShape> s = op_util::KnownShapeValue(in[0]);
  if (s.has_value()) {
    GG_RETURN_IF_ERROR(TensorShape::Validate(s->dim_sizes(), true));
    return std::vector<OutputInfo>{{dt, *s}};
  }
  if (in[0].shape[0] < 0) {
    return absl::InvalidArgumentError(
        "the length of shape must be known when the graph is built");
  }
  return std::vector<OutputInfo>{
      {dt, TensorShape(std::vector<int64_t>(in[0].shape[0], -1))}};
}

template <bool kNormal>
absl::Status RandomKernel(OpKernelContext& ctx) {
  auto* rng = dynamic_cast<RandomResource*>(ctx.resource());
  if (rng == nullptr) return ctx.InvalidArgument("node has no random state");
  absl::StatusOr<std::vector<int64_t>> dims = op_util::IntValues(ctx.input(0));
  if (!dims.ok()) return ctx.InvalidArgument(dims.status().message());
  GG_ASSIGN_OR_RETURN(Tensor out,
                      op_util::NewOutput(ctx, DT_FLOAT, TensorShape(*dims)));
  if (kNormal) {
    rng->FillNormal(out.mutable_data<float>());
  } else {
    rng->FillUniform(out.mutable_data<float>());
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

RegisteredOp RandomOp(std::string type, KernelFn kernel) {
  RegisteredOp op = MakeOp(std::move(type), {"shape"}, 1,
                           {{"dtype", "type"},
                            {"seed", "int", AttrValue(int64_t{0})},
                            {"seed2", "int", AttrValue(int64_t{0})},
                            {"T", "type"}},
                           RandomShape, std::move(kernel));
  op.def.stateful = true;
  op.make_resource = [](const AttrMap& attrs)
      -> absl::StatusOr<std::shared_ptr<NodeResource>> {
    return std::shared_ptr<NodeResource>(std::make_shared<RandomResource>(
        GetAttrOr<int64_t>(attrs, "seed", 0),
        GetAttrOr<int64_t>(attrs, "seed2", 0)));
  };
  return op;
}

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  MustRegister(r, RandomOp("RandomUniform", RandomKernel<false>));
  MustRegister(r, RandomOp("RandomStandardNormal", RandomKernel<true>));
}

}  // namespace graphgc
