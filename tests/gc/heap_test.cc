#include "gc/heap.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "absl/strings/match.h"
#include "absl/types/span.h"
#include "gc/handle.h"
#include "gtest/gtest.h"
#include "tests/gc/test_graph.h"
#include "util/huge_pages.h"

namespace graphgc {
namespace {

// When non-zero, array allocations of at least this many bytes fail with
// std::bad_alloc, as on a system out of memory (see operator new[] below).
std::atomic<size_t> fail_array_new_from{0};
// The same for the single-object forms (std::vector's buffers).
std::atomic<size_t> fail_new_from{0};

}  // namespace
}  // namespace graphgc

// The replaceable array and single-object forms, so that a test can make
// a chunk of slots or a large buffer fail to allocate. Everything else goes
// to malloc and free as usual.
void* operator new[](std::size_t size) {
  const size_t from = graphgc::fail_array_new_from.load();
  if (from != 0 && size >= from) throw std::bad_alloc();
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void* operator new(std::size_t size) {
  const size_t from = graphgc::fail_new_from.load();
  if (from != 0 && size >= from) throw std::bad_alloc();
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t) noexcept {
  std::free(memory);
}

namespace graphgc {
namespace {

using testing::Probe;

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
  NodeId first =
      heap->Allocate(std::make_unique<gc::Object>(), {}).value().id();
  heap->Free(first.index, false);
  NodeHandle second =
      heap->Allocate(std::make_unique<gc::Object>(), {}).value();
  EXPECT_EQ(second.id().index, first.index);
  EXPECT_NE(second.id().generation, first.generation);
  EXPECT_FALSE(heap->IsLive(first));
  EXPECT_EQ(heap->num_slots(), 1u);
}

TEST(Heap, ReservingFreeSlotsLeavesTheFreeListAsItWas) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeId a = heap->Allocate(std::make_unique<gc::Object>(), {}).value().id();
  NodeId b = heap->Allocate(std::make_unique<gc::Object>(), {}).value().id();
  heap->Free(a.index, false);
  heap->ReserveFreeSlots(1000);
  heap->Free(b.index, false);
  EXPECT_EQ(heap->free_list_size(), 2u);
  // The last freed slot is reused first, as without the reservation.
  NodeHandle next = heap->Allocate(std::make_unique<gc::Object>(), {}).value();
  EXPECT_EQ(next.id().index, b.index);
  EXPECT_EQ(heap->num_slots(), 2u);
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

// A big heap's chunks past the first kChunksAlone share blocks that start
// on a huge page, one chunk after another.
TEST(Heap, ChunksPastTheFirstFewAreCarvedFromHugePageBlocks) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  const uint32_t first_carved = gc::Heap::kChunksAlone * gc::Heap::kChunkSize;
  std::vector<NodeHandle> held;
  for (uint32_t i = 0; i < first_carved + 2 * gc::Heap::kChunkSize; ++i) {
    held.push_back(heap->Allocate(std::make_unique<gc::Object>(), {}).value());
  }
  const gc::Slot* block = &heap->slot(first_carved);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % kHugePageBytes, 0u);
  EXPECT_EQ(&heap->slot(first_carved + gc::Heap::kChunkSize),
            block + gc::Heap::kChunkSize);
  EXPECT_TRUE(heap->VerifyForTesting().ok())
      << heap->VerifyForTesting().message();
}

// Invariant 1 holds when a new chunk cannot be had: the slot is not
// counted, and the next allocation takes it once memory is back.
TEST(Heap, AChunkThatCannotBeAllocatedLeavesTheHeapWhole) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  std::vector<NodeHandle> held;
  for (uint32_t i = 0; i < gc::Heap::kChunkSize; ++i) {
    held.push_back(heap->Allocate(std::make_unique<gc::Object>(), {}).value());
  }
  fail_new_from = sizeof(gc::Slot) * gc::Heap::kChunkSize;
  EXPECT_THROW((void)heap->Allocate(std::make_unique<gc::Object>(), {}),
               std::bad_alloc);
  fail_new_from = 0;
  EXPECT_EQ(heap->num_slots(), gc::Heap::kChunkSize);
  EXPECT_EQ(heap->live_count(), int64_t{gc::Heap::kChunkSize});
  EXPECT_TRUE(heap->VerifyForTesting().ok())
      << heap->VerifyForTesting().message();
  NodeHandle next = heap->Allocate(std::make_unique<gc::Object>(), {}).value();
  EXPECT_EQ(next.id().index, gc::Heap::kChunkSize);
  EXPECT_TRUE(heap->VerifyForTesting().ok())
      << heap->VerifyForTesting().message();
}

