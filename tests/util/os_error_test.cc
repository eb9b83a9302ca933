#include "util/os_error.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace graphgc {
namespace {

TEST(OsError, CodeAndMessageAreAbslsForTheErrno) {
  const absl::Status s = OsError(ENOTDIR, "mkdir /a/b");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), std::string("mkdir /a/b: ") + std::strerror(ENOTDIR));
}

TEST(OsError, KeepsTheErrno) {
  EXPECT_EQ(OsErrno(OsError(ENOENT, "open x")), ENOENT);
  EXPECT_EQ(OsErrno(OsError(EACCES, "open x")), EACCES);
}

TEST(OsErrno, IsZeroForAStatusThatIsNotASystemError) {
  EXPECT_EQ(OsErrno(absl::OkStatus()), 0);
  EXPECT_EQ(OsErrno(absl::FailedPreconditionError("not compiled")), 0);
  EXPECT_EQ(OsErrno(absl::ErrnoToStatus(ENOENT, "open x")), 0);
}

TEST(OsErrno, IsZeroForAMalformedPayload) {
  absl::Status s = absl::NotFoundError("x");
  s.SetPayload("type.googleapis.com/graphgc.Errno", absl::Cord("two"));
  EXPECT_EQ(OsErrno(s), 0);
  s.SetPayload("type.googleapis.com/graphgc.Errno", absl::Cord("-2"));
  EXPECT_EQ(OsErrno(s), 0);
}

TEST(Annotate, PrefixesTheMessageAndKeepsCodeAndErrno) {
  const absl::Status s = Annotate(OsError(EEXIST, "mkdir d"), "CSVLogger");
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(),
            std::string("CSVLogger: mkdir d: ") + std::strerror(EEXIST));
  EXPECT_EQ(OsErrno(s), EEXIST);
}

TEST(Annotate, LeavesOkAlone) {
  EXPECT_TRUE(Annotate(absl::OkStatus(), "anything").ok());
}

}  // namespace
}  // namespace graphgc
