// models/optimizer_registry.h
//
// The optimizer registry: one OptimizerKind per Keras optimizer class, each
// defined by its own file under models/optimizers/ (sgd.cc, adam.cc, ...)
// and listed in the table of optimizer_registry.cc. Everything that differs
// between optimizers is here: the Keras class name, the option checks, the
// slots per weight (for the load budget), the learning rate field, the
// compile_config codec and the update nodes. Compile, SetLearningRate,
// saving and loading dispatch through the kind; nothing else looks at an
// optimizer's options. Private to models/.
//
// Adding an optimizer: its options struct, factory and variant member in
// models/optimizers.h, one file models/optimizers/<name>.cc defining its
// OptimizerKind, and one line in the table of optimizer_registry.cc (the
// table names each kind, so a static library keeps every kind's object).
#ifndef GRAPHGC_MODELS_OPTIMIZER_REGISTRY_H_
#define GRAPHGC_MODELS_OPTIMIZER_REGISTRY_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/keras_json.h"
#include "models/optimizers.h"
#include "runtime/graph.h"
#include "runtime/session.h"

namespace graphgc {
namespace models_internal {

// The learning rate as a graph variable (a float scalar): the update ops
// read `read` every step, so SetLearningRate assigns it (feeding
// `assign_value`, running `assign`) without building anything.
struct LearningRateNodes {
  Output variable;      // VarHandleOp "<scope>/<Optimizer>/learning_rate"
  Output read;          // ReadVariableOp the update ops take as their lr
  Output assign_value;  // float scalar Placeholder
  Output assign;        // AssignVariableOp (a run target)
};

// One of the optimizer's variables Keras saves (its `variables`): what Save
// reads and LoadModel assigns.
struct OptimizerVariable {
  Output variable;  // VarHandleOp
  Output read;      // its ReadVariableOp "<name>/ReadForSave"
  DataType dtype = DT_FLOAT;
  TensorShape shape;
};

// A float scalar variable holding base^(iterations + 1) that Keras does not
// keep (it computes the power each step): set from a restored iteration
// count.
struct StepPowerVariable {
  Output variable;
  float base = 0.f;
};

// Which of an optimizer's variables Keras saves besides `iterations` and
// the learning rate, in the order its `build` adds them (see
// OptimizerKind::state_layout). Names are those the kind's build gives.
struct OptimizerStateLayout {
  // Per-weight slots ("<scope>/<Class>/<weight node>/<slot>"), one
  // add_optimizer_variables call per group: a group's slots interleaved per
  // weight, the groups one after the other.
  std::vector<std::vector<std::string>> slot_groups;
  // Scalars "<scope>/<Class>/<name>" Keras tracks after the slots (Nadam's
  // u_product).
  std::vector<std::string> scalars;
  // Scalars "<scope>/<Class>/<name>" that are base^(iterations + 1) and not
  // saved (Adam's beta_1_power).
  std::vector<std::pair<std::string, float>> step_powers;
};

struct UpdateNodes {
  Output train_op;  // NoOp standing for the whole step
  LearningRateNodes learning_rate;
  // Keras's `iterations`: an int64 scalar variable "<s>/iteration", the
  // number of steps taken (0 during the first).
  Output iterations;
  Output iterations_read;  // its ReadVariableOp, "<s>/iteration/Read"
  // Keras's optimizer.variables in its order: iterations, the learning
  // rate (unless a schedule gives it), then the kind's state_layout.
  std::vector<OptimizerVariable> state;
  std::vector<StepPowerVariable> step_powers;
};

// What every optimizer's updates are built from (see BuildUpdates): the
// gradients are already clipped, `after` includes the weight decay, and
// `lr` and `local_step` are ready.
struct UpdateInputs {
  Graph& graph;
  const std::vector<Output>& variables;
  const std::vector<TensorShape>& shapes;
  const std::vector<Output>& grads;
  const std::vector<NodeHandle>& after;
  const std::string& scope;
  Session& session;
  Output lr;          // the learning rate this step (float scalar)
  Output local_step;  // Keras's iterations + 1 as a float scalar
};

// One optimizer's nodes: the updates a step runs.
struct OptimizerUpdates {
  std::vector<NodeHandle> updates;
};

struct OptimizerKind {
  std::string class_name;  // Keras's: "Adam"
  std::string keras_name;  // the config's "name" and compile's string: "adam"
  // Whether `optimizer` holds this kind's options.
  bool (*holds)(const Optimizer& optimizer);
  // The learning rate field of this kind's options (holds() is true).
  float* (*learning_rate)(Optimizer& optimizer);
  // Refuses options that can only make NaN or infinite weights, naming the
  // option and its value.
  absl::Status (*check)(const Optimizer& optimizer);
  // Float variables the size of each weight that the optimizer keeps.
  int (*slots_per_weight)(const Optimizer& optimizer);
  // Keras's serialised optimizer for compile_config.
  Json (*write_config)(const Optimizer& optimizer);
  // The optimizer a compile_config's "config" object describes (absent
  // fields take Keras's defaults).
  absl::StatusOr<Optimizer> (*read_config)(const ConfigObject& config);
  // The update nodes, under "<scope>/<class_name>".
  absl::StatusOr<OptimizerUpdates> (*build)(const Optimizer& optimizer,
                                            const UpdateInputs& in);
  // The weight decay when BaseOptimizerOptions::weight_decay is unset
  // (AdamW's 0.004).
  float default_weight_decay = 0.f;
  // The variables Keras's build adds (keras/src/optimizers/<name>.py), for
  // Save and LoadModel.
  OptimizerStateLayout (*state_layout)(const Optimizer& optimizer) = nullptr;
};

// The kind `optimizer` holds; nullptr for none.
const OptimizerKind* FindOptimizerKind(const Optimizer& optimizer);

// The kind of a Keras class name ("RMSprop") or its string name
// ("rmsprop"); nullptr when unknown.
const OptimizerKind* FindOptimizerKindByName(const std::string& name);

// Every kind, in the table's order.
const std::vector<const OptimizerKind*>& OptimizerKinds();

// "Adam, RMSprop, SGD": the known class names, for error messages.
std::string KnownOptimizers();

// Refuses optimizer options that can only make NaN or infinite weights,
// naming the option and its value, the base options' conflicts, and no
// optimizer at all.
absl::Status CheckOptimizer(const Optimizer& optimizer);

// The optimizer's updates of `variables` (VarHandleOp outputs) from
// `grads`, run after `after` (the loss and metrics), and one NoOp that
// stands for the whole step (it also runs `extra_updates`, e.g. moving
// statistics), with the base options applied around the kind's update
// (models/optimizer_base.h). Initialises the optimizer's own variables (the
// learning rate included) with `session`.
absl::StatusOr<UpdateNodes> BuildUpdates(
    const Optimizer& optimizer, const std::vector<Output>& variables,
    const std::vector<TensorShape>& shapes, const std::vector<Output>& grads,
    const std::vector<NodeHandle>& after, const std::string& scope,
    Session& session, const std::vector<NodeHandle>& extra_updates = {});

// --- What the kinds' files build with ---

// InvalidArgument "<option> must be <rule>, got <value>".
absl::Status BadOption(const std::string& option, float value,
                       const std::string& rule);

// learning_rate finite and >= 0, named "<class_name> learning_rate".
absl::Status CheckLearningRate(const std::string& class_name, float value);

// A variable of the optimizer, set to `init` once with `session`.
absl::StatusOr<Output> SlotVariable(Graph& g, const std::string& name,
                                    const Tensor& init, Session& session);

// A zero float slot the shape of weight `i`, "<base>/<slot>".
absl::StatusOr<Output> ZeroSlot(const UpdateInputs& in, size_t i,
                                const std::string& base,
                                const std::string& slot);

// The learning rate variable of the optimizer scope `s`, set to `value`.
absl::StatusOr<LearningRateNodes> LearningRateVariable(Graph& g,
                                                       const std::string& s,
                                                       float value,
                                                       Session& session);

// A float scalar constant under the optimizer scope.
absl::StatusOr<Output> ScalarConst(Graph& g, float value,
                                   const std::string& name);

// base^local_step (base >= 0) as exp(local_step * log(base)): Keras's
// ops.power(base, iterations + 1) per step.
absl::StatusOr<Output> StepPower(Graph& g, float base, const Output& step,
                                 const std::string& name);

// |x| and sign(x) (-1, 0 or 1), composed from elementwise ops.
absl::StatusOr<Output> AbsOf(const Output& x, const std::string& name);
absl::StatusOr<Output> SignOf(const Output& x, const std::string& name);

// slot += (x - slot) * (1 - beta), as Keras's moment updates; assigns the
// slot (run after `after`) and returns the new value and the assignment.
struct SlotUpdate {
  Output value;
  Output assign;
};
absl::StatusOr<SlotUpdate> MovingAverageSlot(
    const Output& slot, const Output& x, float beta,
    const std::vector<NodeHandle>& after, const std::string& name);

// "<optimizer scope>/<variable's node name>": where a weight's slots go.
std::string SlotBase(const std::string& s, const Output& var);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_OPTIMIZER_REGISTRY_H_
