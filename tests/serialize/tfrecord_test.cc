#include "serialize/tfrecord.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "serialize/crc32c.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/temp_path.h"
#include "tests/util/fifo.h"

namespace graphgc {
namespace {

// While g_track_new is on, g_largest_new records the largest single
// operator new request (see the replacement at the end of this file), so a
// test can say how much a call allocated at once.
std::atomic<bool> g_track_new{false};
std::atomic<size_t> g_largest_new{0};

// The largest allocation `f` made at once.
template <typename F>
size_t LargestAllocationOf(F f) {
  g_largest_new = 0;
  g_track_new = true;
  f();
  g_track_new = false;
  return g_largest_new;
}

// While not 0, operator new throws std::bad_alloc for requests over it.
std::atomic<size_t> g_fail_new_above{0};

// What `f` returns when every allocation over `limit` bytes fails.
template <typename F>
auto WithAllocationsOverFailing(size_t limit, F f) {
  g_fail_new_above = limit;
  auto result = f();
  g_fail_new_above = 0;
  return result;
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

// Writes `records` to `path` with a TFRecordWriter.
void WriteRecords(const std::string& path,
                  const std::vector<std::string>& records) {
  auto writer = TFRecordWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (const std::string& r : records) EXPECT_TRUE((*writer)->Write(r).ok());
  EXPECT_TRUE((*writer)->Close().ok());
}

std::string WriteSample(const std::string& name) {
  const std::string path = TestTempPath("_" + name);
  WriteRecords(path, kRecords);
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
  const std::string path = TestTempPath("_count.tfrecord");
  auto writer = TFRecordWriter::Open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Write("hello").ok());
  EXPECT_EQ((*writer)->bytes_written(), 12u + 5u + 4u);
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(ReadFileBytes(path).size(), 21u);
}

TEST(TFRecord, EmptyFileHasNoRecordsAndNoTornTail) {
  const std::string path = TestTempPath("_empty.tfrecord");
  WriteFileBytes(path, "");
  ReadResult r = ReadRecords(path);
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.records.empty());
  EXPECT_FALSE(r.truncated_tail);
}

TEST(TFRecord, CorruptLengthCrcIsReportedWithItsOffset) {
  const std::string path = WriteSample("badlen.tfrecord");
  std::string bytes = ReadFileBytes(path);
  const uint64_t off = OffsetOf(2);
  bytes[off + 9] ^= 0x01;  // inside the stored length CRC of record 2
  WriteFileBytes(path, bytes);
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
  std::string bytes = ReadFileBytes(path);
  bytes[OffsetOf(1) + 3] = 0x7f;  // a huge length, CRC no longer matches
  WriteFileBytes(path, bytes);
  ReadResult r = ReadRecords(path);
  EXPECT_EQ(r.records.size(), 1u);
  EXPECT_TRUE(absl::StrContains(
      r.status.message(),
      absl::StrCat("record at byte offset ", OffsetOf(1), ": length CRC")))
      << r.status;
}

TEST(TFRecord, CorruptDataIsReportedWithItsOffset) {
  const std::string path = WriteSample("baddata.tfrecord");
  std::string bytes = ReadFileBytes(path);
  const uint64_t off = OffsetOf(2);
  bytes[off + kTFRecordHeaderSize + 500] ^= 0x20;
  WriteFileBytes(path, bytes);
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
  std::string bytes = ReadFileBytes(path);
  bytes[OffsetOf(0) + kTFRecordHeaderSize] ^= 0x01;
  WriteFileBytes(path, bytes);
  auto reader = TFRecordReader::Open(path);
  ASSERT_TRUE(reader.ok());
  absl::Status first = (*reader)->Read().status();
  absl::Status second = (*reader)->Read().status();
  EXPECT_EQ(first.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(first, second);
}

TEST(TFRecord, TornLastRecordIsEndOfData) {
  const std::string path = WriteSample("torn.tfrecord");
  std::string bytes = ReadFileBytes(path);
  bytes.resize(bytes.size() - 3);  // cut inside the last data CRC
  WriteFileBytes(path, bytes);
  ReadResult r = ReadRecords(path);
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.records.size(), kRecords.size() - 1);
  EXPECT_TRUE(r.truncated_tail);
}

TEST(TFRecord, EveryPrefixReadsItsWholeRecords) {
  const std::string full = ReadFileBytes(WriteSample("prefix_src.tfrecord"));
  const std::string path = TestTempPath("_prefix.tfrecord");
  for (size_t cut = 0; cut <= full.size(); ++cut) {
    WriteFileBytes(path, full.substr(0, cut));
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
  const std::string full = ReadFileBytes(WriteSample("grow_src.tfrecord"));
  const std::string path = TestTempPath("_grow.tfrecord");
  const size_t cut = OffsetOf(1) + 5;
  WriteFileBytes(path, full.substr(0, cut));
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
  auto reader = TFRecordReader::Open(TestTempPath("_does/not/exist"));
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
  auto writer = TFRecordWriter::Open(TestTempPath("_closed.tfrecord"));
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ((*writer)->Write("x").code(),
            absl::StatusCode::kFailedPrecondition);
}

// A record header (length and its valid CRC) claiming `length` bytes.
std::string HeaderClaiming(uint64_t length) {
  std::string h(kTFRecordHeaderSize, '\0');
  for (int i = 0; i < 8; ++i) h[i] = static_cast<char>(length >> (8 * i));
  const uint32_t crc = crc32c::Mask(crc32c::Value(h.substr(0, 8)));
  for (int i = 0; i < 4; ++i) h[8 + i] = static_cast<char>(crc >> (8 * i));
  return h;
}

// Writes `header` and makes the file `size` bytes long without writing the
// rest: a sparse file, which takes no disk.
void WriteSparseFile(const std::string& path, const std::string& header,
                     uint64_t size) {
  WriteFileBytes(path, header);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size)), 0) << path;
}

