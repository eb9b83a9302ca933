// Variable ops: VarHandleOp, ReadVariableOp, AssignVariableOp,
// AssignAddVariableOp, AssignSubVariableOp, and the optimizer updates
// ResourceApplyGradientDescent and ResourceApplyAdam. The variable lives in
// the VarHandleOp node's VariableResource (ops/resources.h); every op that
// reads or writes it takes that node's DT_RESOURCE output as input 0 and
// reaches the variable through OpKernelContext::input_resource.
#include "ops/state_ops.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <initializer_list>
#include <typeinfo>

#include "Eigen/Core"
#include "absl/container/inlined_vector.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "ops/resources.h"
#include "util/status_macros.h"

namespace graphgc {

VariableResource* AsVariable(NodeResource* r) {
  // VariableResource is final, so comparing the dynamic type is the whole
  // check: cheaper than a dynamic_cast, and every optimizer update and
  // variable read makes it.
  return r != nullptr && typeid(*r) == typeid(VariableResource)
             ? static_cast<VariableResource*>(r)
             : nullptr;
}

namespace {

using op_util::CheckDtype;
using op_util::MakeOp;
using op_util::MustRegister;

using Grads = std::vector<std::optional<Output>>;
constexpr std::initializer_list<DataType> kAllTypes = {DT_FLOAT, DT_INT32,
                                                       DT_INT64, DT_BOOL};

absl::StatusOr<VariableResource*> VariableInput(const OpKernelContext& ctx,
                                                int i) {
  VariableResource* v = AsVariable(ctx.input_resource(i));
  if (v == nullptr) {
    return ctx.InvalidArgument(
        absl::StrCat("input ", i, " is not a variable (VarHandleOp) resource"));
  }
  return v;
}

// Checks a resource input and returns the variable's dtype and shape.
absl::Status CheckResourceInput(const InputInfo& in, absl::string_view what) {
  if (in.dtype != DT_RESOURCE) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a resource (a VarHandleOp output), got ",
                     DataTypeString(in.dtype)));
  }
  if (in.handle_dtype == DT_INVALID) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must come straight from a VarHandleOp"));
  }
  return absl::OkStatus();
}

// Whether a value of static shape `v` may be stored in a variable of `var`.
absl::Status CheckShapesAgree(const TensorShape& var, const TensorShape& v,
                              absl::string_view what) {
  bool ok = var.dims() == v.dims();
  for (int d = 0; ok && d < var.dims(); ++d) {
    ok = var[d] < 0 || v[d] < 0 || var[d] == v[d];
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has shape ", v.DebugString(),
                     " but the variable has shape ", var.DebugString()));
  }
  return absl::OkStatus();
}

// --- VarHandleOp, ReadVariableOp, Assign* ---

absl::StatusOr<std::vector<OutputInfo>> AssignShape(
    const AttrMap& attrs, absl::Span<const InputInfo> in) {
  GG_ASSIGN_OR_RETURN(DataType dt, GetAttr<DataType>(attrs, "dtype"));
  GG_RETURN_IF_ERROR(CheckResourceInput(in[0], "resource"));
  if (in[1].dtype != dt || in[0].handle_dtype != dt) {
    return absl::InvalidArgumentError(
        absl::StrCat("value is ", DataTypeString(in[1].dtype), ", dtype is ",
                     DataTypeString(dt), ", the variable holds ",
                     DataTypeString(in[0].handle_dtype)));
  }
  GG_RETURN_IF_ERROR(
      CheckShapesAgree(in[0].handle_shape, in[1].shape, "value"));
  return std::vector<OutputInfo>{};
}

absl::Status AssignKernel(OpKernelContext& ctx) {
  GG_ASSIGN_OR_RETURN(VariableResource * v, VariableInput(ctx, 0));
  absl::Status s = v->Assign(ctx.input(1));
  if (!s.ok()) return ctx.InvalidArgument(s.message());
  return absl::OkStatus();
}

