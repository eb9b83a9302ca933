// tests/models/save_golden_cases.h
//
// Deterministic models for the byte-identical Save test: each case builds a
// model on a fresh graph from fixed seeds (layer seeds, FitOptions::seed,
// fixed training data), then writes it with Sequential::Save into
// `<root>/<case>/` and with SaveWeights into
// `<root>/<case>/save_weights.weights.h5`. Together the cases cover every
// layer kind, Adam and SGD with momentum, the three losses, models trained
// by a short Fit, compiled but untrained, and never compiled.
//
// save_golden_gen writes them into tests/models/testdata/save_golden/;
// save_golden_test writes them again and compares every file byte for byte.
#ifndef GRAPHGC_TESTS_MODELS_SAVE_GOLDEN_CASES_H_
#define GRAPHGC_TESTS_MODELS_SAVE_GOLDEN_CASES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace graphgc {
namespace testing {

// The case names, in the order WriteGoldenCase takes them.
std::vector<std::string> GoldenCaseNames();

// Builds case `name` and writes it into `<root>/<name>/` (replaced whole).
absl::Status WriteGoldenCase(const std::string& name, const std::string& root);

}  // namespace testing
}  // namespace graphgc

#endif  // GRAPHGC_TESTS_MODELS_SAVE_GOLDEN_CASES_H_
