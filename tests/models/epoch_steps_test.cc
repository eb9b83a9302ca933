// models/epoch_steps.h: the batches each epoch runs, as Keras 3's
// EpochIterator hands them out over array data.
#include "models/epoch_steps.h"

#include "gtest/gtest.h"

namespace graphgc {
namespace {

using models_internal::EpochSteps;

TEST(EpochSteps, WithoutStepsEveryEpochIsOneWholePass) {
  EpochSteps steps(4, 0);
  EXPECT_EQ(steps.target(), 4);
  for (int epoch = 0; epoch < 3; ++epoch) {
    EpochSteps::Span s = steps.Next();
    EXPECT_EQ(s.first, 0);
    EXPECT_EQ(s.count, 4);
    EXPECT_TRUE(s.new_pass);
    EXPECT_FALSE(s.ran_out);
  }
}

TEST(EpochSteps, EpochsContinueThePassAndStartANewOneWhenItIsUsedUp) {
  EpochSteps steps(4, 2);
  EXPECT_EQ(steps.target(), 2);
  EpochSteps::Span a = steps.Next(), b = steps.Next(), c = steps.Next();
  EXPECT_EQ(a.first, 0);
  EXPECT_TRUE(a.new_pass);
  EXPECT_EQ(b.first, 2);
  EXPECT_EQ(b.count, 2);
  EXPECT_FALSE(b.new_pass);
  EXPECT_FALSE(b.ran_out);  // exactly used up: Keras does not warn
  EXPECT_EQ(c.first, 0);
  EXPECT_TRUE(c.new_pass);
}

TEST(EpochSteps, APassRunningOutEndsTheEpochEarlyWithAWarning) {
  EpochSteps steps(4, 3);
  EpochSteps::Span a = steps.Next(), b = steps.Next(), c = steps.Next();
  EXPECT_EQ(a.count, 3);
  EXPECT_FALSE(a.ran_out);
  EXPECT_EQ(b.first, 3);
  EXPECT_EQ(b.count, 1);
  EXPECT_TRUE(b.ran_out);
  EXPECT_EQ(c.first, 0);
  EXPECT_EQ(c.count, 3);
  EXPECT_TRUE(c.new_pass);
}

TEST(EpochSteps, MoreStepsThanBatchesRunsOnePassAndWarns) {
  EpochSteps steps(2, 5);
  EpochSteps::Span a = steps.Next();
  EXPECT_EQ(a.count, 2);
  EXPECT_TRUE(a.ran_out);
  EXPECT_TRUE(steps.Next().new_pass);
}

}  // namespace
}  // namespace graphgc
