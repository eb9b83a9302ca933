#include "tools/tfevents_lib.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "serialize/event_file.h"
#include "tests/testing/packed_zeros_events.h"
#include "tests/testing/temp_path.h"
#include "tests/util/fifo.h"

namespace graphgc::tfevents {
namespace {

namespace fs = std::filesystem;

class TfeventsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = TestTempPath(); }

  // A file with a 3-node graph (Const, Const, MatMul) and two scalar tags.
  std::string WriteSampleFile(const std::string& log_dir) {
    auto w = EventFileWriter::Create(log_dir);
    EXPECT_TRUE(w.ok()) << w.status();
    proto::GraphDef g;
    for (const char* op : {"Const", "Const", "MatMul"}) {
      proto::NodeDef* n = g.add_node();
      n->set_name(absl::StrCat("n", g.node_size()));
      n->set_op(op);
    }
    graph_bytes_ = static_cast<int64_t>(g.ByteSizeLong());
    EXPECT_TRUE((*w)->WriteGraph(g).ok());
    for (int step = 1; step <= 3; ++step) {
      EXPECT_TRUE((*w)->WriteScalar("batch_loss", step, 1.0f / step).ok());
    }
    EXPECT_TRUE((*w)->WriteScalar("epoch_loss", 1, 0.25f).ok());
    EXPECT_TRUE((*w)->Close().ok());
    return (*w)->path();
  }

