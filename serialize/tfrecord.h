// serialize/tfrecord.h
//
// TFRecord framing, the container of TensorBoard events files. Each record:
//
//   uint64 length            little-endian
//   uint32 masked_crc(length bytes)
//   byte   data[length]
//   uint32 masked_crc(data)
//
// (CRC-32C, masked: see serialize/crc32c.h). TFRecordWriter appends whole
// records to a RecordSink; TFRecordReader reads them back from a file,
// checking both CRCs of every record.
//
// Invariants: the writer hands each record to its sink in one Append, and
// the file sink passes each Append straight to write(2), so a process killed
// between records leaves a file of whole records, and one killed inside a
// write leaves at most one torn record at the end. The reader treats such a
// torn tail as the end of a file still being written, not as corruption.
//
// Hostile files: no record holds more than kMaxTFRecordBytes of data (1 GiB)
// unless a reader is told otherwise (TFRecordReaderOptions). The reader
// opens only regular files, without blocking (util/file.h), checks a
// record's claimed length against its cap and against the file's size
// before it reads, and reads in chunks of at most kTFRecordReadChunkBytes:
// a record longer than one chunk has its data CRC checked chunk by chunk
// before the reader allocates room for it. A crafted header (a valid length
// CRC over a huge length, in a sparse file of that size) therefore costs
// reading time, never memory.
//
// Thread safety: none of these classes is thread-safe; callers serialise
// (EventFileWriter holds a mutex around its TFRecordWriter).
//
// Example:
//   GG_ASSIGN_OR_RETURN(auto writer, TFRecordWriter::Open("/tmp/x.tfrecord"));
//   GG_RETURN_IF_ERROR(writer->Write("hello"));
//   GG_RETURN_IF_ERROR(writer->Close());
//   GG_ASSIGN_OR_RETURN(auto reader, TFRecordReader::Open("/tmp/x.tfrecord"));
//   while (true) {
//     GG_ASSIGN_OR_RETURN(std::optional<std::string> rec, reader->Read());
//     if (!rec) break;  // end of data; reader->truncated_tail() says if torn
//   }
#ifndef GRAPHGC_SERIALIZE_TFRECORD_H_
#define GRAPHGC_SERIALIZE_TFRECORD_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/file.h"

namespace graphgc {

// Bytes before the data (length + its CRC) and after it (data CRC).
inline constexpr size_t kTFRecordHeaderSize = 12;
inline constexpr size_t kTFRecordFooterSize = 4;

// The most data one record may hold: TFRecordWriter refuses more, and a
// TFRecordReader with default options reports a longer record as corrupt.
inline constexpr uint64_t kMaxTFRecordBytes = uint64_t{1} << 30;  // 1 GiB

// A TFRecordReader reads a record's data this many bytes at a time.
inline constexpr size_t kTFRecordReadChunkBytes = size_t{1} << 20;  // 1 MiB

// Returns the full framed bytes of one record holding `data`.
std::string EncodeTFRecord(std::string_view data);

// RecordSink: where a TFRecordWriter's bytes go. Implementations report
// every failure (short write, ENOSPC, EFBIG, ...) as a status naming the
// destination; they never abort.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Appends all of `data`, or returns an error.
  virtual absl::Status Append(std::string_view data) = 0;
  // Hands buffered bytes to the operating system (no fsync).
  virtual absl::Status Flush() = 0;
  // Flushes and releases the destination. Further calls are errors.
  virtual absl::Status Close() = 0;
};

enum class FileSinkMode {
  kTruncate,   // create, or truncate an existing file
  kExclusive,  // create; AlreadyExists if the path exists
};

// A RecordSink over the file `path`. It keeps no user-space buffer: each
// Append is one write(2) loop, so Flush() has nothing to do. An empty path
// or one holding a NUL is InvalidArgument. The open does not block: a FIFO
// that nobody reads is refused (ENXIO) rather than waited for.
absl::StatusOr<std::unique_ptr<RecordSink>> OpenFileSink(
    const std::string& path, FileSinkMode mode = FileSinkMode::kTruncate);

