#include "util/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

}  // namespace graphgc
