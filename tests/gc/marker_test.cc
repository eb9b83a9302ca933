#include "gc/marker.h"

#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "tests/gc/test_graph.h"

namespace graphgc {
namespace {

using testing::AddTestNode;

TEST(Marker, MarksEverythingReachableAndNothingElse) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a});
  NodeHandle c = AddTestNode(g, "c");
  gc::Marker marker;
  WriterLock l(g.heap().mu());
  const uint32_t root = b.id().index;
  EXPECT_EQ(marker.Mark(g.heap(), {root}, 7), 2);
  EXPECT_EQ(g.heap().slot(a.id().index).mark_epoch, 7u);
  EXPECT_EQ(g.heap().slot(b.id().index).mark_epoch, 7u);
  EXPECT_NE(g.heap().slot(c.id().index).mark_epoch, 7u);
}

TEST(Marker, MarksSharedInputsOnce) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a, a});
  NodeHandle c = AddTestNode(g, "c", {a, b});
  gc::Marker marker;
  WriterLock l(g.heap().mu());
  const uint32_t root = c.id().index;
  EXPECT_EQ(marker.Mark(g.heap(), {root, root}, 1), 3);
}

TEST(Marker, TerminatesOnCycles) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a});
  ASSERT_TRUE(g.AddControlEdge(b, a).ok());
  gc::Marker marker;
  WriterLock l(g.heap().mu());
  const uint32_t root = a.id().index;
  EXPECT_EQ(marker.Mark(g.heap(), {root}, 1), 2);
}

}  // namespace
}  // namespace graphgc
