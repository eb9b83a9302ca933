// tests/data/csv_test.cc: data/csv.h, ReadCsv/ParseCsv/Inflate.
#include "data/csv.h"

#include <zlib.h>

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/temp_path.h"
#include "tests/util/fifo.h"

namespace graphgc::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// `text` as one gzip member.
std::string Gzip(const std::string& text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                         Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&zs, text.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = text.size();
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = out.size();
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(ParseCsv, ReadsFeaturesRowMajorAndTheLabelFromTheLastColumn) {
  absl::StatusOr<CsvDataset> d = ParseCsv("1,2,3,0\n4.5,-6,7e1,2\n", "t.csv");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->rows, 2);
  EXPECT_EQ(d->features, 3);
  EXPECT_THAT(d->x, ElementsAre(1, 2, 3, 4.5f, -6, 70));
  EXPECT_THAT(d->labels, ElementsAre(0, 2));
  EXPECT_EQ(d->num_classes, 3);
}

TEST(ParseCsv, AcceptsCrLfLineEndsBlankLinesSpacesAndAFinalLineWithoutNewline) {
  absl::StatusOr<CsvDataset> d = ParseCsv("1, 2 ,1\r\n\r\n 3,+4,0", "t.csv");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_THAT(d->x, ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(d->labels, ElementsAre(1, 0));
}

TEST(ParseCsv, SkipsTheHeaderOnlyWhenAsked) {
  EXPECT_TRUE(ParseCsv("a,b\n1,0\n", "t.csv", {.header = true}).ok());
  absl::StatusOr<CsvDataset> d = ParseCsv("a,b\n1,0\n", "t.csv");
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(d.status().message(),
              HasSubstr("t.csv:1:1: 'a' is not a number"));
}

TEST(ParseCsv, ABadFieldIsNamedByLineAndColumn) {
  absl::StatusOr<CsvDataset> d = ParseCsv("1,2,0\n\n3,x4,1\n", "d.csv");
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(d.status().message(),
              HasSubstr("d.csv:3:2: 'x4' is not a number"));
}

TEST(ParseCsv, EmptyNanInfAndOutOfRangeFieldsAreRefused) {
  for (const char* text :
       {"1,,0\n", "1,nan,0\n", "1,inf,0\n", "1,1e39,0\n", "1,1e400,0\n"}) {
    absl::StatusOr<CsvDataset> d = ParseCsv(text, "d.csv");
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(d.status().message(), HasSubstr("d.csv:1:2: ")) << text;
  }
}

TEST(ParseCsv, ARowWithAnotherColumnCountIsRefused) {
  absl::StatusOr<CsvDataset> d = ParseCsv("1,2,0\n1,0\n", "d.csv");
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(d.status().message(),
              HasSubstr("d.csv:2:3: row has 2 columns, the first row has 3"));
}

TEST(ParseCsv, LabelsMustBeNonNegativeIntegers) {
  for (const char* text : {"1,-1\n", "1,0.5\n", "1,3e9\n"}) {
    absl::StatusOr<CsvDataset> d = ParseCsv(text, "d.csv");
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(d.status().message(), HasSubstr("d.csv:1:2: label")) << text;
  }
  EXPECT_TRUE(ParseCsv("1,7.0\n", "d.csv").ok());
}

TEST(ParseCsv, ASignFollowedByAnotherSignIsRefused) {
  for (const char* text : {"+-1,0\n", "-+1,0\n", "++1,0\n", "--1,0\n"}) {
    absl::StatusOr<CsvDataset> d = ParseCsv(text, "d.csv");
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(d.status().message(), HasSubstr("d.csv:1:1: ")) << text;
  }
}

TEST(ParseCsv, AUtf8ByteOrderMarkAtTheStartIsSkipped) {
  absl::StatusOr<CsvDataset> d = ParseCsv(
      "\xEF\xBB\xBF"
      "1.5,2,1\n3,4,0\n",
      "d.csv");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_THAT(d->x, ElementsAre(1.5f, 2, 3, 4));
}

TEST(ParseCsv, ControlBytesOfTheFileAreEscapedInMessages) {
  absl::StatusOr<CsvDataset> d =
      ParseCsv(std::string("1,2\0x\x1b[2J,0\n", 12), "d.csv");
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(d.status().message(), HasSubstr("d.csv:1:2: '2\\000x\\033[2J'"));
  for (char c : d.status().message()) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << int{c};
  }
}