template <int kSign>
absl::Status AssignUpdateKernel(OpKernelContext& ctx) {
  GG_ASSIGN_OR_RETURN(VariableResource * v, VariableInput(ctx, 0));
  const Tensor& delta = ctx.input(1);
  ExclusiveLock l(v->mu());
  const Tensor& old = v->value_locked();
  if (!old.IsInitialized()) return v->UninitializedError();
  if (old.shape() != delta.shape() || old.dtype() != delta.dtype()) {
    return ctx.InvalidArgument(
        absl::StrCat("value ", DataTypeString(delta.dtype()), " ",
                     delta.shape().DebugString(), " does not match variable '",
                     v->name(), "' (", DataTypeString(old.dtype()), " ",
                     old.shape().DebugString(), ")"));
  }
  GG_ASSIGN_OR_RETURN(Tensor out,
                      op_util::NewOutput(ctx, old.dtype(), old.shape()));
  GG_RETURN_IF_ERROR(op_util::DispatchNumeric(old.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (kSign > 0) {
      out.mutable_flat<T>() = old.flat<T>() + delta.flat<T>();
    } else {
      out.mutable_flat<T>() = old.flat<T>() - delta.flat<T>();
    }
    return absl::OkStatus();
  }));
  v->set_value_locked(std::move(out));
  return absl::OkStatus();
}

void RegisterVariableOps(OpRegistry& r) {
  RegisteredOp var = MakeOp(
      "VarHandleOp", {}, 1,
      {{"dtype", "type"},
       {"shape", "shape"},
       {"container", "string", AttrValue(std::string())},
       {"shared_name", "string", AttrValue(std::string())}},
      [](const AttrMap& attrs, absl::Span<const InputInfo>)
          -> absl::StatusOr<std::vector<OutputInfo>> {
        GG_ASSIGN_OR_RETURN(DataType dt, GetAttr<DataType>(attrs, "dtype"));
        GG_RETURN_IF_ERROR(CheckDtype(dt, kAllTypes, "dtype"));
        GG_ASSIGN_OR_RETURN(TensorShape s,
                            GetAttr<TensorShape>(attrs, "shape"));
        return std::vector<OutputInfo>{{DT_RESOURCE, TensorShape{}}};
      },
      // The handle carries no data: consumers reach the variable through
      // input_resource(). The output is an empty Tensor.
      [](OpKernelContext& ctx) -> absl::Status {
        ctx.set_output(0, Tensor());
        return absl::OkStatus();
      },
      // ReadVariableOp passes gradients to the handle, so gradients with
      // respect to a VarHandleOp output are those of its reads.
      {});
  var.def.stateful = true;
  var.def.dispatch = OpDef::Dispatch::kHandle;
  var.make_resource = [](const AttrMap& attrs)
      -> absl::StatusOr<std::shared_ptr<NodeResource>> {
    GG_ASSIGN_OR_RETURN(DataType dt, GetAttr<DataType>(attrs, "dtype"));
    GG_ASSIGN_OR_RETURN(TensorShape s, GetAttr<TensorShape>(attrs, "shape"));
    return std::shared_ptr<NodeResource>(
        std::make_shared<VariableResource>(dt, std::move(s)));
  };
  MustRegister(r, std::move(var));

  RegisteredOp read = MakeOp(
      "ReadVariableOp", {"resource"}, 1, {{"dtype", "type"}},
      [](const AttrMap& attrs, absl::Span<const InputInfo> in)
          -> absl::StatusOr<std::vector<OutputInfo>> {
        GG_ASSIGN_OR_RETURN(DataType dt, GetAttr<DataType>(attrs, "dtype"));
        GG_RETURN_IF_ERROR(CheckResourceInput(in[0], "resource"));
        if (in[0].handle_dtype != dt) {
          return absl::InvalidArgumentError(absl::StrCat(
              "dtype is ", DataTypeString(dt), " but the variable holds ",
              DataTypeString(in[0].handle_dtype)));
        }
        return std::vector<OutputInfo>{{dt, in[0].handle_shape}};
      },
      [](OpKernelContext& ctx) -> absl::Status {
        GG_ASSIGN_OR_RETURN(VariableResource * v, VariableInput(ctx, 0));
        GG_ASSIGN_OR_RETURN(Tensor t, v->Read());
        ctx.set_output(0, std::move(t));
        return absl::OkStatus();
      },
      [](const GradContext& ctx) -> absl::StatusOr<Grads> {
        return Grads{ctx.grad_outputs[0]};
      });
  // A read observes the variable's state: never merge or cache it.
  read.def.stateful = true;
  MustRegister(r, std::move(read));

  for (const char* op :
       {"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"}) {
    const std::string type = op;
    KernelFn kernel = type == "AssignVariableOp" ? KernelFn(AssignKernel)
                      : type == "AssignAddVariableOp"
                          ? KernelFn(AssignUpdateKernel<1>)
                          : KernelFn(AssignUpdateKernel<-1>);
    RegisteredOp assign = MakeOp(type, {"resource", "value"}, 0,
                                 {{"dtype", "type"}}, AssignShape, kernel);
    assign.def.stateful = true;
    MustRegister(r, std::move(assign));
  }
}

