#include "gc/marker.h"

#include <vector>

#include "gc/pin.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "tests/gc/test_graph.h"

namespace graphgc {
namespace {

using testing::AddTestNode;

// What MarkHeap left: how many it marked and the garbage it listed.
struct FullMark {
  int64_t marked = 0;
  std::vector<NodeId> garbage;
};

FullMark MarkHeap(Graph& g, uint32_t epoch, bool stamp = false) {
  gc::Marker marker;
  FullMark out;
  WriterLock l(g.heap().mu());
  gc::NodeIdList garbage = {NodeId{12345, 1}};  // cleared by MarkHeap
  out.marked = marker.MarkHeap(g.heap(), epoch, stamp, garbage);
  out.garbage.assign(garbage.begin(), garbage.end());
  return out;
}

TEST(Marker, MarkHeapMarksWhatHandlesReachAndListsTheRest) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a});
  NodeId c = AddTestNode(g, "c").id();
  a.Reset();
  FullMark m = MarkHeap(g, 7);
  EXPECT_EQ(m.marked, 2);
  EXPECT_EQ(m.garbage, std::vector<NodeId>{c});
}

TEST(Marker, MarkHeapStampsExactlyTheMarkedSlots) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a});
  NodeId c = AddTestNode(g, "c").id();
  MarkHeap(g, 7, /*stamp=*/true);
  ReaderLock l(g.heap().mu());
  EXPECT_EQ(g.heap().slot(a.id().index).mark_epoch, 7u);
  EXPECT_EQ(g.heap().slot(b.id().index).mark_epoch, 7u);
  EXPECT_NE(g.heap().slot(c.index).mark_epoch, 7u);
  EXPECT_TRUE(g.heap().VerifyMarkingForTesting(7, /*young_only=*/false).ok());
}

TEST(Marker, MarkHeapWithoutStampWritesNoSlot) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  MarkHeap(g, 7, /*stamp=*/false);
  ReaderLock l(g.heap().mu());
  EXPECT_NE(g.heap().slot(a.id().index).mark_epoch, 7u);
}

TEST(Marker, MarkHeapCountsSharedInputsOnce) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a, a});
  NodeHandle c = AddTestNode(g, "c", {a, b});
  EXPECT_EQ(MarkHeap(g, 1).marked, 3);
}

TEST(Marker, MarkHeapTerminatesOnCycles) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  {
    NodeHandle b = AddTestNode(g, "b", {a});
    ASSERT_TRUE(g.AddControlEdge(b, a).ok());
  }
  FullMark m = MarkHeap(g, 1);
  EXPECT_EQ(m.marked, 2);
  EXPECT_TRUE(m.garbage.empty());
}

// The pass runs from the highest slot down; an input in a higher slot than
// its reader is reached only after the pass went by it.
TEST(Marker, MarkHeapKeepsAnInputInAHigherSlotThanItsReader) {
  Graph g;
  { NodeHandle gone = AddTestNode(g, "gone"); }
  NodeHandle input = AddTestNode(g, "input");
  EXPECT_EQ(g.Collect().swept, 1);  // frees the slot below "input"
  NodeHandle reader = AddTestNode(g, "reader", {input});
  ASSERT_LT(reader.id().index, input.id().index);
  NodeId garbage = AddTestNode(g, "garbage").id();
  const NodeId input_id = input.id();
  input.Reset();
  FullMark m = MarkHeap(g, 3, /*stamp=*/true);
  EXPECT_EQ(m.marked, 2);
  EXPECT_EQ(m.garbage, std::vector<NodeId>{garbage});
  ReaderLock l(g.heap().mu());
  EXPECT_EQ(g.heap().slot(input_id.index).mark_epoch, 3u);
}

TEST(Marker, MarkHeapKeepsAControlInputMadeAfterItsReader) {
  Graph g;
  NodeHandle reader = AddTestNode(g, "reader");
  {
    NodeHandle later = AddTestNode(g, "later");
    ASSERT_TRUE(g.AddControlEdge(later, reader).ok());  // reader reads it
  }
  NodeId garbage = AddTestNode(g, "garbage").id();
  FullMark m = MarkHeap(g, 1);
  EXPECT_EQ(m.marked, 2);
  EXPECT_EQ(m.garbage, std::vector<NodeId>{garbage});
}