// Allocate's strong guarantee: when the list of young nodes cannot grow,
// nothing was taken, counted or placed.
TEST(Heap, AYoungListThatCannotGrowLeavesTheHeapWhole) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  std::vector<NodeHandle> held;
  // 64 young entries fill the list's first capacity; a freed slot waits.
  for (int i = 0; i < 64; ++i) {
    held.push_back(heap->Allocate(std::make_unique<gc::Object>(), {}).value());
  }
  const uint32_t freed = held.back().id().index;
  held.pop_back();
  heap->Free(freed, false);
  ASSERT_EQ(heap->young().size(), 64u);  // the freed one is still listed
  // Doubling the list takes 128 entries.
  fail_new_from = 128 * sizeof(gc::YoungEntry);
  EXPECT_THROW((void)heap->Allocate(std::make_unique<gc::Object>(), {}),
               std::bad_alloc);
  fail_new_from = 0;
  EXPECT_EQ(heap->live_count(), 63);
  EXPECT_EQ(heap->free_list_size(), 1u);
  EXPECT_EQ(heap->young().size(), 64u);
  EXPECT_TRUE(heap->VerifyForTesting().ok())
      << heap->VerifyForTesting().message();
  NodeHandle next = heap->Allocate(std::make_unique<gc::Object>(), {}).value();
  EXPECT_EQ(next.id().index, freed);
  EXPECT_TRUE(heap->VerifyForTesting().ok())
      << heap->VerifyForTesting().message();
}

// The same when a node's many edges cannot have their buffer.
TEST(Heap, AnEdgeListThatCannotBeAllocatedLeavesTheHeapWhole) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle input = heap->Allocate(std::make_unique<gc::Object>(), {}).value();
  const std::vector<uint32_t> edges(1000, input.id().index);
  fail_array_new_from = edges.size() * sizeof(uint32_t);  // EdgeList's
  EXPECT_THROW((void)heap->Allocate(std::make_unique<gc::Object>(), edges),
               std::bad_alloc);
  fail_array_new_from = 0;
  EXPECT_EQ(heap->live_count(), 1);
  EXPECT_EQ(heap->num_slots(), 1u);
  EXPECT_EQ(heap->young().size(), 1u);
  EXPECT_TRUE(heap->VerifyForTesting().ok())
      << heap->VerifyForTesting().message();
  NodeHandle next =
      heap->Allocate(std::make_unique<gc::Object>(), edges).value();
  EXPECT_EQ(heap->edges(next.id().index).size(), 1000u);
}

TEST(Heap, DestroysPromptlyIsReadFromEachObjectItsSlotHolds) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  int destroyed = 0;
  WriterLock l(heap->mu());
  NodeId a = heap->Allocate(std::make_unique<Probe>(&destroyed, true), {})
                 .value()
                 .id();
  EXPECT_TRUE(heap->DestroysPromptly(a.index));
  heap->Free(a.index, /*keep=*/false);
  NodeId b = heap->Allocate(std::make_unique<Probe>(&destroyed, false), {})
                 .value()
                 .id();
  ASSERT_EQ(b.index, a.index);  // the same slot, reused
  EXPECT_FALSE(heap->DestroysPromptly(b.index));
}

TEST(Heap, DeferredObjectsLiveUntilTakenNewestFirst) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  int destroyed = 0;
  WriterLock l(heap->mu());
  for (int i = 0; i < 3; ++i) {
    heap->DeferDestruction(std::make_unique<Probe>(&destroyed, false));
  }
  gc::Object* newest = nullptr;
  {
    auto last = std::make_unique<Probe>(&destroyed, false);
    newest = last.get();
    heap->DeferDestruction(std::move(last));
  }
  EXPECT_EQ(heap->unreclaimed_count(), 4u);
  EXPECT_EQ(destroyed, 0);
  std::unique_ptr<gc::Object> out[1];
  EXPECT_EQ(heap->TakeUnreclaimed(absl::MakeSpan(out)), 1u);
  EXPECT_EQ(out[0].get(), newest);
  EXPECT_EQ(heap->unreclaimed_count(), 3u);
  out[0].reset();
  EXPECT_EQ(destroyed, 1);
  gc::ObjectList rest;
  heap->TakeAllUnreclaimed(rest);
  EXPECT_EQ(rest.size(), 3u);
  EXPECT_EQ(heap->unreclaimed_count(), 0u);
  EXPECT_EQ(heap->TakeUnreclaimed(absl::MakeSpan(out)), 0u);
  rest.clear();
  EXPECT_EQ(destroyed, 4);
}

