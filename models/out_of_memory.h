// models/out_of_memory.h
//
// OutOfMemoryIsAStatus: how models/' public entry points that read files
// (LoadModel, LoadWeights, ModelFromJson, ...) keep std::bad_alloc from
// escaping. Private to models/.
#ifndef GRAPHGC_MODELS_OUT_OF_MEMORY_H_
#define GRAPHGC_MODELS_OUT_OF_MEMORY_H_

#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace graphgc {
namespace models_internal {

// `fn()`, or ResourceExhausted "<what>: out of memory" when it runs out of
// memory.
template <typename Fn>
auto OutOfMemoryIsAStatus(const std::string& what, Fn fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  }
}

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_OUT_OF_MEMORY_H_
