#include "util/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_path.h"
#include "tests/util/fifo.h"

namespace graphgc {
namespace {

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
  const std::string path = TestTempPath("_regular");
  std::ofstream(path) << "data";
  absl::StatusOr<ScopedFd> fd = OpenRegularFileForReading(path);
  ASSERT_TRUE(fd.ok()) << fd.status();
  char buf[4];
  EXPECT_EQ(::read(fd->get(), buf, sizeof(buf)), 4);
}

TEST(OpenRegularFileForReading, MissingFileIsNotFound) {
  EXPECT_EQ(OpenRegularFileForReading(TestTempPath("_missing")).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(OpenRegularFileForReading, RefusesADirectory) {
  const std::string path = TestTempPath("_dir");
  std::filesystem::create_directories(path);
  const absl::Status s = OpenRegularFileForReading(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "is a directory")) << s;
}

TEST(OpenRegularFileForReading, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string path = TestTempPath("_fifo");
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
  const std::string path = TestTempPath("_regular_nul");
  std::ofstream(path) << "data";
  const absl::Status s =
      OpenRegularFileForReading(path + std::string("\0.x", 3)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(ReadRegularFile, ReturnsTheWholeFile) {
  const std::string path = TestTempPath("_read_whole");
  std::ofstream(path) << "hello, file";
  absl::StatusOr<std::string> text = ReadRegularFile(path, 1024);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "hello, file");
}

TEST(ReadRegularFile, RefusesAFileOverTheCapBeforeReadingIt) {
  const std::string path = TestTempPath("_read_big");
  std::ofstream(path) << std::string(100, 'x');
  const absl::Status s = ReadRegularFile(path, 99).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(s.message(), path)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "100 bytes")) << s;
}

TEST(ReadRegularFile, MissingFileIsNotFoundNamingIt) {
  const absl::Status s =
      ReadRegularFile(TestTempPath("_read_missing"), 10).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(s.message(), "read_missing")) << s;
}

TEST(ReadRegularFile, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string path = TestTempPath("_read_fifo");
  ASSERT_TRUE(MakeFifo(path));
  std::optional<absl::Status> s = CallUnlessItBlocks(
      path, [&] { return ReadRegularFile(path, 10).status(); });
  ASSERT_TRUE(s.has_value()) << "ReadRegularFile blocked on a FIFO";
  EXPECT_EQ(s->code(), absl::StatusCode::kInvalidArgument);
}

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// The names in `dir`, sorted.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A fresh, empty directory for the running test.
std::string FreshDir() {
  const std::string dir = TestTempPath();
  std::filesystem::create_directories(dir);
  return dir;
}

absl::Status AnyDirectoryMayBeReplaced(const std::string&) {
  return absl::OkStatus();
}

TEST(WriteNewFile, WritesTheBytes) {
  const std::string dir = FreshDir();
  ASSERT_TRUE(WriteNewFile(dir + "/f", std::string("a\0b", 3)).ok());
  EXPECT_EQ(Contents(dir + "/f"), std::string("a\0b", 3));
}

TEST(WriteNewFile, RefusesAnExistingFileAndLeavesIt) {
  const std::string dir = FreshDir();
  std::ofstream(dir + "/f") << "old";
  const absl::Status s = WriteNewFile(dir + "/f", "new");
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "create " + dir + "/f")) << s;
  EXPECT_EQ(Contents(dir + "/f"), "old");
}

TEST(StagingPath, GivesADifferentSiblingEachCall) {
  const std::string a = StagingPath("/x/model");
  const std::string b = StagingPath("/x/model");
  EXPECT_NE(a, b);
  EXPECT_TRUE(absl::StartsWith(a, "/x/model.graphgc-save-")) << a;
}

