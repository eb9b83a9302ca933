// graphgc.config's C++ half: the process-wide intra-op thread count
// (runtime/intra_op_threads.h), and set_random_seed's stream of drawn seeds
// (models/random_seed.h). Each call is an atomic load or store, or a short
// lock no model holds while it waits, so none releases the GIL.
#include "models/random_seed.h"
#include "pybind11/pybind11.h"
#include "python/ext/bindings.h"
#include "python/ext/status_exception.h"
#include "runtime/intra_op_threads.h"

namespace graphgc::python {

void RegisterConfig(pybind11::module_& m) {
  m.def(
      "_set_intra_op_threads",
      [](int n) {
        if (absl::Status s = SetIntraOpThreads(n); !s.ok()) ThrowStatus(s);
      },
      pybind11::arg("n"));
  m.def("_intra_op_threads", [] { return IntraOpThreads(); });
  m.def("_intra_op_threads_setting", [] { return IntraOpThreadsSetting(); });
  m.def(
      "_set_random_seed", [](uint64_t seed) { SetRandomSeed(seed); },
      pybind11::arg("seed"));
}

}  // namespace graphgc::python
