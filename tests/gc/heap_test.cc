#include "gc/heap.h"

#include "gc/handle.h"
#include "gtest/gtest.h"

namespace graphgc {
namespace {

TEST(Heap, AllocateReturnsALiveHandle) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle h = heap->Allocate(std::make_unique<gc::Object>(), {}).value();
  EXPECT_TRUE(heap->IsLive(h.id()));
  EXPECT_EQ(heap->live_count(), 1);
  EXPECT_EQ(heap->strong_count(h.id().index), 1);
}

TEST(Heap, FreedSlotsAreReusedWithANewGeneration) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeId first = heap->Allocate(std::make_unique<gc::Object>(), {}).value().id();
  heap->Free(first.index, false);
  NodeHandle second = heap->Allocate(std::make_unique<gc::Object>(), {}).value();
  EXPECT_EQ(second.id().index, first.index);
  EXPECT_NE(second.id().generation, first.generation);
  EXPECT_FALSE(heap->IsLive(first));
  EXPECT_EQ(heap->num_slots(), 1u);
}

TEST(Heap, SlotsDoNotMoveAsTheHeapGrows) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle first = heap->Allocate(std::make_unique<gc::Object>(), {}).value();
  const gc::Slot* before = &heap->slot(first.id().index);
  std::vector<NodeHandle> more;
  for (uint32_t i = 0; i < 3 * gc::Heap::kChunkSize; ++i) {
    more.push_back(heap->Allocate(std::make_unique<gc::Object>(), {}).value());
  }
  EXPECT_EQ(&heap->slot(first.id().index), before);
}

TEST(Heap, DefaultNodeIdIsNeverLive) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle h = heap->Allocate(std::make_unique<gc::Object>(), {}).value();
  EXPECT_FALSE(heap->IsLive(NodeId()));
}

}  // namespace
}  // namespace graphgc
