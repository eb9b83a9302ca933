// Sequential's side of models/callbacks/model_access.h: the CallbackModel
// through which the stock callbacks reach the model they watch.
#include <memory>
#include <string>
#include <vector>

#include "models/callbacks/model_access.h"
#include "models/saving.h"
#include "models/sequential.h"

namespace graphgc {
namespace {

// Holds the address of the model a hook was given, as a callback holding
// `const Sequential&` would, so a callback that outlives its fit keeps
// nothing of the model alive. Changes go through a copy of the handle (a
// copy is the same model).
class SequentialCallbackModel final : public CallbackModel {
 public:
  explicit SequentialCallbackModel(const Sequential& model) : model_(&model) {}

  void StopTraining() override { Sequential(*model_).StopTraining(); }
  absl::StatusOr<float> learning_rate() const override {
    return model_->learning_rate();
  }
  absl::Status SetLearningRate(float learning_rate) override {
    return Sequential(*model_).SetLearningRate(learning_rate);
  }
  std::vector<Tensor> GetWeights() const override {
    return model_->GetWeights();
  }
  absl::Status SetWeights(const std::vector<Tensor>& weights) override {
    return Sequential(*model_).SetWeights(weights);
  }
  std::vector<NodeHandle> GraphRoots() const override {
    return model_->GraphRoots();
  }
  absl::StatusOr<std::string> KerasConfigJson(
      const ScopeRenaming& renaming) const override {
    return ModelToJson(*model_, renaming);
  }
  absl::Status Save(const std::string& dir) const override {
    return model_->Save(dir);
  }
  absl::Status SaveWeights(const std::string& path) const override {
    return graphgc::SaveWeights(*model_, path);
  }

 private:
  const Sequential* model_;
};

}  // namespace

std::unique_ptr<CallbackModel> CallbackModelOf(const Sequential& model) {
  return std::make_unique<SequentialCallbackModel>(model);
}

}  // namespace graphgc
