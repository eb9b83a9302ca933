#include "serialize/event_file.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "serialize/tfrecord.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/packed_zeros_events.h"
#include "tests/testing/temp_path.h"
#include "tests/util/fifo.h"

namespace graphgc {
namespace {

namespace fs = std::filesystem;

class EventFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = TestTempPath(); }

  static proto::GraphDef SmallGraph() {
    proto::GraphDef g;
    proto::NodeDef* x = g.add_node();
    x->set_name("x");
    x->set_op("Placeholder");
    (*x->mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
    proto::NodeDef* y = g.add_node();
    y->set_name("y");
    y->set_op("Relu");
    y->add_input("x");
    g.mutable_versions()->set_producer(1087);
    return g;
  }

  std::string dir_;
};

TEST_F(EventFileTest, FirstEventIsFileVersion) {
  auto w = EventFileWriter::Create(dir_);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Close().ok());
  auto events = EventFileReader::ReadAll((*w)->path());
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].file_version(), "brain.Event:2");
  EXPECT_GT((*events)[0].wall_time(), 1.5e9);
}

TEST_F(EventFileTest, FileNameFollowsThePattern) {
  auto w = EventFileWriter::Create(dir_);
  ASSERT_TRUE(w.ok()) << w.status();
  const fs::path p((*w)->path());
  EXPECT_EQ(p.parent_path(), fs::path(dir_));
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  // events.out.tfevents.<seconds>.<hostname>.<pid>.<n>.v2
  const std::string name = p.filename().string();
  absl::string_view rest = name;
  ASSERT_TRUE(absl::ConsumePrefix(&rest, "events.out.tfevents.")) << name;
  const size_t dot = rest.find('.');
  ASSERT_NE(dot, absl::string_view::npos) << name;
  long long secs = 0;
  ASSERT_TRUE(absl::SimpleAtoi(rest.substr(0, dot), &secs)) << name;
  EXPECT_LE(std::abs(secs - static_cast<long long>(time(nullptr))), 5);
  rest.remove_prefix(dot);
  ASSERT_TRUE(
      absl::ConsumePrefix(&rest, absl::StrCat(".", host, ".", getpid(), ".")))
      << name;
  ASSERT_TRUE(absl::ConsumeSuffix(&rest, ".v2")) << name;
  int n = -1;
  EXPECT_TRUE(absl::SimpleAtoi(rest, &n)) << name;
  EXPECT_GE(n, 0);
  EXPECT_TRUE(IsEventFileName(name));
  EXPECT_TRUE(fs::exists(p));
}

TEST_F(EventFileTest, WritersInTheSameSecondGetDifferentNames) {
  std::set<std::string> paths;
  std::vector<std::unique_ptr<EventFileWriter>> writers;
  for (int i = 0; i < 5; ++i) {
    auto w = EventFileWriter::Create(dir_);
    ASSERT_TRUE(w.ok()) << w.status();
    paths.insert((*w)->path());
    writers.push_back(std::move(w).value());
  }
  EXPECT_EQ(paths.size(), 5u);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_))
    files += e.is_regular_file();
  EXPECT_EQ(files, 5u);
}

TEST_F(EventFileTest, CreatesMissingDirectoriesRecursively) {
  const std::string deep = dir_ + "/a/b/c/train";
  auto w = EventFileWriter::Create(deep);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(fs::is_directory(deep));
}

TEST_F(EventFileTest, DirectoryUnderARegularFileIsAnError) {
  fs::create_directories(dir_);
  WriteFileBytes(dir_ + "/plain_file", "not a directory");
  auto w = EventFileWriter::Create(dir_ + "/plain_file/logs");
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(absl::StrContains(w.status().message(), "plain_file/logs"))
      << w.status();
}

