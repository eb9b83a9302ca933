#include "tests/testing/packed_zeros_events.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "serialize/crc32c.h"
#include "serialize/tfrecord.h"

namespace graphgc {
namespace {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutLE(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i)
    out->push_back(static_cast<char>(v >> (8 * i)));
}

// The bytes of a length-delimited field `number` whose value is `head`
// followed by `tail` more bytes (the zeros, written as a hole).
std::string Wrap(int number, const std::string& head, uint64_t tail) {
  std::string out;
  PutVarint((static_cast<uint64_t>(number) << 3) | 2, &out);
  PutVarint(head.size() + tail, &out);
  return out + head;
}

// The record's data before its `zeros` zero bytes, innermost field first.
std::string Prefix(PackedZerosIn in, uint64_t zeros) {
  if (in == PackedZerosIn::kSummaryTensor) {
    std::string s = Wrap(10, "", zeros);  // TensorProto.int64_val
    s = Wrap(8, s, zeros);                // Summary.Value.tensor
    s = Wrap(1, s, zeros);                // Summary.value
    return Wrap(5, s, zeros);             // Event.summary
  }
  const std::string key_x("\x0a\x01x", 3);  // key: "x"
  const std::string name_and_op(
      "\x0a\x01"
      "a\x12\x05"
      "Const",
      10);
  std::string s = Wrap(3, "", zeros);   // ListValue.i
  s = Wrap(1, s, zeros);                // AttrValue.list
  s = Wrap(2, s, zeros);                // attr entry's value
  s = Wrap(5, key_x + s, zeros);        // NodeDef.attr
  s = Wrap(1, name_and_op + s, zeros);  // GraphDef.node
  return Wrap(4, s, zeros);             // Event.graph_def
}

absl::Status WriteAt(int fd, const std::string& bytes, uint64_t offset,
                     const std::string& path) {
  if (::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) !=
      static_cast<ssize_t>(bytes.size())) {
    return absl::InternalError(
        absl::StrCat("write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WritePackedZerosEventFile(
    const std::string& path, const std::vector<PackedZerosRecord>& records) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("open ", path, ": ", std::strerror(errno)));
  }
  static const std::string kZeros(1 << 20, '\0');
  absl::Status status;
  uint64_t offset = 0;
  for (const PackedZerosRecord& r : records) {
    const std::string prefix = Prefix(r.in, r.zero_bytes);
    const uint64_t length = prefix.size() + r.zero_bytes;
    std::string head;
    PutLE(length, 8, &head);
    PutLE(crc32c::Mask(crc32c::Value(head)), 4, &head);
    uint32_t crc = crc32c::Value(prefix);
    for (uint64_t done = 0; done < r.zero_bytes;) {
      const size_t n = std::min<uint64_t>(kZeros.size(), r.zero_bytes - done);
      crc = crc32c::Extend(crc, kZeros.data(), n);
      done += n;
    }
    std::string footer;
    PutLE(crc32c::Mask(crc), 4, &footer);
    status.Update(WriteAt(fd, head + prefix, offset, path));
    status.Update(
        WriteAt(fd, footer, offset + kTFRecordHeaderSize + length, path));
    offset += kTFRecordHeaderSize + length + kTFRecordFooterSize;
  }
  ::close(fd);
  return status;
}

}  // namespace graphgc
