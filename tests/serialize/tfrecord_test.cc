#include "serialize/tfrecord.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "serialize/crc32c.h"

namespace graphgc {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Reads records until end of data or error.
struct ReadResult {
  std::vector<std::string> records;
  absl::Status status;
  bool truncated_tail = false;
};

ReadResult ReadRecords(const std::string& path) {
  ReadResult result;
  auto reader = TFRecordReader::Open(path);
  if (!reader.ok()) {
    result.status = reader.status();
    return result;
  }
  while (true) {
    auto rec = (*reader)->Read();
    if (!rec.ok()) {
      result.status = rec.status();
      break;
    }
    if (!rec->has_value()) break;
    result.records.push_back(**rec);
  }
  result.truncated_tail = (*reader)->truncated_tail();
  return result;
}

const std::vector<std::string> kRecords = {"first", "", std::string(1000, 'x'),
                                           "last record"};

std::string WriteSample(const std::string& name) {
  const std::string path = TempPath(name);
  auto writer = TFRecordWriter::Open(path);
  EXPECT_TRUE(writer.ok()) << writer.status();
  for (const std::string& r : kRecords) EXPECT_TRUE((*writer)->Write(r).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  return path;
}

// Byte offset of record i in the sample file.
uint64_t OffsetOf(size_t i) {
  uint64_t off = 0;
  for (size_t k = 0; k < i; ++k) {
    off += kTFRecordHeaderSize + kRecords[k].size() + kTFRecordFooterSize;
  }
  return off;
}

TEST(TFRecord, EncodesTheDocumentedLayout) {
  const std::string rec = EncodeTFRecord("abc");
  ASSERT_EQ(rec.size(), 12u + 3u + 4u);
  EXPECT_EQ(rec.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  const uint32_t len_crc = crc32c::Mask(crc32c::Value(rec.substr(0, 8)));
  EXPECT_EQ(static_cast<unsigned char>(rec[8]), len_crc & 0xFF);
  EXPECT_EQ(static_cast<unsigned char>(rec[11]), len_crc >> 24);
  EXPECT_EQ(rec.substr(12, 3), "abc");
  const uint32_t data_crc = crc32c::Mask(crc32c::Value("abc"));
  EXPECT_EQ(static_cast<unsigned char>(rec[15]), data_crc & 0xFF);
  EXPECT_EQ(static_cast<unsigned char>(rec[18]), data_crc >> 24);
}

TEST(TFRecord, WriteThenReadRoundTrips) {
  const std::string path = WriteSample("roundtrip.tfrecord");
  ReadResult r = ReadRecords(path);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.records, kRecords);
  EXPECT_FALSE(r.truncated_tail);
}

TEST(TFRecord, WriterCountsBytesWritten) {
  const std::string path = TempPath("count.tfrecord");
  auto writer = TFRecordWriter::Open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Write("hello").ok());
  EXPECT_EQ((*writer)->bytes_written(), 12u + 5u + 4u);
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(ReadFile(path).size(), 21u);
}

TEST(TFRecord, EmptyFileHasNoRecordsAndNoTornTail) {
  const std::string path = TempPath("empty.tfrecord");
  WriteFile(path, "");
  ReadResult r = ReadRecords(path);
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.records.empty());
  EXPECT_FALSE(r.truncated_tail);
}

TEST(TFRecord, CorruptLengthCrcIsReportedWithItsOffset) {
  const std::string path = WriteSample("badlen.tfrecord");
  std::string bytes = ReadFile(path);
  const uint64_t off = OffsetOf(2);
  bytes[off + 9] ^= 0x01;  // inside the stored length CRC of record 2
  WriteFile(path, bytes);
  ReadResult r = ReadRecords(path);
  EXPECT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(
      r.status.message(),
      absl::StrCat("record at byte offset ", off, ": length CRC mismatch")))
      << r.status;
}

TEST(TFRecord, CorruptLengthIsReportedAsLengthCrcMismatch) {
  const std::string path = WriteSample("badlen2.tfrecord");
  std::string bytes = ReadFile(path);
  bytes[OffsetOf(1) + 3] = 0x7f;  // a huge length, CRC no longer matches
  WriteFile(path, bytes);
  ReadResult r = ReadRecords(path);
  EXPECT_EQ(r.records.size(), 1u);
  EXPECT_TRUE(absl::StrContains(
      r.status.message(),
      absl::StrCat("record at byte offset ", OffsetOf(1), ": length CRC")))
      << r.status;
}