TEST_F(EventFileTest, EmptyLogDirIsInvalidArgument) {
  EXPECT_EQ(EventFileWriter::Create("").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(EventFileTest, LogDirWithANulByteIsInvalidArgumentAndCreatesNothing) {
  const absl::Status s =
      EventFileWriter::Create(dir_ + std::string("\0/train", 7)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(EventFileTest, UnwritableDirectoryIsPermissionDenied) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  fs::create_directories(dir_);
  ASSERT_EQ(chmod(dir_.c_str(), 0500), 0);
  auto w = EventFileWriter::Create(dir_);
  chmod(dir_.c_str(), 0700);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kPermissionDenied)
      << w.status();
}

TEST_F(EventFileTest, GraphAndScalarRoundTrip) {
  auto w = EventFileWriter::Create(dir_);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->WriteGraph(SmallGraph(), /*step=*/0).ok());
  ASSERT_TRUE((*w)->WriteScalar("epoch_loss", 3, 0.125f).ok());
  proto::Event custom;
  custom.set_step(7);
  custom.mutable_summary()->add_value()->set_tag("custom");
  ASSERT_TRUE((*w)->WriteEvent(custom).ok());
  ASSERT_TRUE((*w)->Flush().ok());
  ASSERT_TRUE((*w)->Close().ok());

  bool torn = true;
  auto events = EventFileReader::ReadAll((*w)->path(), &torn);
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_FALSE(torn);
  ASSERT_EQ(events->size(), 4u);

  const proto::Event& graph_event = (*events)[1];
  ASSERT_EQ(graph_event.what_case(), proto::Event::kGraphDef);
  proto::GraphDef g;
  ASSERT_TRUE(g.ParseFromString(graph_event.graph_def()));
  EXPECT_EQ(g.SerializeAsString(), SmallGraph().SerializeAsString());

  const proto::Event& scalar = (*events)[2];
  EXPECT_EQ(scalar.step(), 3);
  ASSERT_EQ(scalar.summary().value_size(), 1);
  EXPECT_EQ(scalar.summary().value(0).tag(), "epoch_loss");
  EXPECT_EQ(scalar.summary().value(0).value_case(),
            proto::Summary::Value::kSimpleValue);
  EXPECT_EQ(scalar.summary().value(0).simple_value(), 0.125f);

  EXPECT_EQ((*events)[3].step(), 7);
  for (const proto::Event& e : *events) EXPECT_GT(e.wall_time(), 1.5e9);
}

TEST_F(EventFileTest, ReaderNextStreamsEventsThenEndOfData) {
  auto w = EventFileWriter::Create(dir_);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->WriteScalar("a", 1, 1.0f).ok());
  auto r = EventFileReader::Open((*w)->path());
  ASSERT_TRUE(r.ok()) << r.status();
  int n = 0;
  while (true) {
    auto e = (*r)->Next();
    ASSERT_TRUE(e.ok()) << e.status();
    if (!e->has_value()) break;
    ++n;
  }
  EXPECT_EQ(n, 2);
  EXPECT_FALSE((*r)->truncated_tail());
}

TEST_F(EventFileTest, WriteAfterCloseFails) {
  auto w = EventFileWriter::Create(dir_);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_FALSE((*w)->WriteScalar("late", 1, 1.0f).ok());
  EXPECT_TRUE((*w)->Close().ok());
}

TEST_F(EventFileTest, FullDiskIsAStatusFromCreate) {
  auto w = EventFileWriter::CreateAtPathForTesting("/dev/full");
  EXPECT_EQ(w.status().code(), absl::StatusCode::kResourceExhausted)
      << w.status();
}

// The file size limit lets the first events through, then makes write(2)
// fail mid-run with EFBIG, like a disk filling up.
TEST_F(EventFileTest, FileSizeLimitMidRunIsAStickyStatusAndLeavesAPrefix) {
  fs::create_directories(dir_);
  const std::string path = dir_ + "/limited.tfevents";
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limited = old;
  limited.rlim_cur = 2000;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);

  absl::Status failure;
  int written = 0;
  auto w = EventFileWriter::CreateAtPathForTesting(path);
  if (w.ok()) {
    for (int i = 0; i < 1000 && failure.ok(); ++i) {
      failure = (*w)->WriteScalar("loss", i, 1.0f / (i + 1));
      if (failure.ok()) ++written;
    }
  }
  absl::Status again =
      w.ok() ? (*w)->WriteScalar("loss", 0, 0.f) : absl::OkStatus();
  absl::Status flush = w.ok() ? (*w)->Flush() : absl::OkStatus();
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);

  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_FALSE(failure.ok());
  EXPECT_TRUE(absl::StrContains(failure.message(), path)) << failure;
  EXPECT_EQ(again, failure);
  EXPECT_EQ(flush, failure);
  EXPECT_EQ((*w)->status(), failure);

  bool torn = false;
  auto events = EventFileReader::ReadAll(path, &torn);
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(events->size(), static_cast<size_t>(written) + 1);
  EXPECT_TRUE(torn);  // the failed write left part of its record
}