  // A file of one record of 128 MiB of packed zeros (a sparse file).
  std::string WritePackedZerosFile(PackedZerosIn in) {
    fs::create_directories(dir_);
    const std::string path = dir_ + "/events.out.tfevents.packed";
    EXPECT_TRUE(WritePackedZerosEventFile(
                    path, {{.in = in, .zero_bytes = uint64_t{1} << 27}})
                    .ok());
    return path;
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  static void WriteFile(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  std::string dir_;
  int64_t graph_bytes_ = 0;
};

TEST_F(TfeventsTest, SummarizesGraphAndScalars) {
  const std::string path = WriteSampleFile(dir_);
  auto s = SummarizeEventFile(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->size_bytes, fs::file_size(path));
  EXPECT_EQ(s->num_events, 6);  // version, graph, 4 scalars
  EXPECT_EQ(s->file_version, "brain.Event:2");
  EXPECT_EQ(s->num_graphs, 1);
  EXPECT_EQ(s->graph_bytes, graph_bytes_);
  EXPECT_EQ(s->node_count, 3);
  EXPECT_EQ(s->op_histogram,
            (std::map<std::string, int64_t>{{"Const", 2}, {"MatMul", 1}}));
  ASSERT_EQ(s->scalars.size(), 2u);
  EXPECT_EQ(s->scalars.at("batch_loss").count, 3);
  EXPECT_EQ(s->scalars.at("batch_loss").last_step, 3);
  EXPECT_FLOAT_EQ(s->scalars.at("batch_loss").last_value, 1.0f / 3);
  EXPECT_EQ(s->scalars.at("epoch_loss").count, 1);
  EXPECT_TRUE(s->corruption.ok());
  EXPECT_FALSE(s->truncated_tail);
}

TEST_F(TfeventsTest, FormatNamesEverySection) {
  auto s = SummarizeEventFile(WriteSampleFile(dir_));
  ASSERT_TRUE(s.ok());
  const std::string text = FormatSummary(*s);
  for (const std::string& want :
       {std::string("events:        6"), std::string("nodes:         3"),
        absl::StrCat("(", graph_bytes_, " graph bytes)"), std::string("Const"),
        std::string("MatMul"), std::string("batch_loss"),
        std::string("3 values, last 0.333333")}) {
    EXPECT_TRUE(absl::StrContains(text, want)) << want << "\n" << text;
  }
  EXPECT_FALSE(absl::StrContains(text, "CORRUPT"));
}

TEST_F(TfeventsTest, ReportsCorruptRecordWithOffset) {
  const std::string path = WriteSampleFile(dir_);
  std::string bytes = ReadFile(path);
  bytes[bytes.size() - 2] ^= 0x01;  // last record's data CRC
  WriteFile(path, bytes);
  auto s = SummarizeEventFile(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->corruption.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(s->corruption.message(), "byte offset"));
  EXPECT_EQ(s->num_events, 5);
  EXPECT_TRUE(absl::StrContains(FormatSummary(*s), "CORRUPT"));
}

TEST_F(TfeventsTest, ReportsTornTailWithoutCorruption) {
  const std::string path = WriteSampleFile(dir_);
  std::string bytes = ReadFile(path);
  bytes.resize(bytes.size() - 1);
  WriteFile(path, bytes);
  auto s = SummarizeEventFile(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->corruption.ok()) << s->corruption;
  EXPECT_TRUE(s->truncated_tail);
  EXPECT_EQ(s->num_events, 5);
  EXPECT_TRUE(absl::StrContains(FormatSummary(*s), "torn tail"));
}

TEST_F(TfeventsTest, GraphPayloadThatIsNotAGraphDefIsCorruption) {
  auto w = EventFileWriter::Create(dir_);
  ASSERT_TRUE(w.ok());
  proto::Event e;
  e.set_graph_def("\xff\xff\xff");
  ASSERT_TRUE((*w)->WriteEvent(e).ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto s = SummarizeEventFile((*w)->path());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(
      absl::StrContains(s->corruption.message(), "not a valid GraphDef"))
      << s->corruption;
}

// 128 MiB of packed zeros (a sparse file) parse to 2^27 int64 elements:
// over the budget of one event, so reported and not parsed.
TEST_F(TfeventsTest, EventPastTheMemoryBudgetIsReportedNotParsed) {
  const std::string path = WritePackedZerosFile(PackedZerosIn::kSummaryTensor);
  auto s = SummarizeEventFile(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->corruption.code(), absl::StatusCode::kResourceExhausted)
      << s->corruption;
  EXPECT_TRUE(absl::StrContains(
      s->corruption.message(), absl::StrCat(path, ": record at byte offset 0")))
      << s->corruption;
  EXPECT_TRUE(absl::StrContains(FormatSummary(*s), "OVER BUDGET"));
}

// The event holds the GraphDef's 128 MiB as bytes; the GraphDef they hold
// would parse to 2^27 int64 elements of one attr.
TEST_F(TfeventsTest, GraphDefPastTheMemoryBudgetIsReportedNotParsed) {
  const std::string path = WritePackedZerosFile(PackedZerosIn::kGraphDefAttr);
  auto s = SummarizeEventFile(path);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->corruption.code(), absl::StatusCode::kResourceExhausted)
      << s->corruption;
  EXPECT_TRUE(absl::StrContains(
      s->corruption.message(),
      absl::StrCat(path, ": record at byte offset 0: graph_def: ")))
      << s->corruption;
  EXPECT_EQ(s->node_count, 0);
}

TEST_F(TfeventsTest, FindsEventFilesRecursivelyAndSkipsOthers) {
  const std::string a = WriteSampleFile(dir_ + "/run0/train");
  const std::string b = WriteSampleFile(dir_ + "/run1/train");
  WriteFile(dir_ + "/run1/notes.txt", "hello");
  auto files = FindEventFiles(dir_);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(*files, (std::vector<std::string>{a, b}));
}

TEST_F(TfeventsTest, FileArgumentIsTakenAsIs) {
  const std::string a = WriteSampleFile(dir_);
  auto files = FindEventFiles(a);
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(*files, std::vector<std::string>{a});
}

TEST_F(TfeventsTest, SummarizeRefusesAFifoWithoutWaitingForAWriter) {
  fs::create_directories(dir_);
  const std::string path = dir_ + "/events.out.tfevents.fifo";
  ASSERT_TRUE(MakeFifo(path));
  std::optional<absl::Status> s = CallUnlessItBlocks(
      path, [&] { return SummarizeEventFile(path).status(); });
  ASSERT_TRUE(s.has_value()) << "SummarizeEventFile blocked on a FIFO";
  EXPECT_EQ(s->code(), absl::StatusCode::kInvalidArgument) << *s;
  EXPECT_TRUE(absl::StrContains(s->message(), "not a regular file")) << *s;
}

TEST_F(TfeventsTest, MissingPathIsNotFound) {
  EXPECT_EQ(FindEventFiles(dir_ + "/missing").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace graphgc::tfevents