TEST(TFRecord, CorruptDataIsReportedWithItsOffset) {
  const std::string path = WriteSample("baddata.tfrecord");
  std::string bytes = ReadFile(path);
  const uint64_t off = OffsetOf(2);
  bytes[off + kTFRecordHeaderSize + 500] ^= 0x20;
  WriteFile(path, bytes);
  ReadResult r = ReadRecords(path);
  EXPECT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(
      r.status.message(),
      absl::StrCat("record at byte offset ", off, ": data CRC mismatch")))
      << r.status;
}

TEST(TFRecord, CorruptionIsStickyAcrossReads) {
  const std::string path = WriteSample("sticky.tfrecord");
  std::string bytes = ReadFile(path);
  bytes[OffsetOf(0) + kTFRecordHeaderSize] ^= 0x01;
  WriteFile(path, bytes);
  auto reader = TFRecordReader::Open(path);
  ASSERT_TRUE(reader.ok());
  absl::Status first = (*reader)->Read().status();
  absl::Status second = (*reader)->Read().status();
  EXPECT_EQ(first.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(first, second);
}

TEST(TFRecord, TornLastRecordIsEndOfData) {
  const std::string path = WriteSample("torn.tfrecord");
  std::string bytes = ReadFile(path);
  bytes.resize(bytes.size() - 3);  // cut inside the last data CRC
  WriteFile(path, bytes);
  ReadResult r = ReadRecords(path);
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.records.size(), kRecords.size() - 1);
  EXPECT_TRUE(r.truncated_tail);
}

TEST(TFRecord, EveryPrefixReadsItsWholeRecords) {
  const std::string full = ReadFile(WriteSample("prefix_src.tfrecord"));
  const std::string path = TempPath("prefix.tfrecord");
  for (size_t cut = 0; cut <= full.size(); ++cut) {
    WriteFile(path, full.substr(0, cut));
    size_t whole = 0;
    while (whole < kRecords.size() && OffsetOf(whole + 1) <= cut) ++whole;
    ReadResult r = ReadRecords(path);
    ASSERT_TRUE(r.status.ok()) << "cut " << cut << ": " << r.status;
    ASSERT_EQ(r.records.size(), whole) << "cut " << cut;
    for (size_t i = 0; i < whole; ++i) EXPECT_EQ(r.records[i], kRecords[i]);
    EXPECT_EQ(r.truncated_tail, cut != OffsetOf(whole)) << "cut " << cut;
  }
}

TEST(TFRecord, ReadAfterTornTailPicksUpTheRestOnceWritten) {
  const std::string full = ReadFile(WriteSample("grow_src.tfrecord"));
  const std::string path = TempPath("grow.tfrecord");
  const size_t cut = OffsetOf(1) + 5;
  WriteFile(path, full.substr(0, cut));
  auto reader = TFRecordReader::Open(path);
  ASSERT_TRUE(reader.ok());
  auto rec = (*reader)->Read();
  ASSERT_TRUE(rec.ok() && rec->has_value());
  rec = (*reader)->Read();
  ASSERT_TRUE(rec.ok());
  EXPECT_FALSE(rec->has_value());
  EXPECT_TRUE((*reader)->truncated_tail());
  EXPECT_EQ((*reader)->offset(), OffsetOf(1));
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << full.substr(cut);
  }
  rec = (*reader)->Read();
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ(**rec, kRecords[1]);
  EXPECT_FALSE((*reader)->truncated_tail());
}

TEST(TFRecord, OpeningAMissingFileIsNotFound) {
  auto reader = TFRecordReader::Open(TempPath("does/not/exist"));
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
}

TEST(TFRecord, WritingToAFullDeviceIsAnErrorThatSticks) {
  auto writer = TFRecordWriter::Open("/dev/full");
  ASSERT_TRUE(writer.ok()) << writer.status();
  absl::Status s = (*writer)->Write("data");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "/dev/full")) << s;
  EXPECT_EQ((*writer)->Write("more"), s);
  EXPECT_EQ((*writer)->Close(), s);
}

TEST(TFRecord, WriteAfterCloseFails) {
  auto writer = TFRecordWriter::Open(TempPath("closed.tfrecord"));
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ((*writer)->Write("x").code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace graphgc
