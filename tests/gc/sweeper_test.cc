#include "gc/sweeper.h"

#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "tests/gc/test_graph.h"

namespace graphgc {
namespace {

using testing::AddTestNode;
using testing::Probe;

TEST(Sweeper, FindYoungGarbageListsTheUnmarkedLiveYoungSlotsOnly) {
  Graph g;
  NodeHandle old_node = AddTestNode(g, "old");
  {
    WriterLock l(g.heap().mu());
    g.heap().AgeSurvivors(1);
  }
  NodeHandle marked = AddTestNode(g, "marked");
  NodeHandle unmarked = AddTestNode(g, "unmarked");
  WriterLock l(g.heap().mu());
  g.heap().slot(marked.id().index).mark_epoch = 5;
  gc::NodeIdList garbage;
  gc::FindYoungGarbage(g.heap(), 5, garbage);
  EXPECT_EQ(std::vector<NodeId>(garbage.begin(), garbage.end()),
            std::vector<NodeId>{unmarked.id()});
}

TEST(Sweeper, SweepDestroysObjectsAndChangesGenerations) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  int destroyed = 0;
  NodeId id;
  {
    WriterLock l(heap->mu());
    NodeHandle h =
        heap->Allocate(std::make_unique<Probe>(&destroyed), {}).value();
    id = h.id();
  }
  WriterLock l(heap->mu());
  gc::Sweep(*heap, {id}, /*keep=*/false, nullptr);
  EXPECT_EQ(destroyed, 1);
  EXPECT_FALSE(heap->IsLive(id));
  EXPECT_NE(heap->IdOf(id.index).generation, id.generation);
  EXPECT_EQ(heap->live_count(), 0);
}

TEST(Sweeper, KeepSetsObjectsAsideInsteadOfDestroyingThem) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  int destroyed = 0;
  NodeId id;
  {
    WriterLock l(heap->mu());
    id = heap->Allocate(std::make_unique<Probe>(&destroyed), {}).value().id();
  }
  std::vector<std::unique_ptr<gc::Object>> kept;
  {
    WriterLock l(heap->mu());
    gc::Sweep(*heap, {id}, /*keep=*/true, &kept);
  }
  EXPECT_EQ(destroyed, 0);
  ASSERT_EQ(kept.size(), 1u);
  kept.clear();
  EXPECT_EQ(destroyed, 1);
}

TEST(Sweeper, SweepLazilyHandsBackPromptObjectsAndDefersTheRest) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  int destroyed = 0;
  std::vector<NodeId> garbage;
  {
    WriterLock l(heap->mu());
    for (bool prompt : {false, true, false}) {
      garbage.push_back(
          heap->Allocate(std::make_unique<Probe>(&destroyed, prompt), {})
              .value()
              .id());
    }
  }
  std::vector<std::unique_ptr<gc::Object>> prompt;
  {
    WriterLock l(heap->mu());
    gc::SweepLazily(*heap, garbage, prompt);
    for (NodeId id : garbage) EXPECT_FALSE(heap->IsLive(id));
    EXPECT_EQ(heap->live_count(), 0);
  }
  EXPECT_EQ(destroyed, 0);
  EXPECT_EQ(prompt.size(), 1u);
  EXPECT_EQ(heap->unreclaimed_count(), 2u);
  prompt.clear();
  EXPECT_EQ(destroyed, 1);
  gc::ObjectList rest;
  {
    WriterLock l(heap->mu());
    heap->TakeAllUnreclaimed(rest);
  }
  rest.clear();
  EXPECT_EQ(destroyed, 3);
}

}  // namespace
}  // namespace graphgc
