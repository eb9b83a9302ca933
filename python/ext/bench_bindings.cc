// _graphgc._bench: the C++ side of the Python-vs-C++ benchmark
// (python/bench/seed_fit_bench.py), built into the module so that both
// sides run in one process with the same compiled code: the seed program's
// data, and one seed model fit entirely from C++, timed around Fit alone as
// the Python side times model.fit.
#include <string>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "models/callbacks.h"
#include "pybind11/pybind11.h"
#include "python/ext/bindings.h"
#include "python/ext/gil.h"
#include "python/ext/numpy_tensor.h"
#include "python/ext/status_exception.h"
#include "runtime/graph.h"
#include "tools/seed_workload.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;
using py::arg;

}  // namespace

void RegisterBench(py::module_& m) {
  py::module_ bench = m.def_submodule("_bench", "benchmark helpers");
  bench.def(
      "seed_data",
      [](int samples) {
        std::pair<Tensor, Tensor> data = ValueOrThrow(seed::Data(samples));
        return py::make_tuple(ArrayFromTensor(std::move(data.first)),
                              ArrayFromTensor(std::move(data.second)));
      },
      arg("samples") = 1000);
  // Builds and compiles the seed model on the default graph, then fits it
  // once on seed::Data(samples) with a TensorBoard callback writing to
  // log_dir (update_freq 600, verbose 0); returns the seconds Fit took.
  bench.def(
      "seed_fit_cpp",
      [](const std::string& log_dir, int samples) {
        std::pair<Tensor, Tensor> data = ValueOrThrow(seed::Data(samples));
        absl::StatusOr<Sequential> model =
            WithoutGil([] { return seed::Model(Graph::Default()); });
        if (!model.ok()) ThrowStatus(model.status());
        absl::Duration took;
        absl::StatusOr<History> history = WithoutGil([&] {
          auto tensorboard = callbacks::TensorBoard::Create(
              {.log_dir = log_dir, .update_freq = 600});
          absl::Time start = absl::Now();
          absl::StatusOr<History> h =
              model->Fit(data.first, data.second,
                         {.verbose = 0, .callbacks = {tensorboard}});
          took = absl::Now() - start;
          return h;
        });
        if (!history.ok()) ThrowStatus(history.status(), ErrorContext::kFit);
        return absl::ToDoubleSeconds(took);
      },
      arg("log_dir"), arg("samples") = 1000);
}

}  // namespace graphgc::python
