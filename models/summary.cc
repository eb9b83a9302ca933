#include "models/summary.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/layer_state.h"

namespace graphgc {
namespace models_internal {
namespace {

// Keras's column ends: Sequential's layout (65 characters, columns ending
// at 45%, 85% and 100%) and the functional one (98 characters, at 33%, 55%,
// 67% and 100%).
const std::vector<int> kSequentialColumns = {29, 55, 65};
const std::vector<int> kFunctionalColumns = {32, 53, 65, 98};

// One table row: each field starts at its column; a field too long for its
// column (keeping one space before the next) continues on the next line, as
// newer Kerases wrap it. Trailing spaces are left out.
void AppendRow(std::string& out, const std::vector<int>& column_ends,
               const std::vector<std::string>& fields) {
  std::vector<std::string> left = fields;
  bool first = true;
  while (first ||
         std::any_of(left.begin(), left.end(),
                     [](const std::string& f) { return !f.empty(); })) {
    first = false;
    std::string line;
    int start = 0;
    for (size_t c = 0; c < left.size(); ++c) {
      const bool last = c + 1 == left.size();
      const size_t room = last
                              ? std::string::npos
                              : static_cast<size_t>(column_ends[c] - start - 1);
      line.resize(start, ' ');
      line += left[c].substr(0, room);
      left[c] = room >= left[c].size() ? "" : left[c].substr(room);
      start = column_ends[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
}

// a + b for counts >= 0, at most INT64_MAX (parameter counts of weights
// that exist in memory never get there).
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum)
             ? std::numeric_limits<int64_t>::max()
             : sum;
}

// 1234567 as "1,234,567" (Keras's "{:,}").
std::string WithCommas(int64_t n) {
  std::string digits = absl::StrCat(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// A built layer's name in its graph.
std::string NameOf(const LayerState& layer) {
  const BuiltLayer* built = layer.built();
  return built == nullptr ? layer.requested_name : built->name();
}

// One table row per row of `rows`: its fields, then each further line of
// its last column ("Connected to") on its own line.
struct Row {
  std::vector<std::string> fields;
  std::vector<std::string> more;
};

// Sequential's rows: each call after the Input, in order.
std::vector<Row> SequentialRows(const ModelState& m, ParamCount& total) {
  std::vector<Row> rows;
  for (size_t c = 1; c < m.calls.calls.size(); ++c) {
    const LayerState& layer = *m.calls.calls[c].layer;
    const SummaryRow row =
        LayerSummaryRow(layer, NameOf(layer), m.layer_shapes[c]);
    total.trainable = SaturatingAdd(total.trainable, row.params.trainable);
    total.non_trainable =
        SaturatingAdd(total.non_trainable, row.params.non_trainable);
    rows.push_back({row.fields, {}});
  }
  return rows;
}

// The functional rows: each layer once (the shape of its first call), with
// the values its calls read, "<layer>[<call>][0]" (a layer's calls counted
// in this model).
std::vector<Row> FunctionalRows(const ModelState& m, ParamCount& total) {
  const std::vector<LayerCall>& calls = m.calls.calls;
  // Each call's number among its layer's calls.
  std::vector<int> call_number(calls.size());
  std::map<const LayerState*, int> seen;
  for (size_t c = 0; c < calls.size(); ++c) {
    call_number[c] = seen[calls[c].layer.get()]++;
  }
  std::vector<Row> rows;
  std::map<const LayerState*, size_t> row_of;
  for (size_t c = 0; c < calls.size(); ++c) {
    const LayerState& layer = *calls[c].layer;
    std::vector<std::string> connections;
    for (int in : calls[c].inputs) {
      connections.push_back(
          absl::StrCat(NameOf(*calls[in].layer), "[", call_number[in], "][0]"));
    }
    auto [it, first] = row_of.emplace(&layer, rows.size());
    if (first) {
      const SummaryRow row =
          LayerSummaryRow(layer, NameOf(layer), m.layer_shapes[c]);
      total.trainable = SaturatingAdd(total.trainable, row.params.trainable);
      total.non_trainable =
          SaturatingAdd(total.non_trainable, row.params.non_trainable);
      Row r{row.fields, {}};
      r.fields.push_back(connections.empty() ? "" : connections[0]);
      if (!connections.empty()) {
        r.more.assign(connections.begin() + 1, connections.end());
      }
      rows.push_back(std::move(r));
    } else {
      Row& r = rows[it->second];
      r.more.insert(r.more.end(), connections.begin(), connections.end());
    }
  }
  return rows;
}

}  // namespace

std::string ModelSummary(const ModelState& m) {
  const bool functional = m.class_name != "Sequential";
  const std::vector<int>& columns =
      functional ? kFunctionalColumns : kSequentialColumns;
  const int width = columns.back();
  const std::string rule(width, '_');
  const std::string double_rule(width, '=');
  std::string out = absl::StrCat("Model: \"", m.scope.name(), "\"\n");
  out += rule + "\n";
  std::vector<std::string> header = {"Layer (type)", "Output Shape", "Param #"};
  if (functional) header.push_back("Connected to");
  AppendRow(out, columns, header);
  out += double_rule + "\n";
  ParamCount total;
  const std::vector<Row> rows =
      functional ? FunctionalRows(m, total) : SequentialRows(m, total);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) out += rule + "\n";
    AppendRow(out, columns, rows[i].fields);
    for (const std::string& more : rows[i].more) {
      std::vector<std::string> line(columns.size());
      line.back() = more;
      AppendRow(out, columns, line);
    }
  }
  out += double_rule + "\n";
  absl::StrAppend(
      &out, "Total params: ",
      WithCommas(SaturatingAdd(total.trainable, total.non_trainable)), "\n",
      "Trainable params: ", WithCommas(total.trainable), "\n",
      "Non-trainable params: ", WithCommas(total.non_trainable), "\n");
  out += rule + "\n";
  return out;
}

}  // namespace models_internal
}  // namespace graphgc