// TFRecordWriter: frames records onto a sink. The first error is sticky:
// once a write fails, every later call returns that status and writes
// nothing, so a half-broken file never gets records after a gap. Data over
// kMaxTFRecordBytes is InvalidArgument; it writes nothing and is not sticky.
class TFRecordWriter {
 public:
  explicit TFRecordWriter(std::unique_ptr<RecordSink> sink);
  ~TFRecordWriter();  // Close()s, dropping any error.
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;

  // Creates (or truncates) `path` and returns a writer over it.
  static absl::StatusOr<std::unique_ptr<TFRecordWriter>> Open(
      const std::string& path);

  // Appends one record (header, data, footer in a single sink Append).
  absl::Status Write(std::string_view data);
  absl::Status Flush();
  // Closes the sink. Calling it again returns the same result.
  absl::Status Close();

  // OK, or the first error seen.
  const absl::Status& status() const { return status_; }
  // Bytes of whole records handed to the sink so far.
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  std::unique_ptr<RecordSink> sink_;
  absl::Status status_;
  bool closed_ = false;
  uint64_t bytes_written_ = 0;
};

struct TFRecordReaderOptions {
  // Longest record data accepted; a header claiming more is DataLoss. Raise
  // it to read files of writers without graphgc's cap (up to 2^63 - 1),
  // lower it to bound what an untrusted file can make a reader read.
  uint64_t max_record_bytes = kMaxTFRecordBytes;
};

// TFRecordReader: reads records of one file in order.
//
// Open() accepts only a regular file (util/file.h: OpenRegularFileForReading;
// a directory, FIFO, socket or device is InvalidArgument, without blocking).
//
// Read() returns the next record's data, or std::nullopt at the end of
// data. End of data is either the clean end of the file or a torn last
// record (the file ends inside a record: a writer is still at work or was
// killed); truncated_tail() tells the two apart. Calling Read() again after
// a torn tail retries from the same offset, so a reader can follow a file
// that is still growing. A record whose length CRC or data CRC does not
// match, or whose length no writer could produce (2^63 or more, or over
// options.max_record_bytes, even if the file is too short to hold it),
// returns DataLoss "<path>: record at byte offset N: ..." and every later
// call returns the same status.
class TFRecordReader {
 public:
  ~TFRecordReader();
  TFRecordReader(const TFRecordReader&) = delete;
  TFRecordReader& operator=(const TFRecordReader&) = delete;

  static absl::StatusOr<std::unique_ptr<TFRecordReader>> Open(
      const std::string& path, TFRecordReaderOptions options = {});

  absl::StatusOr<std::optional<std::string>> Read();

  // True if the last Read() stopped at a torn record.
  bool truncated_tail() const { return truncated_tail_; }
  // Byte offset of the next record: the end of the last whole record read.
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }

 private:
  TFRecordReader(std::string path, ScopedFd fd, TFRecordReaderOptions options);
  // Reads exactly n bytes at `offset` into `out`. Returns the count read
  // (less than n only at end of file).
  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n, char* out);
  // Reads the `length` data bytes at `start` and the data CRC after them,
  // kTFRecordReadChunkBytes at a time, appending the data to `out` (grown
  // chunk by chunk as bytes arrive) or, if `out` is null, only checking the
  // CRC. Returns false if the file ends first (a torn tail), DataLoss for
  // the record at offset_ if the CRC does not match.
  absl::StatusOr<bool> ReadData(uint64_t start, uint64_t length,
                                std::string* out);
  absl::Status Corrupt(uint64_t record_offset, const std::string& what);

  std::string path_;
  ScopedFd fd_;
  TFRecordReaderOptions options_;
  uint64_t offset_ = 0;
  bool truncated_tail_ = false;
  absl::Status status_;
};

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_TFRECORD_H_
