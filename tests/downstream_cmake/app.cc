// A CMake consumer of an installed graphgc (find_package(graphgc)): fits a
// small model with a TensorBoard callback, saves and reloads it, checks that
// the reloaded model predicts the same, and reads the event file back with
// the installed protos (graphgc::proto::Event). Exits non-zero on any
// surprise. Usage: app <scratch directory>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/saving.h"
#include "models/sequential.h"
#include "runtime/tensor.h"
#include "serialize/event.pb.h"
#include "serialize/event_file.h"

namespace gg = graphgc;

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "downstream_cmake: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return Fail("usage: app <scratch directory>");
  const std::string dir = argv[1];
  absl::StatusOr<gg::Sequential> model = gg::Sequential::Create({
      gg::layers::Input({4}),
      gg::layers::Dense(8, {.activation = "relu"}),
      gg::layers::Dense(3, {.activation = "softmax"}),
  });
  if (!model.ok()) return Fail(std::string(model.status().message()));
  absl::Status s =
      model->Compile({.optimizer = gg::optimizers::Adam(),
                      .loss = gg::losses::SparseCategoricalCrossentropy()});
  if (!s.ok()) return Fail(std::string(s.message()));
  std::vector<float> xs(64 * 4);
  std::vector<int32_t> ys(64);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = 0.01f * static_cast<float>(i % 17);
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<int32_t>(i % 3);
  absl::StatusOr<gg::Tensor> x = gg::Tensor::FromData<float>({64, 4}, xs);
  absl::StatusOr<gg::Tensor> y = gg::Tensor::FromData<int32_t>({64}, ys);
  if (!x.ok() || !y.ok()) return Fail("tensors");
  auto tensorboard =
      gg::callbacks::TensorBoard::Create({.log_dir = dir + "/logs"});
  absl::StatusOr<gg::History> history = model->Fit(
      *x, *y, {.epochs = 2, .verbose = 0, .callbacks = {tensorboard}});
  if (!history.ok()) return Fail(std::string(history.status().message()));

  s = model->Save(dir + "/model");
  if (!s.ok()) return Fail(std::string(s.message()));
  absl::StatusOr<gg::Sequential> copy = gg::LoadModel(dir + "/model");
  if (!copy.ok()) return Fail(std::string(copy.status().message()));
  absl::StatusOr<gg::Tensor> a = model->Predict(*x);
  absl::StatusOr<gg::Tensor> b = copy->Predict(*x);
  if (!a.ok() || !b.ok()) return Fail("predict");
  const auto pa = a->data<float>();
  const auto pb = b->data<float>();
  for (int64_t i = 0; i < a->num_elements(); ++i) {
    if (pa[i] != pb[i]) return Fail("the reloaded model predicts otherwise");
  }

  absl::StatusOr<std::vector<gg::proto::Event>> events =
      gg::EventFileReader::ReadAll(tensorboard->train_path());
  if (!events.ok()) return Fail(std::string(events.status().message()));
  int graphs = 0;
  for (const gg::proto::Event& e : *events) graphs += e.has_graph_def() ? 1 : 0;
  if (graphs != 1) return Fail("expected one graph in the event file");
  std::printf("downstream_cmake: ok (%zu events, loss %.4f)\n", events->size(),
              history->values("loss").back());
  return 0;
}