// --- ResourceApplyGradientDescent, ResourceApplyAdam ---

// Locks a set of variables in address order (no deadlock between two
// updates that share variables); each distinct variable once.
class MultiLock {
 public:
  static constexpr int kMaxVars = 3;  // Adam's var, m and v

  explicit MultiLock(std::initializer_list<VariableResource*> vars) {
    assert(vars.size() <= kMaxVars);
    // Insertion into address order, skipping repeats: at most three.
    for (VariableResource* v : vars) {
      int i = count_;
      while (i > 0 && vars_[i - 1] > v) --i;
      if (i > 0 && vars_[i - 1] == v) continue;
      for (int j = count_; j > i; --j) vars_[j] = vars_[j - 1];
      vars_[i] = v;
      ++count_;
    }
    for (int i = 0; i < count_; ++i) vars_[i]->mu().Lock();
  }
  ~MultiLock() {
    for (int i = count_ - 1; i >= 0; --i) vars_[i]->mu().Unlock();
  }
  MultiLock(const MultiLock&) = delete;
  MultiLock& operator=(const MultiLock&) = delete;

 private:
  VariableResource* vars_[kMaxVars] = {};
  int count_ = 0;
};

absl::StatusOr<float> ScalarInput(const OpKernelContext& ctx, int i,
                                  absl::string_view what) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DT_FLOAT || t.num_elements() != 1) {
    return ctx.InvalidArgument(
        absl::StrCat(what, " must be a float scalar, got ",
                     DataTypeString(t.dtype()), " ", t.shape().DebugString()));
  }
  return t.data<float>()[0];
}

// The float scalars of inputs first, first + 1, ... (one per name), into
// `values`: one pass, no status built unless one is wrong.
absl::Status ScalarInputs(const OpKernelContext& ctx, int first,
                          absl::Span<const absl::string_view> names,
                          float* values) {
  for (size_t k = 0; k < names.size(); ++k) {
    const Tensor& t = ctx.input(first + static_cast<int>(k));
    if (t.dtype() != DT_FLOAT || t.num_elements() != 1) {
      return ScalarInput(ctx, first + static_cast<int>(k), names[k]).status();
    }
    values[k] = t.data<float>()[0];
  }
  return absl::OkStatus();
}

// Checks that a locked variable is initialised and a float of `shape`.
absl::Status CheckLockedValue(const OpKernelContext& ctx, VariableResource* v,
                              const TensorShape& shape)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(v->mu()) {
  const Tensor& t = v->value_locked();
  if (!t.IsInitialized()) return v->UninitializedError();
  if (t.dtype() != DT_FLOAT || t.shape() != shape) {
    return ctx.InvalidArgument(absl::StrCat(
        "variable '", v->name(), "' (", DataTypeString(t.dtype()), " ",
        t.shape().DebugString(), ") does not match the gradient of shape ",
        shape.DebugString()));
  }
  return absl::OkStatus();
}

// The float value of a locked, checked variable, ready to be updated in
// place. Copy-on-write: when another tensor shares the buffer (a read of
// the variable still held by a caller, or the constant it was assigned
// from), the value is first replaced by a private copy, so nothing read
// before the update ever changes. In a training step the reads are let go
// of before the updates run, so the steady state writes in place and
// allocates nothing. The copy changes no visible value, so an update may
// make its variables writable one by one and still fail cleanly before its
// first write.
absl::StatusOr<Tensor::Flat<float>> WritableLocked(VariableResource* v)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(v->mu()) {
  Tensor& t = v->mutable_value_locked();
  if (!t.RefCountIsOne()) {
    GG_ASSIGN_OR_RETURN(Tensor copy,
                        Tensor::Uninitialized(DT_FLOAT, t.shape()));
    copy.mutable_flat<float>() = t.flat<float>();
    t = std::move(copy);
  }
  return t.mutable_flat<float>();
}

