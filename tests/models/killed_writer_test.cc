// A training process killed with SIGKILL mid-epoch leaves an event file
// whose written prefix reads back: every whole event, at most a torn tail.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "serialize/event_file.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

// The child: trains forever, a batch_loss event per batch.
[[noreturn]] void TrainUntilKilled(const std::string& log_dir) {
  Graph g;
  Sequential m =
      Sequential::Create(
          {layers::Input({10}), layers::Dense(10, {.activation = "softmax"})},
          {.graph = &g})
          .value();
  if (!m.Compile({.optimizer = optimizers::Adam(),
                  .loss = losses::SparseCategoricalCrossentropy()})
           .ok()) {
    std::_Exit(2);
  }
  std::vector<float> xs(256 * 10, 0.5f);
  std::vector<int32_t> ys(256, 3);
  Tensor x = Tensor::FromData<float>({256, 10}, xs).value();
  Tensor y = Tensor::FromData<int32_t>({256}, ys).value();
  auto tb =
      callbacks::TensorBoard::Create({.log_dir = log_dir, .update_freq = 1});
  (void)m.Fit(x, y, {.epochs = 1000000, .verbose = 0, .callbacks = {tb}});
  std::_Exit(3);
}

TEST(KilledWriter, SigkillMidEpochLeavesAReadablePrefix) {
  const std::string dir = TestTempPath();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) TrainUntilKilled(dir);
  // Wait until the child has written a good number of events.
  std::string path;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    if (std::filesystem::exists(dir + "/train", ec)) {
      for (const auto& e :
           std::filesystem::directory_iterator(dir + "/train", ec)) {
        path = e.path().string();
      }
    }
    if (!path.empty() && std::filesystem::file_size(path, ec) > 20000) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_FALSE(path.empty());
  bool torn = false;
  absl::StatusOr<std::vector<proto::Event>> events =
      EventFileReader::ReadAll(path, &torn);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_GT(events->size(), 10u);
  EXPECT_EQ(events->front().file_version(), "brain.Event:2");
  EXPECT_TRUE(events->at(1).has_graph_def());
  int batch_losses = 0;
  for (const auto& ev : *events) {
    for (const auto& v : ev.summary().value())
      batch_losses += v.tag() == "batch_loss";
  }
  EXPECT_GT(batch_losses, 5);
}

}  // namespace
}  // namespace graphgc
