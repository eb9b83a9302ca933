#include "serialize/tfrecord.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "serialize/crc32c.h"
#include "util/os_error.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

void PutLE32(uint32_t v, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(v >> (8 * i));
}

void PutLE64(uint64_t v, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
}

uint32_t GetLE32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint64_t GetLE64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// RecordSink over a file descriptor; no user-space buffering.
class FileSink : public RecordSink {
 public:
  FileSink(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~FileSink() override {
    if (fd_ >= 0) ::close(fd_);
  }

  absl::Status Append(std::string_view data) override {
    if (fd_ < 0) return Closed();
    const char* p = data.data();
    size_t left = data.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        return OsError(errno, absl::StrCat("write to ", path_));
      }
      if (n == 0) {
        return absl::DataLossError(
            absl::StrCat("write to ", path_, ": wrote 0 bytes"));
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

  absl::Status Flush() override {
    return fd_ < 0 ? Closed() : absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0) return Closed();
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) {
      return OsError(errno, absl::StrCat("close ", path_));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Closed() const {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": file already closed"));
  }

  std::string path_;
  int fd_;
};

}  // namespace

std::string EncodeTFRecord(std::string_view data) {
  std::string out(kTFRecordHeaderSize + data.size() + kTFRecordFooterSize,
                  '\0');
  char* p = out.data();
  PutLE64(data.size(), p);
  PutLE32(crc32c::Mask(crc32c::Value(std::string_view(p, 8))), p + 8);
  if (!data.empty()) data.copy(p + kTFRecordHeaderSize, data.size());
  PutLE32(crc32c::Mask(crc32c::Value(data)),
          p + kTFRecordHeaderSize + data.size());
  return out;
}

absl::StatusOr<std::unique_ptr<RecordSink>> OpenFileSink(
    const std::string& path, FileSinkMode mode) {
  GG_RETURN_IF_ERROR(CheckPath(path, "open for writing"));
  // O_NONBLOCK so that a FIFO without a reader fails (ENXIO) instead of
  // blocking the open; writes then block as usual.
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK;
  flags |= mode == FileSinkMode::kExclusive ? O_EXCL : O_TRUNC;
  int raw;
  do {
    raw = ::open(path.c_str(), flags, 0644);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) {
    return OsError(errno, absl::StrCat("open ", path));
  }
  ScopedFd fd(raw);
  const int fl = ::fcntl(fd.get(), F_GETFL);
  if (fl < 0 || ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) {
    return OsError(errno, absl::StrCat("fcntl ", path));
  }
  return std::make_unique<FileSink>(path, fd.release());
}

// ---- TFRecordWriter ----

TFRecordWriter::TFRecordWriter(std::unique_ptr<RecordSink> sink)
    : sink_(std::move(sink)) {}

TFRecordWriter::~TFRecordWriter() { Close().IgnoreError(); }

absl::StatusOr<std::unique_ptr<TFRecordWriter>> TFRecordWriter::Open(
    const std::string& path) {
  GG_ASSIGN_OR_RETURN(std::unique_ptr<RecordSink> sink, OpenFileSink(path));
  return std::make_unique<TFRecordWriter>(std::move(sink));
}

absl::Status TFRecordWriter::Write(std::string_view data) {
  if (!status_.ok()) return status_;
  if (closed_) {
    return absl::FailedPreconditionError("TFRecordWriter: Write after Close");
  }
  if (data.size() > kMaxTFRecordBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("TFRecordWriter: record of ", data.size(),
                     " bytes is over the limit of ", kMaxTFRecordBytes,
                     " bytes (kMaxTFRecordBytes); nothing written"));
  }
  const std::string record = EncodeTFRecord(data);
  status_ = sink_->Append(record);
  if (status_.ok()) bytes_written_ += record.size();
  return status_;
}

absl::Status TFRecordWriter::Flush() {
  if (!status_.ok() || closed_) return status_;
  status_ = sink_->Flush();
  return status_;
}

absl::Status TFRecordWriter::Close() {
  if (closed_) return status_;
  closed_ = true;
  absl::Status s = sink_->Close();
  if (status_.ok()) status_ = s;
  return status_;
}

// ---- TFRecordReader ----

TFRecordReader::TFRecordReader(std::string path, ScopedFd fd,
                               TFRecordReaderOptions options)
    : path_(std::move(path)), fd_(std::move(fd)), options_(options) {}

TFRecordReader::~TFRecordReader() = default;

absl::StatusOr<std::unique_ptr<TFRecordReader>> TFRecordReader::Open(
    const std::string& path, TFRecordReaderOptions options) {
  GG_ASSIGN_OR_RETURN(ScopedFd fd, OpenRegularFileForReading(path));
  return std::unique_ptr<TFRecordReader>(
      new TFRecordReader(path, std::move(fd), options));
}