TEST(Heap, OrphaningDestroysTheDeferredObjects) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  int destroyed = 0;
  WriterLock l(heap->mu());
  heap->DeferDestruction(std::make_unique<Probe>(&destroyed, false));
  heap->Orphan();
  EXPECT_EQ(destroyed, 1);
  EXPECT_EQ(heap->unreclaimed_count(), 0u);
}

TEST(Heap, DefaultNodeIdIsNeverLive) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle h = heap->Allocate(std::make_unique<gc::Object>(), {}).value();
  EXPECT_FALSE(heap->IsLive(NodeId()));
}

// The verifier (Heap::VerifyForTesting): a healthy heap passes, and each
// numbered invariant of gc/heap.h, broken on purpose, is named.

NodeHandle NewNode(gc::Heap& heap, absl::Span<const uint32_t> edges = {})
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(heap.mu()) {
  return heap.Allocate(std::make_unique<gc::Object>(), edges).value();
}

TEST(HeapVerifier, AHealthyHeapPasses) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle a = NewNode(*heap);
  NodeHandle b = NewNode(*heap, {a.id().index});
  NodeId dead = NewNode(*heap, {b.id().index}).id();
  heap->Free(dead.index, false);
  heap->AgeSurvivors(1);  // a and b old
  NodeHandle c = NewNode(*heap, {b.id().index});
  heap->AddEdge(a.id().index, c.id().index);  // old reads young: remembered
  EXPECT_TRUE(heap->VerifyForTesting().ok())
      << heap->VerifyForTesting().message();
}

TEST(HeapVerifier, NamesAnEdgeToAFreeSlot) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle a = NewNode(*heap);
  NodeId dead = NewNode(*heap).id();
  heap->Free(dead.index, false);
  heap->slot(a.id().index).edges.push_back(dead.index);
  absl::Status s = heap->VerifyForTesting();
  EXPECT_TRUE(absl::StrContains(s.message(), "invariant 2")) << s.message();
}

TEST(HeapVerifier, NamesALiveSlotOnTheFreeList) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle a = NewNode(*heap);
  NodeId dead = NewNode(*heap).id();
  heap->Free(dead.index, false);
  heap->FreeListForTesting() = {a.id().index};
  absl::Status s = heap->VerifyForTesting();
  EXPECT_TRUE(absl::StrContains(s.message(), "invariant 3")) << s.message();
}

TEST(HeapVerifier, NamesAYoungNodeMissingFromTheYoungList) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle a = NewNode(*heap);
  heap->YoungListForTesting().clear();
  absl::Status s = heap->VerifyForTesting();
  EXPECT_TRUE(absl::StrContains(s.message(), "invariant 4")) << s.message();
}

TEST(HeapVerifier, NamesAnOldNodeReadingAYoungOneUnremembered) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle old = NewNode(*heap);
  heap->AgeSurvivors(1);
  NodeHandle young = NewNode(*heap);
  heap->slot(old.id().index).edges.push_back(young.id().index);  // no AddEdge
  absl::Status s = heap->VerifyForTesting();
  EXPECT_TRUE(absl::StrContains(s.message(), "not in remembered()"))
      << s.message();
}

TEST(HeapVerifier, MarkingNamesAnUnmarkedInputOfAMarkedSlot) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  const NodeId a = NewNode(*heap).id();  // not a root
  NodeHandle b = NewNode(*heap, {a.index});
  heap->slot(b.id().index).mark_epoch = 3;
  heap->slot(a.index).mark_epoch = 3;
  EXPECT_TRUE(heap->VerifyMarkingForTesting(3, /*young_only=*/false).ok());
  heap->slot(a.index).mark_epoch = 2;
  absl::Status s = heap->VerifyMarkingForTesting(3, /*young_only=*/false);
  EXPECT_TRUE(absl::StrContains(s.message(), "which is not marked"))
      << s.message();
}

TEST(Heap, AllocatingLeavesTheStructureVersionAlone) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle a = NewNode(*heap);
  const int64_t before = heap->structure_version();
  NodeHandle b = NewNode(*heap);
  EXPECT_EQ(heap->structure_version(), before);
}

TEST(Heap, FreeingASlotChangesTheStructureVersion) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  const NodeId id = NewNode(*heap).id();
  const int64_t before = heap->structure_version();
  heap->Free(id.index, /*keep=*/false);
  EXPECT_NE(heap->structure_version(), before);
}