TEST(Marker, MarkHeapTakesPinnedSlotsAsRoots) {
  Graph g;
  NodeId input, pinned;
  {
    NodeHandle in = AddTestNode(g, "input");
    input = in.id();
    pinned = AddTestNode(g, "pinned", {in}).id();
  }
  {
    gc::PinScope pin = g.PinForTesting({pinned}).value();
    FullMark m = MarkHeap(g, 1);
    EXPECT_EQ(m.marked, 2);
    EXPECT_TRUE(m.garbage.empty());
  }
  FullMark m = MarkHeap(g, 2);
  EXPECT_EQ(m.marked, 0);
  EXPECT_EQ(m.garbage, (std::vector<NodeId>{input, pinned}));
}

// Chains of three nodes over more slots than one word of mark bits holds;
// every other chain held. Exactly the others are listed, in slot order.
TEST(Marker, MarkHeapListsExactlyTheUnreachableSlotsInSlotOrder) {
  Graph g;
  std::vector<NodeHandle> held;
  std::vector<NodeId> expected;
  for (int chain = 0; chain < 100; ++chain) {
    std::vector<NodeId> ids;
    NodeHandle tail = AddTestNode(g, "n");
    ids.push_back(tail.id());
    for (int i = 1; i < 3; ++i) {
      tail = AddTestNode(g, "n", {tail});
      ids.push_back(tail.id());
    }
    if (chain % 2 == 0) {
      held.push_back(std::move(tail));
    } else {
      expected.insert(expected.end(), ids.begin(), ids.end());
    }
  }
  FullMark m = MarkHeap(g, 1);
  EXPECT_EQ(m.marked, 150);
  EXPECT_EQ(m.garbage, expected);
}

// Lone nodes over four words of mark bits, held in a pattern that puts
// roots and garbage at a word's first and last bits and leaves runs of
// marked slots across word boundaries: the pass finds every unmarked slot
// however the marked ones around it fall.
TEST(Marker, MarkHeapFindsEveryUnmarkedSlotWhereverItsBitFalls) {
  Graph g;
  std::vector<NodeHandle> held;
  std::vector<NodeId> expected;
  for (int i = 0; i < 256; ++i) {
    NodeHandle n = AddTestNode(g, "n");
    const bool keep =
        i % 64 == 0 || i % 64 == 63 || (i >= 100 && i < 200) || i % 7 == 3;
    if (keep) {
      held.push_back(std::move(n));
    } else {
      expected.push_back(n.id());
    }
  }
  FullMark m = MarkHeap(g, 1);
  EXPECT_EQ(m.marked, static_cast<int64_t>(held.size()));
  EXPECT_EQ(m.garbage, expected);
}

// One node reading five chains of three: the trace follows one input at a
// time and keeps the others waiting, and marks all of them.
TEST(Marker, MarkHeapMarksEveryInputOfANodeWithMany) {
  Graph g;
  std::vector<NodeHandle> tails;
  for (int chain = 0; chain < 5; ++chain) {
    NodeHandle tail = AddTestNode(g, "c");
    for (int i = 1; i < 3; ++i) tail = AddTestNode(g, "c", {tail});
    tails.push_back(std::move(tail));
  }
  NodeHandle reader = AddTestNode(
      g, "reader", {tails[0], tails[1], tails[2], tails[3], tails[4]});
  NodeId garbage = AddTestNode(g, "garbage").id();
  tails.clear();
  FullMark m = MarkHeap(g, 1);
  EXPECT_EQ(m.marked, 16);
  EXPECT_EQ(m.garbage, std::vector<NodeId>{garbage});
}

TEST(Marker, MarkYoungStopsAtOldSlots) {
  Graph g;
  NodeHandle old_input = AddTestNode(g, "old");
  {
    WriterLock l(g.heap().mu());
    g.heap().AgeSurvivors(1);  // "old" is old now
  }
  NodeHandle young_input = AddTestNode(g, "young_input");
  NodeHandle reader = AddTestNode(g, "reader", {old_input, young_input});
  gc::Marker marker;
  WriterLock l(g.heap().mu());
  const uint32_t root = reader.id().index;
  EXPECT_EQ(marker.MarkYoung(g.heap(), {root}, 5), 2);
  EXPECT_EQ(g.heap().slot(young_input.id().index).mark_epoch, 5u);
  EXPECT_NE(g.heap().slot(old_input.id().index).mark_epoch, 5u);
}

TEST(Marker, MarkYoungMarksSharedInputsOnce) {
  Graph g;
  NodeHandle a = AddTestNode(g, "a");
  NodeHandle b = AddTestNode(g, "b", {a, a});
  NodeHandle c = AddTestNode(g, "c", {a, b});
  gc::Marker marker;
  WriterLock l(g.heap().mu());
  const uint32_t root = c.id().index;
  EXPECT_EQ(marker.MarkYoung(g.heap(), {root, root}, 1), 3);
}

}  // namespace
}  // namespace graphgc