absl::StatusOr<size_t> TFRecordReader::ReadAt(uint64_t offset, size_t n,
                                              char* out) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_.get(), out + got, n - got,
                              static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return OsError(errno,
                     absl::StrCat("read ", path_, " at byte offset ", offset));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

absl::Status TFRecordReader::Corrupt(uint64_t record_offset,
                                     const std::string& what) {
  status_ = absl::DataLossError(absl::StrCat(path_, ": record at byte offset ",
                                             record_offset, ": ", what));
  return status_;
}

absl::StatusOr<bool> TFRecordReader::ReadData(uint64_t start, uint64_t length,
                                              std::string* out) {
  std::string scratch;  // the chunk buffer when only checking the CRC
  uint32_t crc = 0;
  for (uint64_t done = 0; done < length;) {
    const size_t n = static_cast<size_t>(
        std::min<uint64_t>(length - done, kTFRecordReadChunkBytes));
    char* dst;
    if (out != nullptr) {
      const size_t old_size = out->size();
      out->resize(old_size + n);
      dst = out->data() + old_size;
    } else {
      scratch.resize(n);
      dst = scratch.data();
    }
    GG_ASSIGN_OR_RETURN(const size_t got, ReadAt(start + done, n, dst));
    if (got < n) return false;  // the file shrank since it was measured
    crc = crc32c::Extend(crc, dst, n);
    done += n;
  }
  char footer[kTFRecordFooterSize];
  GG_ASSIGN_OR_RETURN(const size_t got,
                      ReadAt(start + length, sizeof(footer), footer));
  if (got < sizeof(footer)) return false;
  const uint32_t stored_crc = crc32c::Unmask(GetLE32(footer));
  if (stored_crc != crc) {
    return Corrupt(offset_, absl::StrFormat("data CRC mismatch (stored 0x%08x, "
                                            "computed 0x%08x, length %d)",
                                            stored_crc, crc, length));
  }
  return true;
}

absl::StatusOr<std::optional<std::string>> TFRecordReader::Read() {
  if (!status_.ok()) return status_;
  truncated_tail_ = false;
  char header[kTFRecordHeaderSize];
  GG_ASSIGN_OR_RETURN(size_t got, ReadAt(offset_, sizeof(header), header));
  if (got == 0) return std::nullopt;  // clean end of file
  if (got < sizeof(header)) {
    truncated_tail_ = true;
    return std::nullopt;
  }
  const uint64_t length = GetLE64(header);
  const uint32_t stored_len_crc = crc32c::Unmask(GetLE32(header + 8));
  const uint32_t len_crc = crc32c::Value(std::string_view(header, 8));
  if (stored_len_crc != len_crc) {
    return Corrupt(offset_, absl::StrFormat("length CRC mismatch (stored "
                                            "0x%08x, computed 0x%08x)",
                                            stored_len_crc, len_crc));
  }
  // The length is what a writer wrote, but not necessarily a sane one.
  if (length >= (uint64_t{1} << 63)) {
    return Corrupt(offset_, absl::StrCat("length ", length,
                                         " is not a possible record length "
                                         "(2^63 or more)"));
  }
  if (length > options_.max_record_bytes) {
    return Corrupt(offset_,
                   absl::StrCat("length ", length, " is over the cap of ",
                                options_.max_record_bytes,
                                " bytes (TFRecordReaderOptions::"
                                "max_record_bytes)"));
  }
  // If the file is too short for the record, the record is torn; check
  // before allocating so a torn tail costs no memory.
  struct stat st;
  if (::fstat(fd_.get(), &st) != 0) {
    return OsError(errno, absl::StrCat("stat ", path_));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t body_start = offset_ + kTFRecordHeaderSize;
  const uint64_t available = size > body_start ? size - body_start : 0;
  if (length > available || available - length < kTFRecordFooterSize) {
    truncated_tail_ = true;
    return std::nullopt;
  }
  // A record of more than one chunk is checked before it is kept, so bytes
  // that are not really there (a sparse file) never cost memory.
  std::string data;
  bool whole = false;
  try {
    if (length > kTFRecordReadChunkBytes) {
      GG_ASSIGN_OR_RETURN(whole, ReadData(body_start, length, nullptr));
      if (!whole) {
        truncated_tail_ = true;
        return std::nullopt;
      }
    }
    data.reserve(static_cast<size_t>(length));  // one chunk, or checked above
    GG_ASSIGN_OR_RETURN(whole, ReadData(body_start, length, &data));
  } catch (const std::bad_alloc&) {
    // Not sticky: the record is sound, memory was short; a later Read()
    // retries it.
    return absl::ResourceExhaustedError(
        absl::StrCat(path_, ": record at byte offset ", offset_,
                     ": out of memory for its ", length, " bytes of data"));
  }
  if (!whole) {  // shrank since fstat
    truncated_tail_ = true;
    return std::nullopt;
  }
  offset_ = body_start + length + kTFRecordFooterSize;
  return std::optional<std::string>(std::move(data));
}

}  // namespace graphgc