TEST_F(EventFileTest, EveryPrefixReadsItsWholeEventsAndReportsTheTornTail) {
  auto w = EventFileWriter::Create(dir_);
  ASSERT_TRUE(w.ok());
  std::vector<uint64_t> ends;  // file size after each event
  ASSERT_TRUE((*w)->Flush().ok());
  ends.push_back(fs::file_size((*w)->path()));
  ASSERT_TRUE((*w)->WriteGraph(SmallGraph()).ok());
  ends.push_back(fs::file_size((*w)->path()));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*w)->WriteScalar("loss", i, 0.5f * i).ok());
    ends.push_back(fs::file_size((*w)->path()));
  }
  ASSERT_TRUE((*w)->Close().ok());
  const std::string full = ReadFileBytes((*w)->path());
  ASSERT_EQ(full.size(), ends.back());

  const std::string cut_path = dir_ + "/cut.tfevents";
  for (size_t cut = 0; cut <= full.size(); ++cut) {
    WriteFileBytes(cut_path, full.substr(0, cut));
    size_t whole = 0;
    while (whole < ends.size() && ends[whole] <= cut) ++whole;
    bool torn = false;
    auto events = EventFileReader::ReadAll(cut_path, &torn);
    ASSERT_TRUE(events.ok()) << "cut " << cut << ": " << events.status();
    ASSERT_EQ(events->size(), whole) << "cut " << cut;
    const bool at_boundary = cut == 0 || (whole > 0 && ends[whole - 1] == cut);
    EXPECT_EQ(torn, !at_boundary) << "cut " << cut;
  }
}

TEST_F(EventFileTest, RecordThatIsNotAnEventIsDataLossWithOffset) {
  fs::create_directories(dir_);
  const std::string path = dir_ + "/bad.tfevents";
  {
    auto writer = TFRecordWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    proto::Event e;
    e.set_file_version("brain.Event:2");
    ASSERT_TRUE((*writer)->Write(e.SerializeAsString()).ok());
    ASSERT_TRUE((*writer)->Write("\xff\xff\xff").ok());  // bad tag varint
  }
  const uint64_t offset = fs::file_size(path) - (12 + 3 + 4);
  auto events = EventFileReader::ReadAll(path);
  EXPECT_EQ(events.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(
      events.status().message(),
      absl::StrCat("record at byte offset ", offset, ": not a valid Event")))
      << events.status();
}

TEST_F(EventFileTest, CorruptRecordIsDataLossFromReadAll) {
  auto w = EventFileWriter::Create(dir_);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->WriteScalar("loss", 1, 1.0f).ok());
  ASSERT_TRUE((*w)->Close().ok());
  std::string bytes = ReadFileBytes((*w)->path());
  bytes[bytes.size() - 6] ^= 0x40;  // inside the last event's data
  WriteFileBytes((*w)->path(), bytes);
  auto events = EventFileReader::ReadAll((*w)->path());
  EXPECT_EQ(events.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(events.status().message(), "data CRC"))
      << events.status();
}

