// python/ext/bindings.h
//
// The parts of the _graphgc extension module, each registered by its own
// function (module.cc calls them in this order: callbacks and KerasTensor
// before models, whose fit and constructor take them).
#ifndef GRAPHGC_PYTHON_EXT_BINDINGS_H_
#define GRAPHGC_PYTHON_EXT_BINDINGS_H_

#include "pybind11/pybind11.h"

namespace graphgc::python {

// Layer and the layer factories, Optimizer, Loss.
void RegisterLayers(pybind11::module_& m);
// make_optimizer: any optimizer by Keras name with its base options.
void RegisterOptimizers(pybind11::module_& m);
// The stock C++ callbacks (TensorBoard, EarlyStopping, ...).
void RegisterCallbacks(pybind11::module_& m);
// KerasTensor, Input and layer calls (the functional API's symbolic
// values).
void RegisterFunctional(pybind11::module_& m);
// Sequential and Functional (compile, fit, evaluate, predict, weights,
// save) and load_model.
void RegisterModels(pybind11::module_& m);
// save_weights, load_weights, model_to_json, model_from_json and the load
// budget of a config (saving_bindings.cc).
void RegisterSaving(pybind11::module_& m);
// The default graph's collector: collect, gc_stats, leak_report, ...
void RegisterCollector(pybind11::module_& m);
// _bench: the seed workload fit from C++, for the Python-vs-C++ benchmark.
void RegisterBench(pybind11::module_& m);
// The process-wide settings of graphgc.config (intra-op threads).
void RegisterConfig(pybind11::module_& m);
// The ..._for_testing hooks of the pytest suites.
void RegisterTestingHooks(pybind11::module_& m);

}  // namespace graphgc::python

#endif  // GRAPHGC_PYTHON_EXT_BINDINGS_H_
