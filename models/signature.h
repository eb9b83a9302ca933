// models/signature.h
//
// model.pb and signature.json: the frozen inference graph Save writes for
// other tools (the variables folded into constants, names as in a fresh
// graph) and the JSON naming its input and output tensors, written by
// Freeze and read by ParseSignatureUnguarded (ReadSignature,
// ParseSignature). Private to models/.
#ifndef GRAPHGC_MODELS_SIGNATURE_H_
#define GRAPHGC_MODELS_SIGNATURE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "models/saving_access.h"
#include "models/saving_types.h"

namespace graphgc {
namespace models_internal {

// The frozen inference graph and its signature.
struct FrozenModel {
  std::string graph_bytes;
  std::string signature;
};

// model.pb's bytes and signature.json's text for the model of `snap`.
absl::StatusOr<FrozenModel> Freeze(const ModelSnapshot& snap);

// signature.json's text `text` read (`file` names it in statuses); lets
// std::bad_alloc through.
absl::StatusOr<Signature> ParseSignatureUnguarded(std::string_view text,
                                                  const std::string& file);

}  // namespace models_internal
}  // namespace graphgc

#endif  // GRAPHGC_MODELS_SIGNATURE_H_