TEST(TFRecord, ReadRefusesASparseRecordLongerThanTheCap) {
  const std::string path = TestTempPath("_sparse64g.tfrecord");
  const uint64_t claimed = uint64_t{64} << 30;  // 64 GiB
  WriteSparseFile(path, HeaderClaiming(claimed),
                  kTFRecordHeaderSize + claimed + kTFRecordFooterSize);
  ReadResult r = ReadRecords(path);
  std::filesystem::remove(path);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss) << r.status;
  EXPECT_TRUE(absl::StrContains(r.status.message(), path)) << r.status;
  EXPECT_TRUE(absl::StrContains(r.status.message(), "byte offset 0"))
      << r.status;
  EXPECT_TRUE(absl::StrContains(r.status.message(), "over the cap"))
      << r.status;
  EXPECT_FALSE(r.truncated_tail);
}

TEST(TFRecord, ReadRefusesALengthOf2To63EvenWithTheCapRaisedToTheMaximum) {
  const std::string path = TestTempPath("_length2to63.tfrecord");
  WriteFileBytes(path, HeaderClaiming(uint64_t{1} << 63));
  auto reader = TFRecordReader::Open(path, {.max_record_bytes = UINT64_MAX});
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto rec = (*reader)->Read();
  EXPECT_EQ(rec.status().code(), absl::StatusCode::kDataLoss) << rec.status();
  EXPECT_TRUE(
      absl::StrContains(rec.status().message(), "not a possible record length"))
      << rec.status();
  EXPECT_FALSE((*reader)->truncated_tail());
}

TEST(TFRecord, ReadOfAHeaderOverTheCapInAShortFileIsCorruptionNotATornTail) {
  const std::string path = TestTempPath("_overcap_short.tfrecord");
  WriteFileBytes(path, HeaderClaiming(kMaxTFRecordBytes + 1));
  ReadResult r = ReadRecords(path);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss) << r.status;
  EXPECT_FALSE(r.truncated_tail);
}

TEST(TFRecord, ReadHonoursALowerCapFromOptions) {
  const std::string path = WriteSample("lowcap.tfrecord");
  auto reader = TFRecordReader::Open(path, {.max_record_bytes = 999});
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (size_t i = 0; i < 2; ++i) {  // "first" and "" are under the cap
    auto rec = (*reader)->Read();
    ASSERT_TRUE(rec.ok() && rec->has_value()) << rec.status();
    EXPECT_EQ(**rec, kRecords[i]);
  }
  auto rec = (*reader)->Read();  // 1000 bytes
  EXPECT_EQ(rec.status().code(), absl::StatusCode::kDataLoss) << rec.status();
  EXPECT_TRUE(absl::StrContains(rec.status().message(),
                                absl::StrCat("byte offset ", OffsetOf(2))))
      << rec.status();
}

TEST(TFRecord, ReadOfACorruptSparseRecordUnderTheCapAllocatesAtMostAChunk) {
  const std::string path = TestTempPath("_sparse8m.tfrecord");
  const uint64_t claimed = 8 * kTFRecordReadChunkBytes;
  WriteSparseFile(path, HeaderClaiming(claimed),
                  kTFRecordHeaderSize + claimed + kTFRecordFooterSize);
  ReadResult r;
  const size_t largest = LargestAllocationOf([&] { r = ReadRecords(path); });
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss) << r.status;
  EXPECT_TRUE(absl::StrContains(r.status.message(), "data CRC mismatch"))
      << r.status;
  EXPECT_LT(largest, 2 * kTFRecordReadChunkBytes);
}

TEST(TFRecord, ReadThatRunsOutOfMemoryIsResourceExhaustedAndCanBeRetried) {
  const std::string path = TestTempPath("_oom.tfrecord");
  const std::string big(2 * kTFRecordReadChunkBytes, 'b');
  WriteRecords(path, {big});
  auto reader = TFRecordReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  // The CRC pass's one-chunk buffer fits; room for the record does not.
  absl::StatusOr<std::optional<std::string>> rec = WithAllocationsOverFailing(
      kTFRecordReadChunkBytes + kTFRecordReadChunkBytes / 2,
      [&] { return (*reader)->Read(); });
  EXPECT_EQ(rec.status().code(), absl::StatusCode::kResourceExhausted)
      << rec.status();
  EXPECT_TRUE(absl::StrContains(
      rec.status().message(), absl::StrCat(path, ": record at byte offset 0")))
      << rec.status();
  rec = (*reader)->Read();
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_TRUE(rec->has_value());
  EXPECT_TRUE(**rec == big);
}