absl::Status ApplyGradientDescentKernel(OpKernelContext& ctx) {
  GG_ASSIGN_OR_RETURN(VariableResource * var, VariableInput(ctx, 0));
  GG_ASSIGN_OR_RETURN(float alpha, ScalarInput(ctx, 1, "alpha"));
  const Tensor& delta = ctx.input(2);
  MultiLock lock({var});
  var->mu().AssertHeld();  // tells the analysis what MultiLock locked
  GG_RETURN_IF_ERROR(CheckLockedValue(ctx, var, delta.shape()));
  GG_ASSIGN_OR_RETURN(Tensor::Flat<float> w, WritableLocked(var));
  w -= alpha * delta.flat<float>();
  return absl::OkStatus();
}

// Adam's update in one pass: m, v and var are each read and written once
// (as three Eigen assignments, m and v were read twice), with the same
// arithmetic in the same order as
//   m += (g - m) * (1 - beta1);  v += (g^2 - v) * (1 - beta2);
//   var -= lr_t * m' / (sqrt(v) + epsilon),
// where m' is m, or m * beta1 + (1 - beta1) * g with Nesterov momentum.
// Eigen's packet primitives, so AVX or SSE as compiled; a scalar tail.
void AdamUpdate(float* w, float* m, float* v, const float* g, int64_t n,
                float lr_t, float beta1, float beta2, float epsilon,
                bool nesterov) {
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<float>::type;
  constexpr int64_t kPacket = ei::packet_traits<float>::size;
  const float c1 = 1.0f - beta1, c2 = 1.0f - beta2;
  const Packet pc1 = ei::pset1<Packet>(c1), pc2 = ei::pset1<Packet>(c2);
  const Packet pb1 = ei::pset1<Packet>(beta1);
  const Packet plr = ei::pset1<Packet>(lr_t);
  const Packet peps = ei::pset1<Packet>(epsilon);
  int64_t i = 0;
  for (; i + kPacket <= n; i += kPacket) {
    const Packet pg = ei::ploadu<Packet>(g + i);
    Packet pm = ei::ploadu<Packet>(m + i);
    Packet pv = ei::ploadu<Packet>(v + i);
    pm = ei::padd(pm, ei::pmul(ei::psub(pg, pm), pc1));
    pv = ei::padd(pv, ei::pmul(ei::psub(ei::pmul(pg, pg), pv), pc2));
    const Packet step =
        nesterov ? ei::padd(ei::pmul(pm, pb1), ei::pmul(pc1, pg)) : pm;
    const Packet denom = ei::padd(ei::psqrt(pv), peps);
    ei::pstoreu(m + i, pm);
    ei::pstoreu(v + i, pv);
    ei::pstoreu(w + i, ei::psub(ei::ploadu<Packet>(w + i),
                                ei::pdiv(ei::pmul(plr, step), denom)));
  }
  for (; i < n; ++i) {
    m[i] += (g[i] - m[i]) * c1;
    v[i] += (g[i] * g[i] - v[i]) * c2;
    const float step = nesterov ? m[i] * beta1 + c1 * g[i] : m[i];
    w[i] -= lr_t * step / (std::sqrt(v[i]) + epsilon);
  }
}

