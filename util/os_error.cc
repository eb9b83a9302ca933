#include "util/os_error.h"

#include <cstring>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace graphgc {
namespace {

// The payload's type URL; its value is the errno in decimal.
constexpr char kErrnoPayload[] = "type.googleapis.com/graphgc.Errno";

absl::string_view View(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace

absl::Status OsError(int errnum, std::string_view what) {
  absl::Status status = absl::ErrnoToStatus(errnum, View(what));
  status.SetPayload(kErrnoPayload, absl::Cord(absl::StrCat(errnum)));
  return status;
}

int OsErrno(const absl::Status& status) {
  // absl::optional: Debian's Abseil may not alias std::optional.
  const auto payload = status.GetPayload(kErrnoPayload);
  int errnum = 0;
  if (!payload.has_value() ||
      !absl::SimpleAtoi(std::string(*payload), &errnum) || errnum <= 0) {
    return 0;
  }
  return errnum;
}

absl::Status Annotate(const absl::Status& status, std::string_view prefix) {
  if (status.ok()) return status;
  absl::Status out(status.code(),
                   absl::StrCat(View(prefix), ": ", status.message()));
  status.ForEachPayload([&out](absl::string_view url, const absl::Cord& value) {
    out.SetPayload(url, value);
  });
  return out;
}

}  // namespace graphgc
