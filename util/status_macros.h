// util/status_macros.h
//
// GG_RETURN_IF_ERROR and GG_ASSIGN_OR_RETURN: early return on a non-OK
// absl::Status / absl::StatusOr. Debian's Abseil (20220623) predates
// absl/status/status_macros.h, so graphgc defines its own.
//
// Example:
//   GG_RETURN_IF_ERROR(ValidateShape(shape));
//   GG_ASSIGN_OR_RETURN(Output y, ops::MatMul(x, w));
#ifndef GRAPHGC_UTIL_STATUS_MACROS_H_
#define GRAPHGC_UTIL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GG_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status gg_status_ = (expr);      \
    if (!gg_status_.ok()) return gg_status_; \
  } while (0)

#define GG_STATUS_CONCAT_INNER_(a, b) a##b
#define GG_STATUS_CONCAT_(a, b) GG_STATUS_CONCAT_INNER_(a, b)

#define GG_ASSIGN_OR_RETURN(lhs, rexpr)                                     \
  GG_ASSIGN_OR_RETURN_IMPL_(GG_STATUS_CONCAT_(gg_statusor_, __LINE__), lhs, \
                            rexpr)

#define GG_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr)    \
  auto statusor = (rexpr);                                 \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = *std::move(statusor)

#endif  // GRAPHGC_UTIL_STATUS_MACROS_H_
