// The default graph's collector from Python. Every call releases the GIL
// while it reads or changes the graph (it waits for the graph's or the
// collector's lock, which a fit or a collection on another thread may
// hold), and makes its Python result once the GIL is back.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gc/collector.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/ext/bindings.h"
#include "python/ext/gil.h"
#include "python/ext/status_exception.h"
#include "runtime/graph.h"

namespace graphgc::python {
namespace {

namespace py = pybind11;
using py::arg;

py::dict PolicyDict(const GcPolicy& p) {
  py::dict d;
  d["automatic"] = p.automatic;
  d["growth_ratio"] = p.growth_ratio;
  d["min_new_nodes"] = p.min_new_nodes;
  d["save_garbage"] = p.save_garbage;
  d["promote_after"] = p.promote_after;
  return d;
}

}  // namespace

void RegisterCollector(py::module_& m) {
  m.def("collect", [] {
    CollectStats s;
    {
      GilReleased nogil;
      s = Graph::Default().Collect();
    }
    py::dict d;
    d["marked"] = s.marked;
    d["swept"] = s.swept;
    d["pause_ns"] = s.pause_ns;
    d["minor"] = s.minor;
    return d;
  });
  m.def("gc_stats", [] {
    GcStats s = WithoutGil([] { return Graph::Default().gc_stats(); });
    py::dict d;
    d["collections"] = s.collections;
    d["swept_total"] = s.swept_total;
    d["pause_ns_total"] = s.pause_ns_total;
    d["last_pause_ns"] = s.last_pause_ns;
    d["live_nodes"] = s.live_nodes;
    d["peak_nodes"] = s.peak_nodes;
    d["minor_collections"] = s.minor_collections;
    return d;
  });
  m.def("num_nodes",
        [] { return WithoutGil([] { return Graph::Default().num_nodes(); }); });
  m.def("leak_report", [] {
    std::vector<OwnerUsage> usage =
        WithoutGil([] { return Graph::Default().LeakReport(); });
    std::string out;
    for (const OwnerUsage& u : usage) {
      absl::StrAppend(&out, u.owner, ": ", u.nodes, " nodes, ", u.bytes,
                      " bytes\n");
    }
    return out;
  });
  m.def(
      "explain_retention",
      [](const std::string& name) {
        return ValueOrThrow(WithoutGil(
            [&name] { return Graph::Default().ExplainRetention(name); }));
      },
      arg("name"));
  m.def("gc_policy", [] {
    return PolicyDict(
        WithoutGil([] { return Graph::Default().collector().policy(); }));
  });
  m.def(
      "set_gc_policy",
      [](bool automatic, double growth_ratio, int64_t min_new_nodes,
         bool save_garbage, int promote_after) {
        if (!(growth_ratio >= 0)) {
          throw py::value_error("set_gc_policy: growth_ratio must be >= 0");
        }
        if (min_new_nodes < 0) {
          throw py::value_error("set_gc_policy: min_new_nodes must be >= 0");
        }
        if (promote_after < 0 || promote_after > 100) {
          throw py::value_error(
              "set_gc_policy: promote_after must be in [0, 100]");
        }
        const GcPolicy policy{.automatic = automatic,
                              .growth_ratio = growth_ratio,
                              .min_new_nodes = min_new_nodes,
                              .save_garbage = save_garbage,
                              .promote_after = promote_after};
        GilReleased nogil;
        Graph::Default().set_gc_policy(policy);
      },
      arg("automatic"), arg("growth_ratio"), arg("min_new_nodes"),
      arg("save_garbage"), arg("promote_after"));
}

}  // namespace graphgc::python
