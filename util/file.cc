#include "util/file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/os_error.h"

namespace graphgc {
namespace {

// What a file of this mode is, for messages.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "of an unknown kind";
}

absl::Status Errno(const std::string& what) { return OsError(errno, what); }

// Suffix counter of staged files and directories (unique within a process).
std::atomic<int64_t> next_staged{0};

// The parent directory of `path`, created with its own parents if missing
// ("" for a relative path of one component).
absl::StatusOr<std::filesystem::path> CreateParent(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) return FileError(ec, absl::StrCat("create ", parent.string()));
  }
  return parent;
}

// Syncs `parent` (CreateParent's result), where an entry was renamed.
void SyncParent(const std::filesystem::path& parent) {
  SyncDir(parent.empty() ? std::string(".") : parent.string());
}

// Replaces `dir` by `staged` (a complete directory beside it), as
// WriteDirectoryAtomically says.
absl::Status Replace(
    const std::string& staged, const std::string& dir,
    absl::FunctionRef<absl::Status(const std::string& dir)> may_replace) {
  if (::rename(staged.c_str(), dir.c_str()) == 0) return absl::OkStatus();
  if (errno != EEXIST && errno != ENOTEMPTY) {
    return Errno(absl::StrCat("rename ", staged, " to ", dir));
  }
  if (absl::Status s = may_replace(dir); !s.ok()) return s;
  std::error_code ec;
  if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, dir.c_str(),
                  RENAME_EXCHANGE) == 0) {
    std::filesystem::remove_all(staged, ec);  // the old directory now
    return absl::OkStatus();
  }
  if (errno != EINVAL && errno != ENOSYS) {
    return Errno(absl::StrCat("exchange ", staged, " and ", dir));
  }
  const std::string old = staged + ".old";
  if (::rename(dir.c_str(), old.c_str()) != 0) {
    return Errno(absl::StrCat("rename ", dir, " to ", old));
  }
  if (::rename(staged.c_str(), dir.c_str()) != 0) {
    absl::Status s = Errno(absl::StrCat("rename ", staged, " to ", dir));
    ::rename(old.c_str(), dir.c_str());
    return s;
  }
  std::filesystem::remove_all(old, ec);
  return absl::OkStatus();
}

}  // namespace

absl::Status FileError(const std::error_code& ec, std::string_view what) {
  // std::error_code::value() is the errno number, not a fallible result.
  return OsError(ec.value(), what);
}

absl::Status CheckPath(std::string_view path, std::string_view what) {
  // Debian's Abseil has its own string_view.
  const absl::string_view w(what.data(), what.size());
  if (path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(w, ": empty path"));
  }
  const size_t nul = path.find('\0');
  if (nul != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        w, ": path '", absl::string_view(path.data(), nul),
        "' holds a NUL byte at index ", nul, " (of ", path.size(), " bytes)"));
  }
  return absl::OkStatus();
}

ScopedFd::~ScopedFd() {
  if (fd_ >= 0) ::close(fd_);
}

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

int ScopedFd::release() { return std::exchange(fd_, -1); }

absl::StatusOr<ScopedFd> OpenRegularFileForReading(const std::string& path) {
  absl::Status s = CheckPath(path, "open for reading");
  if (!s.ok()) return s;
  int raw;
  do {
    raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) return OsError(errno, absl::StrCat("open ", path));
  ScopedFd fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return OsError(errno, absl::StrCat("stat ", path));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("open ", path, ": is a directory"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "open ", path, ": not a regular file (", KindOf(st.st_mode), ")"));
  }
  return fd;
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            int64_t max_bytes) {
  absl::StatusOr<ScopedFd> fd = OpenRegularFileForReading(path);
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) {
    return OsError(errno, absl::StrCat("stat ", path));
  }
  auto too_big = [&](int64_t size) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": ", size, " bytes, more than the ", max_bytes, " allowed"));
  };
  if (st.st_size > max_bytes) return too_big(st.st_size);
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  // One byte past the stat'd size: a file that grew is noticed.
  char probe;
  while (true) {
    char* dst = done < out.size() ? out.data() + done : &probe;
    const size_t want = done < out.size() ? out.size() - done : 1;
    const ssize_t n = ::read(fd->get(), dst, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return OsError(errno, absl::StrCat("read ", path));
    if (n == 0) break;
    if (done >= out.size()) {
      // Grew since the stat: read on, up to the cap, then refuse.
      out.push_back(probe);
      if (static_cast<int64_t>(out.size()) > max_bytes) {
        return too_big(static_cast<int64_t>(out.size()));
      }
    }
    done += static_cast<size_t>(n);
  }
  out.resize(done);  // shrank since the stat
  return out;
}

absl::Status WriteNewFile(const std::string& path, std::string_view bytes) {
  int raw;
  do {
    raw = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) return Errno(absl::StrCat("create ", path));
  ScopedFd fd(raw);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(absl::StrCat("write ", path));
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return Errno(absl::StrCat("fsync ", path));
  if (::close(fd.release()) != 0) return Errno(absl::StrCat("close ", path));
  return absl::OkStatus();
}

void SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string StagingPath(const std::string& path) {
  return absl::StrCat(path, ".graphgc-save-", ::getpid(), "-", next_staged++);
}

absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view bytes) {
  absl::StatusOr<std::filesystem::path> parent = CreateParent(path);
  if (!parent.ok()) return parent.status();
  const std::string staged = StagingPath(path);
  absl::Status s = WriteNewFile(staged, bytes);
  if (s.ok() && ::rename(staged.c_str(), path.c_str()) != 0) {
    s = Errno(absl::StrCat("rename ", staged, " to ", path));
  }
  if (!s.ok()) {
    ::unlink(staged.c_str());
    return s;
  }
  SyncParent(*parent);
  return absl::OkStatus();
}

absl::Status WriteDirectoryAtomically(
    const std::string& dir, std::string_view what,
    const std::vector<std::pair<std::string, std::string>>& files,
    absl::FunctionRef<absl::Status(const std::string& dir)> may_replace) {
  std::string target = dir;
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  if (target == "/") {
    return absl::InvalidArgumentError(
        absl::StrCat(absl::string_view(what.data(), what.size()),
                     ": '/' cannot be replaced"));
  }
  absl::StatusOr<std::filesystem::path> parent = CreateParent(target);
  if (!parent.ok()) return parent.status();
  const std::string staged = StagingPath(target);
  std::error_code ec;
  if (!std::filesystem::create_directory(staged, ec)) {
    return ec ? FileError(ec, absl::StrCat("create ", staged))
              : absl::AlreadyExistsError(absl::StrCat(staged, " exists"));
  }
  absl::Status s;
  for (const auto& [name, bytes] : files) {
    s = WriteNewFile(absl::StrCat(staged, "/", name), bytes);
    if (!s.ok()) break;
  }
  if (s.ok()) {
    SyncDir(staged);
    s = Replace(staged, target, may_replace);
  }
  if (!s.ok()) {
    std::filesystem::remove_all(staged, ec);
    return s;
  }
  SyncParent(*parent);
  return absl::OkStatus();
}

}  // namespace graphgc