TEST(Heap, AddingAnEdgeChangesTheStructureVersion) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle a = NewNode(*heap);
  NodeHandle b = NewNode(*heap);
  const int64_t before = heap->structure_version();
  heap->AddEdge(b.id().index, a.id().index);
  EXPECT_NE(heap->structure_version(), before);
}

TEST(Heap, PromotingANodeRemembersTheYoungerNodeItReads) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle reader = NewNode(*heap);
  heap->AgeSurvivors(2);  // reader survived 1 of 2
  NodeHandle input = NewNode(*heap);
  heap->AddEdge(reader.id().index, input.id().index);  // young reads young
  heap->AgeSurvivors(2);  // reader old, input still young
  ASSERT_FALSE(heap->IsYoung(reader.id()));
  ASSERT_TRUE(heap->IsYoung(input.id()));
  ASSERT_EQ(heap->remembered().size(), 1u);
  EXPECT_EQ(heap->remembered()[0], input.id());
  EXPECT_TRUE(heap->VerifyForTesting().ok())
      << heap->VerifyForTesting().message();
}

TEST(Heap, ANodeIsPromotedAfterSurvivingPromoteAfterCollections) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle early = NewNode(*heap);
  heap->AgeSurvivors(3);
  NodeHandle late = NewNode(*heap);
  EXPECT_EQ(heap->AgeSurvivors(3), 0);  // early 2 of 3, late 1 of 3
  EXPECT_EQ(heap->AgeSurvivors(3), 1);  // early 3 of 3
  EXPECT_FALSE(heap->IsYoung(early.id()));
  EXPECT_TRUE(heap->IsYoung(late.id()));
  EXPECT_EQ(heap->AgeSurvivors(3), 1);
  EXPECT_FALSE(heap->IsYoung(late.id()));
  EXPECT_TRUE(heap->young().empty());
}

TEST(Heap, AgingCountsCollectionsSurvivedUnderAChangedPromoteAfter) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle a = NewNode(*heap);
  heap->AgeSurvivors(5);
  heap->AgeSurvivors(5);
  EXPECT_TRUE(heap->IsYoung(a.id()));
  EXPECT_EQ(heap->AgeSurvivors(3), 1);  // survived 3 by now
  EXPECT_FALSE(heap->IsYoung(a.id()));
}

TEST(Heap, PromoteAfterZeroPromotesEveryNodeAtTheNextCollection) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle a = NewNode(*heap);
  NodeHandle b = NewNode(*heap);
  EXPECT_EQ(heap->AgeSurvivors(0), 2);
  EXPECT_FALSE(heap->IsYoung(a.id()));
  EXPECT_FALSE(heap->IsYoung(b.id()));
}

TEST(Heap, PromoteAfterAboveTheMaximumIsClamped) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle a = NewNode(*heap);
  for (int i = 1; i < gc::Heap::kMaxPromoteAfter; ++i) {
    ASSERT_EQ(heap->AgeSurvivors(1000), 0) << i;
  }
  EXPECT_EQ(heap->AgeSurvivors(1000), 1);
  EXPECT_FALSE(heap->IsYoung(a.id()));
}

TEST(Heap, FreedYoungNodesLeaveTheYoungListWhenTheirAgeComes) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeId freed;
  {
    NodeHandle gone = NewNode(*heap);
    freed = gone.id();
  }
  NodeHandle kept = NewNode(*heap);
  heap->Free(freed.index, false);
  heap->AgeSurvivors(2);
  EXPECT_EQ(heap->young().size(), 2u);  // the stale entry waits its turn
  EXPECT_EQ(heap->AgeSurvivors(2), 1);  // only the live node counts
  EXPECT_TRUE(heap->young().empty());
  EXPECT_TRUE(heap->VerifyForTesting().ok())
      << heap->VerifyForTesting().message();
}

TEST(Heap, SweptYoungEntriesLeaveTheYoungListAtOnce) {
  auto heap = std::make_shared<gc::Heap>(nullptr);
  WriterLock l(heap->mu());
  NodeHandle kept = NewNode(*heap);
  NodeId freed;
  {
    NodeHandle gone = NewNode(*heap);
    freed = gone.id();
  }
  heap->Free(freed.index, false);
  EXPECT_EQ(heap->AgeSurvivors(2, {freed}), 0);
  ASSERT_EQ(heap->young().size(), 1u);
  EXPECT_EQ(heap->young()[0].id, kept.id());
  EXPECT_TRUE(heap->VerifyForTesting().ok())
      << heap->VerifyForTesting().message();
}

}  // namespace
}  // namespace graphgc
