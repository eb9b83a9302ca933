// models/summary.h
//
// ModelSummary: Keras's summary table of a built model, the layout chosen
// by its class: Sequential's (65 columns, a row per layer after the Input)
// or Functional's (98 columns, a row per layer, Input layers included, with
// the values each reads, "Connected to"). Private to models/.
#ifndef GRAPHGC_MODELS_SUMMARY_H_
#define GRAPHGC_MODELS_SUMMARY_H_

#include <string>

#include "models/model_state.h"

namespace graphgc {
namespace models_internal {

// The caller holds the model (ModelCall): the layers' builds are read.
std::string ModelSummary(const ModelState& m);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_SUMMARY_H_