TEST(WriteFileAtomically, CreatesTheParentsAndTheFile) {
  const std::string dir = FreshDir();
  ASSERT_TRUE(WriteFileAtomically(dir + "/a/b/f", "bytes").ok());
  EXPECT_EQ(Contents(dir + "/a/b/f"), "bytes");
  EXPECT_EQ(Entries(dir + "/a/b"), std::vector<std::string>{"f"});
}

TEST(WriteFileAtomically, ReplacesAnExistingFile) {
  const std::string dir = FreshDir();
  std::ofstream(dir + "/f") << "old";
  ASSERT_TRUE(WriteFileAtomically(dir + "/f", "new").ok());
  EXPECT_EQ(Contents(dir + "/f"), "new");
  EXPECT_EQ(Entries(dir), std::vector<std::string>{"f"});
}

TEST(WriteFileAtomically, FailingRenameLeavesNoStagedFile) {
  const std::string dir = FreshDir();
  std::filesystem::create_directories(dir + "/f/inside");
  const absl::Status s = WriteFileAtomically(dir + "/f", "new");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "rename ")) << s;
  EXPECT_EQ(Entries(dir), std::vector<std::string>{"f"});
}

TEST(WriteDirectoryAtomically, CreatesTheDirectoryWithTheFilesInOrder) {
  const std::string root = FreshDir();
  bool asked = false;
  ASSERT_TRUE(WriteDirectoryAtomically(root + "/p/d/", "test dir",
                                       {{"b", "2"}, {"a", "1"}},
                                       [&](const std::string&) {
                                         asked = true;
                                         return absl::OkStatus();
                                       })
                  .ok());
  EXPECT_FALSE(asked) << "may_replace is for an existing directory only";
  EXPECT_EQ(Entries(root + "/p/d"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Contents(root + "/p/d/a"), "1");
  EXPECT_EQ(Entries(root + "/p"), std::vector<std::string>{"d"});
}

TEST(WriteDirectoryAtomically, ReplacesAnExistingDirectoryWhole) {
  const std::string root = FreshDir();
  std::filesystem::create_directories(root + "/d");
  std::ofstream(root + "/d/old") << "old";
  std::string asked_about;
  ASSERT_TRUE(WriteDirectoryAtomically(root + "/d/", "test dir", {{"new", "1"}},
                                       [&](const std::string& dir) {
                                         asked_about = dir;
                                         return absl::OkStatus();
                                       })
                  .ok());
  EXPECT_EQ(asked_about, root + "/d");
  EXPECT_EQ(Entries(root + "/d"), std::vector<std::string>{"new"});
  EXPECT_EQ(Entries(root), std::vector<std::string>{"d"});
}

TEST(WriteDirectoryAtomically, KeepsAnExistingDirectoryMayReplaceRefuses) {
  const std::string root = FreshDir();
  std::filesystem::create_directories(root + "/d");
  std::ofstream(root + "/d/old") << "old";
  const absl::Status s = WriteDirectoryAtomically(
      root + "/d", "test dir", {{"new", "1"}}, [](const std::string&) {
        return absl::FailedPreconditionError("not mine");
      });
  EXPECT_EQ(s, absl::FailedPreconditionError("not mine"));
  EXPECT_EQ(Entries(root + "/d"), std::vector<std::string>{"old"});
  EXPECT_EQ(Entries(root), std::vector<std::string>{"d"});
}

TEST(WriteDirectoryAtomically, RefusesTheRootNamingWhat) {
  const absl::Status s = WriteDirectoryAtomically("//", "test dir", {{"f", ""}},
                                                  AnyDirectoryMayBeReplaced);
  EXPECT_EQ(s, absl::InvalidArgumentError("test dir: '/' cannot be replaced"));
}

TEST(WriteDirectoryAtomically, AFailedWriteLeavesNoStagedDirectory) {
  const std::string root = FreshDir();
  const absl::Status s =
      WriteDirectoryAtomically(root + "/d", "test dir", {{"no/such/sub", "1"}},
                               AnyDirectoryMayBeReplaced);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_TRUE(Entries(root).empty());
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
