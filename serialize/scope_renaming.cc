// serialize/scope_renaming.cc: graph-wide scope names to local ones.
#include "serialize/scope_renaming.h"

#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "serialize/node_def.pb.h"

namespace graphgc {
namespace {

// "dense_14" -> ("dense", 14); "dense" -> ("dense", 0). Only a trailing
// "_<digits>" with something before it counts as a uniquing suffix.
std::pair<std::string, int64_t> SplitSuffix(absl::string_view scope) {
  const size_t underscore = scope.rfind('_');
  if (underscore == absl::string_view::npos || underscore == 0 ||
      underscore + 1 == scope.size()) {
    return {std::string(scope), 0};
  }
  int64_t k = 0;
  for (size_t i = underscore + 1; i < scope.size(); ++i) {
    if (scope[i] < '0' || scope[i] > '9') return {std::string(scope), 0};
    k = k * 10 + (scope[i] - '0');
    if (k > (int64_t{1} << 40)) return {std::string(scope), 0};
  }
  return {std::string(scope.substr(0, underscore)), k};
}

}  // namespace

std::string RenameScopes(absl::string_view name, const ScopeRenaming& map) {
  std::string out;
  out.reserve(name.size());
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    if (slash == absl::string_view::npos) slash = name.size();
    absl::string_view part = name.substr(start, slash - start);
    auto it = map.find(part);
    if (!out.empty() || start > 0) out += '/';
    out += it == map.end() ? std::string(part) : it->second;
    start = slash + 1;
  }
  return out;
}

ScopeRenaming LocalizeScopeNames(proto::GraphDef& graph_def) {
  // The exported top-level scopes, grouped by base and ordered by suffix.
  std::map<std::string, std::set<int64_t>> by_base;
  absl::flat_hash_map<std::string, bool> seen;
  for (const proto::NodeDef& node : graph_def.node()) {
    absl::string_view name = node.name();
    std::string scope(name.substr(0, name.find('/')));
    if (seen.emplace(scope, true).second) {
      auto [base, k] = SplitSuffix(scope);
      by_base[base].insert(k);
    }
  }
  ScopeRenaming map;
  for (const auto& [base, suffixes] : by_base) {
    int64_t local = 0;
    for (int64_t k : suffixes) {
      const std::string from = k == 0 ? base : absl::StrCat(base, "_", k);
      const std::string to = local == 0 ? base : absl::StrCat(base, "_", local);
      ++local;
      if (from != to) map.emplace(from, to);
    }
  }
  if (map.empty()) return map;
  for (proto::NodeDef& node : *graph_def.mutable_node()) {
    node.set_name(RenameScopes(node.name(), map));
    for (std::string& input : *node.mutable_input()) {
      const bool control = !input.empty() && input[0] == '^';
      absl::string_view body = absl::string_view(input).substr(control ? 1 : 0);
      const size_t colon = body.rfind(':');
      std::string port;
      if (colon != absl::string_view::npos) {
        port = std::string(body.substr(colon));
        body = body.substr(0, colon);
      }
      input = absl::StrCat(control ? "^" : "", RenameScopes(body, map), port);
    }
  }
  return map;
}

}  // namespace graphgc