TEST_F(EventFileTest, ConcurrentWritersLoseNoEvents) {
  auto w = EventFileWriter::Create(dir_);
  ASSERT_TRUE(w.ok());
  constexpr int kThreads = 4;
  constexpr int kPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&w, t] {
      for (int i = 0; i < kPerThread; ++i) {
        EXPECT_TRUE(
            (*w)->WriteScalar(absl::StrCat("t", t), i, static_cast<float>(i))
                .ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE((*w)->Close().ok());
  auto events = EventFileReader::ReadAll((*w)->path());
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(events->size(), 1u + kThreads * kPerThread);
}

TEST_F(EventFileTest, ReadAllRefusesAFifoWithoutWaitingForAWriter) {
  fs::create_directories(dir_);
  const std::string path = dir_ + "/events.out.tfevents.fifo";
  ASSERT_TRUE(MakeFifo(path));
  std::optional<absl::Status> s = CallUnlessItBlocks(
      path, [&] { return EventFileReader::ReadAll(path).status(); });
  ASSERT_TRUE(s.has_value()) << "EventFileReader blocked on a FIFO";
  EXPECT_EQ(s->code(), absl::StatusCode::kInvalidArgument) << *s;
  EXPECT_TRUE(absl::StrContains(s->message(), "not a regular file")) << *s;
}

TEST_F(EventFileTest, ReadAllRefusesADirectory) {
  fs::create_directories(dir_);
  EXPECT_EQ(EventFileReader::ReadAll(dir_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(EventFileTest, ReadAllReportsARecordOverItsCapAsDataLoss) {
  auto w = EventFileWriter::Create(dir_);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->WriteGraph(SmallGraph()).ok());
  ASSERT_TRUE((*w)->Close().ok());
  ASSERT_TRUE(EventFileReader::ReadAll((*w)->path()).ok());
  // The file_version event is about 30 bytes, the graph event more.
  auto events =
      EventFileReader::ReadAll((*w)->path(), nullptr, {.max_record_bytes = 40});
  EXPECT_EQ(events.status().code(), absl::StatusCode::kDataLoss)
      << events.status();
  EXPECT_TRUE(absl::StrContains(events.status().message(), "over the cap"))
      << events.status();
}

// 128 MiB of packed zeros in a sparse file parse to 2^27 int64 elements
// (1 GiB, up to 3 GiB while the repeated field grows): over the default
// budget, refused before anything of the record is parsed.
TEST_F(EventFileTest, NextRefusesARecordWhoseEventPassesTheEventBudget) {
  fs::create_directories(dir_);
  const std::string path = dir_ + "/events.out.tfevents.packed";
  ASSERT_TRUE(
      WritePackedZerosEventFile(path, {{.in = PackedZerosIn::kSummaryTensor,
                                        .zero_bytes = uint64_t{1} << 27}})
          .ok());
  auto reader = EventFileReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto event = (*reader)->Next();
  EXPECT_EQ(event.status().code(), absl::StatusCode::kResourceExhausted)
      << event.status();
  EXPECT_TRUE(
      absl::StrContains(event.status().message(),
                        absl::StrCat(path, ": record at byte offset 0: ")))
      << event.status();
  EXPECT_TRUE(absl::StrContains(
      event.status().message(),
      absl::StrCat("budget of ", kDefaultMaxEventBytes,
                   " bytes of memory (EventFileReaderOptions::"
                   "max_event_bytes)")))
      << event.status();
}

// Records of 32 and 64 MiB of packed zeros: each within the event budget
// (bounds of 768 MiB and 1.5 GiB), but together over the total budget. The
// second is refused before it is parsed.
TEST_F(EventFileTest, ReadAllRefusesEventsThatTogetherPassTheTotalBudget) {
  fs::create_directories(dir_);
  const std::string path = dir_ + "/events.out.tfevents.packed";
  ASSERT_TRUE(
      WritePackedZerosEventFile(path, {{.in = PackedZerosIn::kSummaryTensor,
                                        .zero_bytes = uint64_t{1} << 25},
                                       {.in = PackedZerosIn::kSummaryTensor,
                                        .zero_bytes = uint64_t{1} << 26}})
          .ok());
  auto events = EventFileReader::ReadAll(path);
  EXPECT_EQ(events.status().code(), absl::StatusCode::kResourceExhausted)
      << events.status();
  EXPECT_TRUE(absl::StrContains(events.status().message(),
                                "EventFileReaderOptions::max_total_bytes"))
      << events.status();
}

TEST_F(EventFileTest, ReadingAMissingFileIsNotFound) {
  EXPECT_EQ(EventFileReader::ReadAll(dir_ + "/nope").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace graphgc
