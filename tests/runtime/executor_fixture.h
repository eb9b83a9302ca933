// tests/runtime/executor_fixture.h
//
// What the tests of the executor's pieces (plan_test, plan_builder_test,
// executor_test) share: a graph of test ops (test_ops.h) and a one-thread
// Executor whose device their plans are built for. Each test's fixture
// derives from it and adds its own way of building a plan. It lives here,
// not in tests/testing/, because runtime:executor is visible to this
// package only.
#ifndef GRAPHGC_TESTS_RUNTIME_EXECUTOR_FIXTURE_H_
#define GRAPHGC_TESTS_RUNTIME_EXECUTOR_FIXTURE_H_

#include "gtest/gtest.h"
#include "runtime/executor.h"
#include "runtime/graph.h"
#include "tests/runtime/test_ops.h"

namespace graphgc::exec {

class ExecutorFixture : public ::testing::Test {
 protected:
  testing::TestOps ops_;  // before g_: nodes point at its OpDefs
  Graph g_;
  Executor executor_{1};
};

}  // namespace graphgc::exec

#endif  // GRAPHGC_TESTS_RUNTIME_EXECUTOR_FIXTURE_H_
