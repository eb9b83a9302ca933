#include "runtime/intra_op_threads.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "util/cpu_count.h"

namespace graphgc {
namespace {

// Restores the automatic count whatever a test set.
class IntraOpThreadsTest : public ::testing::Test {
 protected:
  ~IntraOpThreadsTest() override { (void)SetIntraOpThreads(0); }
};

TEST_F(IntraOpThreadsTest, DefaultsToTheUsableCores) {
  EXPECT_EQ(IntraOpThreads(), UsableCores());
}

TEST_F(IntraOpThreadsTest, ASetCountIsWhatZeroResolvesTo) {
  ASSERT_TRUE(SetIntraOpThreads(3).ok());
  EXPECT_EQ(IntraOpThreads(), 3);
  EXPECT_EQ(ResolveIntraOpThreads(0), 3);
}

TEST_F(IntraOpThreadsTest, ZeroRestoresTheAutomaticCount) {
  ASSERT_TRUE(SetIntraOpThreads(5).ok());
  ASSERT_TRUE(SetIntraOpThreads(0).ok());
  EXPECT_EQ(IntraOpThreads(), UsableCores());
}

TEST_F(IntraOpThreadsTest, TheSettingIsZeroWhileAutomatic) {
  EXPECT_EQ(IntraOpThreadsSetting(), 0);
  ASSERT_TRUE(SetIntraOpThreads(2).ok());
  EXPECT_EQ(IntraOpThreadsSetting(), 2);
}

TEST_F(IntraOpThreadsTest, AnExplicitRequestIsKept) {
  ASSERT_TRUE(SetIntraOpThreads(4).ok());
  EXPECT_EQ(ResolveIntraOpThreads(1), 1);
  EXPECT_EQ(ResolveIntraOpThreads(7), 7);
}

TEST_F(IntraOpThreadsTest, ARequestAboveTheMaximumIsCut) {
  EXPECT_EQ(ResolveIntraOpThreads(kMaxIntraOpThreads + 1), kMaxIntraOpThreads);
}

TEST_F(IntraOpThreadsTest, NegativeOrTooManyIsRefusedAndChangesNothing) {
  ASSERT_TRUE(SetIntraOpThreads(2).ok());
  EXPECT_EQ(SetIntraOpThreads(-1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SetIntraOpThreads(kMaxIntraOpThreads + 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(IntraOpThreads(), 2);
}

}  // namespace
}  // namespace graphgc