absl::Status ApplyAdamKernel(OpKernelContext& ctx, bool nesterov) {
  GG_ASSIGN_OR_RETURN(VariableResource * var, VariableInput(ctx, 0));
  GG_ASSIGN_OR_RETURN(VariableResource * m, VariableInput(ctx, 1));
  GG_ASSIGN_OR_RETURN(VariableResource * v, VariableInput(ctx, 2));
  static constexpr absl::string_view kScalars[] = {
      "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"};
  float scalars[6];
  GG_RETURN_IF_ERROR(ScalarInputs(ctx, 3, kScalars, scalars));
  const auto [beta1_power, beta2_power, lr, beta1, beta2, epsilon] = scalars;
  const Tensor& grad = ctx.input(9);
  if (grad.dtype() != DT_FLOAT)
    return ctx.InvalidArgument("grad must be float");
  if (var == m || var == v || m == v) {
    return ctx.InvalidArgument("var, m and v must be three distinct variables");
  }
  MultiLock lock({var, m, v});
  // MultiLock's set is beyond the static analysis: these tell it (and, in
  // debug builds, check at run time) that the three are held.
  var->mu().AssertHeld();
  m->mu().AssertHeld();
  v->mu().AssertHeld();
  GG_RETURN_IF_ERROR(CheckLockedValue(ctx, var, grad.shape()));
  GG_RETURN_IF_ERROR(CheckLockedValue(ctx, m, grad.shape()));
  GG_RETURN_IF_ERROR(CheckLockedValue(ctx, v, grad.shape()));
  GG_ASSIGN_OR_RETURN(Tensor::Flat<float> w, WritableLocked(var));
  GG_ASSIGN_OR_RETURN(Tensor::Flat<float> mt, WritableLocked(m));
  GG_ASSIGN_OR_RETURN(Tensor::Flat<float> vt, WritableLocked(v));
  const float lr_t = lr * std::sqrt(1.0f - beta2_power) / (1.0f - beta1_power);
  AdamUpdate(w.data(), mt.data(), vt.data(), grad.data<float>().data(),
             grad.num_elements(), lr_t, beta1, beta2, epsilon, nesterov);
  return absl::OkStatus();
}

KernelFn BindApplyAdam(const AttrMap& attrs) {
  const bool nesterov = GetAttrOr<bool>(attrs, "use_nesterov", false);
  return [nesterov](OpKernelContext& ctx) {
    return ApplyAdamKernel(ctx, nesterov);
  };
}

// Shape function of the optimizer updates: inputs [first_scalar,
// first_scalar + num_scalars) are float scalars, the last is the gradient,
// the ones before first_scalar are float variables of the gradient's shape.
ShapeFn ApplyShape(int num_vars, int num_scalars) {
  return [num_vars, num_scalars](const AttrMap& attrs,
                                 absl::Span<const InputInfo> in)
             -> absl::StatusOr<std::vector<OutputInfo>> {
    GG_ASSIGN_OR_RETURN(DataType t, GetAttr<DataType>(attrs, "T"));
    GG_RETURN_IF_ERROR(CheckDtype(t, {DT_FLOAT}, "T"));
    const InputInfo& grad = in[num_vars + num_scalars];
    if (grad.dtype != t) {
      return absl::InvalidArgumentError(
          absl::StrCat("the gradient is ", DataTypeString(grad.dtype),
                       ", T is ", DataTypeString(t)));
    }
    for (int i = 0; i < num_vars; ++i) {
      const std::string what = absl::StrCat("input ", i);
      GG_RETURN_IF_ERROR(CheckResourceInput(in[i], what));
      if (in[i].handle_dtype != t) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " holds ", DataTypeString(in[i].handle_dtype),
                         ", T is ", DataTypeString(t)));
      }
      GG_RETURN_IF_ERROR(
          CheckShapesAgree(in[i].handle_shape, grad.shape, "the gradient"));
    }
    for (int i = num_vars; i < num_vars + num_scalars; ++i) {
      if (in[i].dtype != t || in[i].shape.dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", i, " must be a ", DataTypeString(t), " scalar, got ",
            DataTypeString(in[i].dtype), " ", in[i].shape.DebugString()));
      }
    }
    return std::vector<OutputInfo>{};
  };
}

void RegisterOptimizerOps(OpRegistry& r) {
  RegisteredOp sgd =
      MakeOp("ResourceApplyGradientDescent", {"var", "alpha", "delta"}, 0,
             {{"T", "type"}, {"use_locking", "bool", AttrValue(false)}},
             ApplyShape(1, 1), ApplyGradientDescentKernel);
  sgd.def.stateful = true;
  MustRegister(r, std::move(sgd));
  RegisteredOp adam = MakeOp("ResourceApplyAdam",
                             {"var", "m", "v", "beta1_power", "beta2_power",
                              "lr", "beta1", "beta2", "epsilon", "grad"},
                             0,
                             {{"T", "type"},
                              {"use_locking", "bool", AttrValue(false)},
                              {"use_nesterov", "bool", AttrValue(false)}},
                             ApplyShape(3, 6), BindApplyAdam);
  adam.def.stateful = true;
  MustRegister(r, std::move(adam));
}

}  // namespace

void RegisterStateOps(OpRegistry& r) {
  RegisterVariableOps(r);
  RegisterOptimizerOps(r);
}

}  // namespace graphgc
