#include "util/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/util/fifo.h"

namespace graphgc {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/file_test_", name);
}

TEST(FileError, MapsTheErrnoAndNamesWhat) {
  const absl::Status s =
      FileError(std::make_error_code(std::errc::no_such_file_or_directory),
                "stat /nowhere");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StartsWith(s.message(), "stat /nowhere: ")) << s;
}

TEST(CheckPath, AcceptsAnOrdinaryPath) {
  EXPECT_TRUE(CheckPath("logs/0/train", "log_dir").ok());
}

TEST(CheckPath, RefusesAnEmptyPathNamingWhat) {
  const absl::Status s = CheckPath("", "TensorBoard log_dir");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "TensorBoard log_dir")) << s;
}

TEST(CheckPath, RefusesAPathWithANulByteNamingWhereItIs) {
  const absl::Status s = CheckPath(std::string("logs\0/evil", 10), "log_dir");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "NUL byte at index 4")) << s;
}

TEST(OpenRegularFileForReading, OpensARegularFile) {
  const std::string path = TempPath("regular");
  std::ofstream(path) << "data";
  absl::StatusOr<ScopedFd> fd = OpenRegularFileForReading(path);
  ASSERT_TRUE(fd.ok()) << fd.status();
  char buf[4];
  EXPECT_EQ(::read(fd->get(), buf, sizeof(buf)), 4);
}

TEST(OpenRegularFileForReading, MissingFileIsNotFound) {
  EXPECT_EQ(OpenRegularFileForReading(TempPath("missing")).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(OpenRegularFileForReading, RefusesADirectory) {
  const std::string path = TempPath("dir");
  std::filesystem::create_directories(path);
  const absl::Status s = OpenRegularFileForReading(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "is a directory")) << s;
}

TEST(OpenRegularFileForReading, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string path = TempPath("fifo");
  ASSERT_TRUE(MakeFifo(path));
  std::optional<absl::Status> s = CallUnlessItBlocks(
      path, [&] { return OpenRegularFileForReading(path).status(); });
  ASSERT_TRUE(s.has_value()) << "open blocked on a FIFO";
  EXPECT_EQ(s->code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s->message(), "not a regular file (a FIFO)"))
      << *s;
}

TEST(OpenRegularFileForReading, RefusesACharacterDevice) {
  const absl::Status s = OpenRegularFileForReading("/dev/null").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "a character device")) << s;
}

TEST(OpenRegularFileForReading, RefusesAPathWithANulByte) {
  const std::string path = TempPath("regular_nul");
  std::ofstream(path) << "data";
  const absl::Status s =
      OpenRegularFileForReading(path + std::string("\0.x", 3)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(ReadRegularFile, ReturnsTheWholeFile) {
  const std::string path = TempPath("read_whole");
  std::ofstream(path) << "hello, file";
  absl::StatusOr<std::string> text = ReadRegularFile(path, 1024);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "hello, file");
}

TEST(ReadRegularFile, RefusesAFileOverTheCapBeforeReadingIt) {
  const std::string path = TempPath("read_big");
  std::ofstream(path) << std::string(100, 'x');
  const absl::Status s = ReadRegularFile(path, 99).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(s.message(), path)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "100 bytes")) << s;
}

TEST(ReadRegularFile, MissingFileIsNotFoundNamingIt) {
  const absl::Status s = ReadRegularFile(TempPath("read_missing"), 10).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(s.message(), "read_missing")) << s;
}

TEST(ReadRegularFile, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string path = TempPath("read_fifo");
  ASSERT_TRUE(MakeFifo(path));
  std::optional<absl::Status> s = CallUnlessItBlocks(
      path, [&] { return ReadRegularFile(path, 10).status(); });
  ASSERT_TRUE(s.has_value()) << "ReadRegularFile blocked on a FIFO";
  EXPECT_EQ(s->code(), absl::StatusCode::kInvalidArgument);
}

TEST(ScopedFd, ClosesItsDescriptorAndMovesOwnership) {
  const int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(raw, 0);
  {
    ScopedFd a(raw);
    ScopedFd b(std::move(a));
    EXPECT_EQ(a.get(), -1);
    EXPECT_EQ(b.get(), raw);
  }
  EXPECT_EQ(::fcntl(raw, F_GETFD), -1);  // closed
}

}  // namespace
}  // namespace graphgc