TEST(TFRecord, RecordsLongerThanOneChunkRoundTrip) {
  const std::string path = TestTempPath("_big.tfrecord");
  std::string big(5 * kTFRecordReadChunkBytes / 2 + 7, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31);
  WriteRecords(path, {big, "after"});
  ReadResult r = ReadRecords(path);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_TRUE(r.records[0] == big);
  EXPECT_EQ(r.records[1], "after");
}

TEST(TFRecord, CorruptDataInALaterChunkIsReportedWithItsOffset) {
  const std::string path = TestTempPath("_bigbad.tfrecord");
  WriteRecords(path, {"small", std::string(3 * kTFRecordReadChunkBytes, 'z')});
  std::string bytes = ReadFileBytes(path);
  const uint64_t off = kTFRecordHeaderSize + 5 + kTFRecordFooterSize;
  bytes[off + kTFRecordHeaderSize + 2 * kTFRecordReadChunkBytes + 9] ^= 0x40;
  WriteFileBytes(path, bytes);
  ReadResult r = ReadRecords(path);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss) << r.status;
  EXPECT_TRUE(absl::StrContains(
      r.status.message(), absl::StrCat("byte offset ", off, ": data CRC")))
      << r.status;
  EXPECT_EQ(r.records, std::vector<std::string>{"small"});
}

TEST(TFRecord, RecordLongerThanOneChunkCutShortIsATornTail) {
  const std::string path = TestTempPath("_bigtorn.tfrecord");
  WriteRecords(path, {std::string(2 * kTFRecordReadChunkBytes, 'q')});
  std::string bytes = ReadFileBytes(path);
  bytes.resize(bytes.size() - 2);
  WriteFileBytes(path, bytes);
  ReadResult r = ReadRecords(path);
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.records.empty());
  EXPECT_TRUE(r.truncated_tail);
}

TEST(TFRecord, WriteRefusesDataOverTheLimitWithoutWritingOrSticking) {
  const std::string path = TestTempPath("_overlimit.tfrecord");
  auto writer = TFRecordWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  // An untouched anonymous mapping: a view of 1 GiB + 1 bytes that costs
  // no memory, since the writer must refuse it before reading a byte.
  const size_t n = kMaxTFRecordBytes + 1;
  void* p = ::mmap(nullptr, n, PROT_READ,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  const absl::Status s =
      (*writer)->Write(std::string_view(static_cast<const char*>(p), n));
  ::munmap(p, n);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ((*writer)->bytes_written(), 0u);
  EXPECT_TRUE((*writer)->Write("fine").ok());
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(ReadRecords(path).records, std::vector<std::string>{"fine"});
}

TEST(TFRecord, OpenRefusesAFifoWithoutWaitingForAWriter) {
  const std::string path = TestTempPath("_fifo.tfrecord");
  ASSERT_TRUE(MakeFifo(path));
  std::optional<absl::Status> s = CallUnlessItBlocks(
      path, [&] { return TFRecordReader::Open(path).status(); });
  ASSERT_TRUE(s.has_value()) << "TFRecordReader::Open blocked on a FIFO";
  EXPECT_EQ(s->code(), absl::StatusCode::kInvalidArgument) << *s;
}

TEST(TFRecord, OpenRefusesADirectory) {
  const std::string path = TestTempPath("_a_directory");
  std::filesystem::create_directories(path);
  EXPECT_EQ(TFRecordReader::Open(path).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TFRecord, WriterOpenOfAFifoWithoutAReaderFailsInsteadOfWaiting) {
  const std::string path = TestTempPath("_fifo_out.tfrecord");
  ASSERT_TRUE(MakeFifo(path));
  std::optional<absl::Status> s = CallUnlessItBlocks(
      path, [&] { return TFRecordWriter::Open(path).status(); });
  ASSERT_TRUE(s.has_value()) << "TFRecordWriter::Open blocked on a FIFO";
  EXPECT_FALSE(s->ok());
}

TEST(TFRecord, PathsWithANulByteAreRefusedAndCreateNothing) {
  const std::string stem = TestTempPath("_nul_stem");
  const std::string path = stem + std::string("\0.tfrecord", 10);
  EXPECT_EQ(TFRecordWriter::Open(path).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(stem));
  EXPECT_EQ(TFRecordReader::Open(path).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphgc

// Counts the largest request for LargestAllocationOf() and fails those over
// WithAllocationsOverFailing's limit; otherwise the usual malloc-backed
// operator new.
void* operator new(size_t n) {
  const size_t fail_above =
      graphgc::g_fail_new_above.load(std::memory_order_relaxed);
  if (fail_above != 0 && n > fail_above) throw std::bad_alloc();
  if (graphgc::g_track_new.load(std::memory_order_relaxed)) {
    size_t prev = graphgc::g_largest_new.load();
    while (n > prev && !graphgc::g_largest_new.compare_exchange_weak(prev, n)) {
    }
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