TEST(ParseCsv, ADatasetOverTheMemoryBudgetIsRefusedNamingTheBudget) {
  // 3 rows x 3 columns x 4 bytes = 36 bytes.
  const char* text = "1,2,0\n3,4,1\n5,6,0\n";
  EXPECT_TRUE(ParseCsv(text, "d.csv", {.max_memory_bytes = 36}).ok());
  absl::StatusOr<CsvDataset> d =
      ParseCsv(text, "d.csv", {.max_memory_bytes = 35});
  EXPECT_EQ(d.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(d.status().message(), HasSubstr("d.csv: "));
  EXPECT_THAT(d.status().message(), HasSubstr("budget of 35 bytes"));
}

TEST(ParseCsv, NoRowsOrASingleColumnIsRefused) {
  EXPECT_EQ(ParseCsv("", "d.csv").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCsv("\n\n", "d.csv").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ParseCsv("1\n", "d.csv").status().message(),
              HasSubstr("d.csv:1:1: a row needs at least one feature"));
}

TEST(ReadCsv, ReadsAPlainFile) {
  const std::string path = TestTempPath("_plain.csv");
  WriteFileBytes(path, "0.5,1\n0.25,0\n");
  absl::StatusOr<CsvDataset> d = ReadCsv(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_THAT(d->x, ElementsAre(0.5f, 0.25f));
  EXPECT_THAT(d->labels, ElementsAre(1, 0));
}

TEST(ReadCsv, ReadsAGzipFileAsItsText) {
  const std::string path = TestTempPath("_data.csv.gz");
  WriteFileBytes(path, Gzip("1,2,1\n3,4,0\n"));
  absl::StatusOr<CsvDataset> d = ReadCsv(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_THAT(d->x, ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(d->labels, ElementsAre(1, 0));
}

TEST(ReadCsv, ReadsConcatenatedGzipMembers) {
  const std::string path = TestTempPath("_two.csv.gz");
  WriteFileBytes(path, Gzip("1,2,1\n") + Gzip("3,4,0\n"));
  absl::StatusOr<CsvDataset> d = ReadCsv(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->rows, 2);
}

TEST(ReadCsv, ATruncatedGzipFileIsDataLossNamingTheFile) {
  const std::string path = TestTempPath("_cut.csv.gz");
  const std::string whole = Gzip("1,2,1\n3,4,0\n5,6,1\n");
  WriteFileBytes(path, whole.substr(0, whole.size() - 6));
  absl::StatusOr<CsvDataset> d = ReadCsv(path);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(d.status().message(), HasSubstr(path));
  EXPECT_THAT(d.status().message(), HasSubstr("ends early"));
}

TEST(ReadCsv, ACorruptGzipFileIsDataLoss) {
  const std::string path = TestTempPath("_bad.csv.gz");
  std::string bytes = Gzip("1,2,1\n3,4,0\n5,6,1\n");
  for (size_t i = 12; i < bytes.size() - 8; ++i) bytes[i] ^= 0x5a;
  WriteFileBytes(path, bytes);
  EXPECT_EQ(ReadCsv(path).status().code(), absl::StatusCode::kDataLoss);
}

TEST(ReadCsv, AGzipBombStopsAtMaxBytes) {
  const std::string path = TestTempPath("_bomb.csv.gz");
  WriteFileBytes(path, Gzip(std::string(1 << 20, '1')));
  absl::StatusOr<CsvDataset> d = ReadCsv(path, {.max_bytes = 4096});
  EXPECT_EQ(d.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(d.status().message(), HasSubstr("more than the 4096 bytes"));
}

TEST(ReadCsv, AGzipBombOfShortRowsIsRefusedByTheMemoryBudget) {
  // 64 KiB of text, 16,384 rows "0,0": 128 KiB parsed, over a 96 KiB
  // budget though the text alone fits.
  std::string rows;
  for (int i = 0; i < 16384; ++i) rows += "0,0\n";
  const std::string path = TestTempPath("_rows_bomb.csv.gz");
  WriteFileBytes(path, Gzip(rows));
  absl::StatusOr<CsvDataset> d = ReadCsv(path, {.max_memory_bytes = 96 << 10});
  EXPECT_EQ(d.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(d.status().message(), HasSubstr(path));
  EXPECT_THAT(d.status().message(), HasSubstr("budget of 98304 bytes"));
  EXPECT_TRUE(ReadCsv(path, {.max_memory_bytes = 192 << 10}).ok());
}

TEST(ReadCsv, AGzipBombIsInflatedNoFurtherThanTheMemoryBudget) {
  const std::string path = TestTempPath("_text_bomb.csv.gz");
  WriteFileBytes(path, Gzip(std::string(1 << 20, '1')));
  absl::StatusOr<CsvDataset> d = ReadCsv(path, {.max_memory_bytes = 4096});
  EXPECT_EQ(d.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(d.status().message(), HasSubstr(path));
  EXPECT_THAT(d.status().message(), HasSubstr("budget of 4096 bytes"));
}

TEST(ReadCsv, AFileLargerThanMaxBytesIsRefused) {
  const std::string path = TestTempPath("_big.csv");
  WriteFileBytes(path, std::string(5000, '1') + ",0\n");
  EXPECT_EQ(ReadCsv(path, {.max_bytes = 4096}).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(ReadCsv, ADirectoryIsRefused) {
  const std::string dir = TestTempPath();
  std::filesystem::create_directories(dir);
  absl::StatusOr<CsvDataset> d = ReadCsv(dir);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReadCsv, AFifoIsRefusedWithoutWaitingForAWriter) {
  const std::string fifo = TestTempPath("_data.fifo");
  ASSERT_TRUE(MakeFifo(fifo));
  std::optional<absl::Status> s =
      CallUnlessItBlocks(fifo, [&] { return ReadCsv(fifo).status(); });
  ASSERT_TRUE(s.has_value()) << "ReadCsv blocked on a FIFO";
  EXPECT_EQ(s->code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReadCsv, AMissingFileIsNotFound) {
  EXPECT_EQ(ReadCsv(TestTempPath("_missing.csv")).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace graphgc::data
