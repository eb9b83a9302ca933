#include "models/callbacks/callback.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <typeinfo>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

// Which running fit holds each claimed callback: the model's name by the
// callback's address (a claimed callback is kept alive by its claim, so the
// address cannot be reused while it is here).
struct ClaimRegistry {
  Mutex mu;
  std::unordered_map<const Callback*, std::string> model_of ABSL_GUARDED_BY(mu);
};

ClaimRegistry& Claims() {
  static ClaimRegistry* const registry = new ClaimRegistry();
  return *registry;
}

// The dynamic type of `cb`, demangled: "graphgc::callbacks::TensorBoard".
std::string TypeName(const Callback& cb) {
  const char* mangled = typeid(cb).name();
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : mangled;
  std::free(demangled);
  return name;
}

}  // namespace

absl::Status Callback::OnTrainBegin(const Sequential&, const TrainInfo&) {
  return absl::OkStatus();
}
absl::Status Callback::OnTrainEnd(const Logs&) { return absl::OkStatus(); }
absl::Status Callback::OnEpochBegin(int) { return absl::OkStatus(); }
absl::Status Callback::OnEpochEnd(int, const Logs&) { return absl::OkStatus(); }
absl::Status Callback::OnBatchBegin(int64_t) { return absl::OkStatus(); }
absl::Status Callback::OnBatchEnd(int64_t, const Logs&) {
  return absl::OkStatus();
}
absl::Status Callback::Validate() const { return absl::OkStatus(); }

CallbackClaims::~CallbackClaims() { Release(); }

CallbackClaims& CallbackClaims::operator=(CallbackClaims&& other) noexcept {
  if (this != &other) {
    Release();
    claimed_ = std::move(other.claimed_);
    other.claimed_.clear();
  }
  return *this;
}

void CallbackClaims::Release() {
  if (claimed_.empty()) return;
  ClaimRegistry& registry = Claims();
  WriterLock lock(registry.mu);
  for (const std::shared_ptr<Callback>& cb : claimed_) {
    registry.model_of.erase(cb.get());
  }
  claimed_.clear();
}

absl::StatusOr<CallbackClaims> ClaimCallbacks(
    const std::vector<std::shared_ptr<Callback>>& callbacks,
    const std::string& model) {
  CallbackClaims claims;  // releases what it holds on every early return
  absl::Status refused;
  {
    ClaimRegistry& registry = Claims();
    WriterLock lock(registry.mu);
    for (const std::shared_ptr<Callback>& cb : callbacks) {
      if (cb == nullptr ||
          std::find(claims.claimed_.begin(), claims.claimed_.end(), cb) !=
              claims.claimed_.end()) {
        continue;
      }
      auto [it, inserted] = registry.model_of.emplace(cb.get(), model);
      if (!inserted) {
        refused = absl::FailedPreconditionError(
            absl::StrCat("Fit of '", model, "': callback ", TypeName(*cb),
                         " is already in use by a running fit of model '",
                         it->second, "'; a callback serves one fit at a time"));
        break;
      }
      claims.claimed_.push_back(cb);
    }
  }
  GG_RETURN_IF_ERROR(refused);
  for (const std::shared_ptr<Callback>& cb : claims.claimed_) {
    GG_RETURN_IF_ERROR(cb->Validate());
  }
  return claims;
}

}  // namespace graphgc
