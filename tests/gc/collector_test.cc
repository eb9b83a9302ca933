#include "gc/collector.h"

#include <pthread.h>

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "gc/handle.h"
#include "gtest/gtest.h"
#include "runtime/graph.h"
#include "tests/gc/test_graph.h"

namespace graphgc {
namespace {

using testing::AddTestNode;

// Every collection of these tests verifies the heap between its phases
// (gc/heap.h's invariants, and marking after the mark phase).
class CollectorTest : public ::testing::Test {
 protected:
  CollectorTest() { g_.heap().SetVerifyCollectionsForTesting(true); }
  Graph g_;
};

TEST(CollectorDeathTest, AVerifiedCollectionOfABrokenHeapStops) {
  Graph g;
  g.heap().SetVerifyCollectionsForTesting(true);
  NodeHandle a = AddTestNode(g, "a");
  { NodeHandle gone = AddTestNode(g, "gone"); }
  g.Collect();  // frees "gone"'s slot
  {
    WriterLock l(g.heap().mu());
    g.heap().slot(a.id().index).edges.push_back(a.id().index + 1);
  }
  EXPECT_DEATH(g.Collect(),
               "heap verification failed before the collection: heap "
               "invariant 2 broken");
}

TEST_F(CollectorTest, KeepsNodeHeldByHandle) {
  NodeHandle a = AddTestNode(g_, "a");
  CollectStats s = g_.Collect();
  EXPECT_EQ(s.marked, 1);
  EXPECT_EQ(s.swept, 0);
  EXPECT_EQ(g_.num_nodes(), 1);
}

TEST_F(CollectorTest, SweepsUnreachableNode) {
  { NodeHandle a = AddTestNode(g_, "a"); }
  CollectStats s = g_.Collect();
  EXPECT_EQ(s.swept, 1);
  EXPECT_EQ(g_.num_nodes(), 0);
  EXPECT_FALSE(g_.FindNode("a").has_value());
}

TEST_F(CollectorTest, KeepsInputsOfAReachableNode) {
  NodeHandle b;
  {
    NodeHandle a = AddTestNode(g_, "a");
    b = AddTestNode(g_, "b", {a});
  }
  EXPECT_EQ(g_.Collect().swept, 0);
  EXPECT_EQ(g_.num_nodes(), 2);
}

TEST_F(CollectorTest, SweepsConsumersNoHandleReaches) {
  NodeHandle a = AddTestNode(g_, "a");
  { NodeHandle b = AddTestNode(g_, "b", {a}); }
  EXPECT_EQ(g_.Collect().swept, 1);
  EXPECT_TRUE(g_.FindNode("a").has_value());
  EXPECT_FALSE(g_.FindNode("b").has_value());
}

TEST_F(CollectorTest, KeepsNodesReachedThroughControlInputs) {
  NodeHandle b;
  {
    NodeHandle a = AddTestNode(g_, "a");
    b = AddTestNode(g_, "b", {}, {a});
  }
  EXPECT_EQ(g_.Collect().swept, 0);
  EXPECT_TRUE(g_.FindNode("a").has_value());
}

TEST_F(CollectorTest, CollectsGarbageCycles) {
  {
    NodeHandle a = AddTestNode(g_, "a");
    NodeHandle b = AddTestNode(g_, "b", {a});
    ASSERT_TRUE(g_.AddControlEdge(b, a).ok());  // a waits for b: a cycle
  }
  EXPECT_EQ(g_.Collect().swept, 2);
  EXPECT_EQ(g_.num_nodes(), 0);
}

TEST_F(CollectorTest, KeepsCyclesAHandleReaches) {
  NodeHandle a = AddTestNode(g_, "a");
  {
    NodeHandle b = AddTestNode(g_, "b", {a});
    ASSERT_TRUE(g_.AddControlEdge(b, a).ok());
  }
  EXPECT_EQ(g_.Collect().swept, 0);
}

// Runs `fn` on a thread whose stack is `stack_bytes`, and waits for it.
void RunOnStackOf(size_t stack_bytes, std::function<void()> fn) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack_bytes), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* f) -> void* {
                  (*static_cast<std::function<void()>*>(f))();
                  return nullptr;
                },
                &fn),
            0);
  pthread_attr_destroy(&attr);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
}

// A chain of 100,000 nodes, collected on a 512 KiB stack: marking or
// sweeping by recursion would need at least 16 bytes (a return address and
// a frame pointer) per link, 1.6 MB, and overflow it.
TEST_F(CollectorTest, MarksALongChainWithoutRecursion) {
  constexpr int kLength = 100000;
  NodeHandle tail = AddTestNode(g_, "n");
  for (int i = 1; i < kLength; ++i) tail = AddTestNode(g_, "n", {tail});
  RunOnStackOf(512 * 1024, [&] {
    CollectStats kept = g_.Collect();
    EXPECT_EQ(kept.marked, kLength);
    EXPECT_EQ(kept.swept, 0);
    tail.Reset();
    CollectStats swept = g_.Collect();
    EXPECT_EQ(swept.swept, kLength);
  });
  EXPECT_EQ(g_.num_nodes(), 0);
}

}  // namespace
}  // namespace graphgc

namespace graphgc {
namespace {

using testing::AddTestNode;

TEST(CollectorPolicy, MaybeCollectDoesNothingWhenNoRootWasDropped) {
  Graph g;
  g.set_gc_policy({.automatic = true, .min_new_nodes = 1});
  std::vector<NodeHandle> held;
  for (int i = 0; i < 100; ++i) held.push_back(AddTestNode(g, "n"));
  EXPECT_FALSE(g.collector().MaybeCollect().has_value());
  EXPECT_EQ(g.gc_stats().collections, 0);
}

TEST(CollectorPolicy, MaybeCollectCollectsOnceEnoughGarbageCouldExist) {
  Graph g;
  g.set_gc_policy(
      {.automatic = true, .growth_ratio = 1.0, .min_new_nodes = 10});
  for (int i = 0; i < 9; ++i) AddTestNode(g, "n");
  EXPECT_FALSE(g.collector().MaybeCollect().has_value());  // 9 < 10 new nodes
  AddTestNode(g, "n");
  std::optional<CollectStats> s = g.collector().MaybeCollect();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->swept, 10);
}

TEST(CollectorPolicy, ByDefaultAMinorCollectionComesEvery256NewNodes) {
  // Small enough that a dropped model's nodes are swept while still in
  // cache (gc/collector.h).
  Graph g;
  EXPECT_EQ(GcPolicy{}.min_new_nodes, 256);
  for (int i = 0; i < 255; ++i) AddTestNode(g, "n");
  // 255 < 256 new nodes.
  EXPECT_FALSE(g.collector().MaybeCollect().has_value());
  AddTestNode(g, "n");
  std::optional<CollectStats> s = g.collector().MaybeCollect();
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->minor);
  EXPECT_EQ(s->swept, 256);
}

TEST(CollectorPolicy, WithoutGenerationsTheThresholdGrowsWithTheLiveGraph) {
  Graph g;
  g.set_gc_policy({.automatic = true,
                   .growth_ratio = 1.0,
                   .min_new_nodes = 1,
                   .promote_after = 0});
  std::vector<NodeHandle> live;
  for (int i = 0; i < 50; ++i) live.push_back(AddTestNode(g, "live"));
  g.Collect();  // 50 live: the next automatic collection waits for 50 more
  for (int i = 0; i < 49; ++i) AddTestNode(g, "garbage");
  EXPECT_FALSE(g.collector().MaybeCollect().has_value());
  AddTestNode(g, "garbage");
  EXPECT_TRUE(g.collector().MaybeCollect().has_value());
}

// The generational policy of the CollectorPolicy tests below: a node is
// old after one collection, and an automatic collection needs 10 new nodes.
constexpr GcPolicy kPromoteAfterOne = {.automatic = true,
                                       .growth_ratio = 1.0,
                                       .min_new_nodes = 10,
                                       .promote_after = 1};

std::vector<NodeHandle> AddHeld(Graph& g, int n) {
  std::vector<NodeHandle> held;
  for (int i = 0; i < n; ++i) held.push_back(AddTestNode(g, "held"));
  return held;
}

void AddGarbage(Graph& g, int n) {
  for (int i = 0; i < n; ++i) AddTestNode(g, "garbage");
}

TEST(CollectorPolicy, MaybeCollectIsMinorUntilEnoughNodesWerePromoted) {
  Graph g;
  g.set_gc_policy(kPromoteAfterOne);
  std::vector<NodeHandle> held = AddHeld(g, 10);
  AddGarbage(g, 10);
  std::optional<CollectStats> first = g.collector().MaybeCollect();
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->minor);
  EXPECT_EQ(first->swept, 10);  // the held ten are promoted: 10 >= 10
  held.clear();
  AddGarbage(g, 10);
  std::optional<CollectStats> second = g.collector().MaybeCollect();
  ASSERT_TRUE(second.has_value());
  EXPECT_FALSE(second->minor);
  EXPECT_EQ(second->swept, 20);  // old garbage too
  EXPECT_EQ(g.gc_stats().minor_collections, 1);
  EXPECT_EQ(g.gc_stats().collections, 2);
}

// The promotion trigger alone: no root is dropped, so only the nodes
// promoted since the last full collection can make the next one full.
TEST(CollectorPolicy, EnoughPromotionsScheduleAFullCollection) {
  Graph g;
  g.set_gc_policy(kPromoteAfterOne);
  std::vector<NodeHandle> held = AddHeld(g, 10);
  AddGarbage(g, 10);
  // Promotes the held ten.
  ASSERT_TRUE(g.collector().MaybeCollect().value().minor);
  AddGarbage(g, 10);
  std::optional<CollectStats> s = g.collector().MaybeCollect();
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->minor);
  EXPECT_EQ(s->swept, 10);
  EXPECT_EQ(g.num_nodes(), 10);
}

TEST(CollectorPolicy, DroppingAnOldRootSchedulesAFullCollection) {
  Graph g;
  g.set_gc_policy(kPromoteAfterOne);
  std::vector<NodeHandle> held = AddHeld(g, 10);
  g.Collect();   // held: promoted; the full threshold is now 10
  held.clear();  // ten old roots go: old garbage
  AddGarbage(g, 9);
  EXPECT_FALSE(g.collector().MaybeCollect().has_value());  // 9 < 10 new nodes
  AddGarbage(g, 1);
  std::optional<CollectStats> s = g.collector().MaybeCollect();
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->minor);
  EXPECT_EQ(s->swept, 20);
  EXPECT_EQ(g.num_nodes(), 0);
}

TEST(CollectorPolicy, WithNoOldRootDroppedMaybeCollectStaysMinor) {
  Graph g;
  g.set_gc_policy(kPromoteAfterOne);
  std::vector<NodeHandle> held = AddHeld(g, 10);
  g.Collect();
  AddGarbage(g, 10);
  std::optional<CollectStats> s = g.collector().MaybeCollect();
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->minor);
  EXPECT_EQ(s->swept, 10);
}

// A drop on another thread may race a drop at home past the zero they make
// together (gc/root_count.h's CountDownRoot), so it counts as a last drop.
TEST(CollectorPolicy, AHandleDroppedOnAnotherThreadLetsMaybeCollectRun) {
  Graph g;
  g.set_gc_policy({.automatic = true, .min_new_nodes = 1});
  std::vector<NodeHandle> held = AddHeld(g, 10);
  std::thread([copy = held[0]]() mutable { copy.Reset(); }).join();
  std::optional<CollectStats> s = g.collector().MaybeCollect();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->swept, 0);
  // The collection, at home, lowered the flag.
  EXPECT_FALSE(g.heap().maybe_drop());
  EXPECT_FALSE(g.collector().MaybeCollect().has_value());
}

TEST(CollectorPolicy, AnOldHandleDroppedOnAnotherThreadSchedulesAFullOne) {
  Graph g;
  g.set_gc_policy(kPromoteAfterOne);
  std::vector<NodeHandle> held = AddHeld(g, 10);
  g.Collect();  // held: promoted; the full threshold is now 10
  std::thread([copy = held[0]]() mutable { copy.Reset(); }).join();
  EXPECT_TRUE(g.heap().maybe_old_drop());
  AddGarbage(g, 10);
  std::optional<CollectStats> s = g.collector().MaybeCollect();
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->minor);
  EXPECT_EQ(s->swept, 10);
  EXPECT_FALSE(g.heap().maybe_old_drop());
}

TEST(CollectorPolicy, ACollectionOnAnotherThreadLeavesTheMaybeDropFlagsUp) {
  Graph g;
  g.set_gc_policy(kPromoteAfterOne);
  std::vector<NodeHandle> held = AddHeld(g, 2);
  g.Collect();  // held: promoted
  std::thread([copy = held[0]]() mutable { copy.Reset(); }).join();
  std::thread([&g] { g.Collect(); }).join();
  EXPECT_TRUE(g.heap().maybe_drop());
  EXPECT_TRUE(g.heap().maybe_old_drop());
  g.Collect();
  EXPECT_FALSE(g.heap().maybe_drop());
  EXPECT_FALSE(g.heap().maybe_old_drop());
}

TEST(CollectorPolicy, AutomaticOffLeavesGarbageForExplicitCollect) {
  Graph g;
  g.set_gc_policy({.automatic = false, .min_new_nodes = 1});
  for (int i = 0; i < 10; ++i) AddTestNode(g, "n");
  EXPECT_FALSE(g.collector().MaybeCollect().has_value());
  EXPECT_EQ(g.num_nodes(), 10);
  EXPECT_EQ(g.Collect().swept, 10);
}

TEST(CollectorStats, AccumulateOverCollections) {
  Graph g;
  for (int i = 0; i < 3; ++i) AddTestNode(g, "n");
  g.Collect();
  NodeHandle keep = AddTestNode(g, "k");
  AddTestNode(g, "n");
  g.Collect();
  GcStats s = g.gc_stats();
  EXPECT_EQ(s.collections, 2);
  EXPECT_EQ(s.swept_total, 4);
  EXPECT_EQ(s.live_nodes, 1);
  EXPECT_EQ(s.peak_nodes, 3);
  EXPECT_GE(s.pause_ns_total, s.last_pause_ns);
}

TEST(CollectorListeners, SeeStartAndEndWithTheSweptIds) {
  Graph g;
  NodeId dead = AddTestNode(g, "a").id();
  std::vector<CollectEvent::Phase> phases;
  std::vector<NodeId> swept;
  gc::ListenerRegistration listening =
      g.collector().Listen([&](const CollectEvent& e) {
        phases.push_back(e.phase);
        if (e.phase == CollectEvent::Phase::kEnd) swept = e.swept;
      });
  g.Collect();
  listening.Reset();
  g.Collect();
  EXPECT_EQ(phases,
            (std::vector<CollectEvent::Phase>{CollectEvent::Phase::kStart,
                                              CollectEvent::Phase::kEnd}));
  EXPECT_EQ(swept, std::vector<NodeId>{dead});
}

TEST(CollectorListeners, CollectDuringCallbackIsDeferred) {
  Graph g;
  int nested_swept = -1;
  gc::ListenerRegistration listening =
      g.collector().Listen([&](const CollectEvent& e) {
        if (e.phase == CollectEvent::Phase::kEnd && nested_swept < 0) {
          nested_swept = static_cast<int>(g.Collect().swept);
        }
      });
  AddTestNode(g, "a");
  g.Collect();
  listening.Reset();
  EXPECT_EQ(nested_swept, 0);
  EXPECT_EQ(g.gc_stats().collections, 1);
  // The deferred request is honoured at the next safe point.
  AddTestNode(g, "b");
  ASSERT_TRUE(g.collector().MaybeCollect().has_value());
  EXPECT_EQ(g.gc_stats().collections, 2);
}

// Two threads inside listeners of one graph at once, finishing in the order
// that left a stale "inside a listener" marker when it was one variable for
// all threads: each thread must be able to collect afterwards, and a thread
// still inside a listener must still have its request deferred.
TEST(CollectorListeners, OverlappingListenersOnTwoThreadsLeaveNoStaleMarker) {
  Graph g;
  std::promise<void> a_inside, b_inside, release_a, release_b, a_done, a_again;
  std::shared_future<void> release_a_f = release_a.get_future().share();
  std::shared_future<void> release_b_f = release_b.get_future().share();
  std::atomic<int> starts{0};
  CollectStats nested_in_b{.swept = -1};
  gc::ListenerRegistration listening =
      g.collector().Listen([&](const CollectEvent& e) {
        if (e.phase != CollectEvent::Phase::kStart) return;
        const int n = starts.fetch_add(1);
        if (n == 0) {  // thread A
          a_inside.set_value();
          release_a_f.wait();
        } else if (n == 1) {  // thread B
          b_inside.set_value();
          release_b_f.wait();
          nested_in_b = g.Collect();  // still inside: must be deferred
        }
      });
  CollectStats a_second{.swept = -1};
  std::thread a([&] {
    g.Collect();
    a_done.set_value();
    a_again.get_future().wait();
    a_second = g.Collect();
  });
  a_inside.get_future().wait();
  std::thread b([&] { g.Collect(); });
  b_inside.get_future().wait();

  // A leaves its listener first, while B is still inside its own.
  release_a.set_value();
  a_done.get_future().wait();
  AddTestNode(g, "garbage_seen_by_b");
  const int64_t collections_before_b = g.gc_stats().collections;
  release_b.set_value();
  b.join();
  EXPECT_EQ(nested_in_b.swept, 0);
  EXPECT_EQ(nested_in_b.marked, 0);
  EXPECT_EQ(g.gc_stats().collections, collections_before_b + 1);
  EXPECT_FALSE(g.FindNode("garbage_seen_by_b").has_value());

  // Both threads collect for real once out of their listeners.
  AddTestNode(g, "garbage_for_a");
  a_again.set_value();
  a.join();
  EXPECT_EQ(a_second.swept, 1);
  AddTestNode(g, "garbage_for_main");
  std::thread c([&] { EXPECT_EQ(g.Collect().swept, 1); });
  c.join();
  AddTestNode(g, "garbage_for_this_thread");
  EXPECT_EQ(g.Collect().swept, 1);
  listening.Reset();
}

// The deferral is per collector: a listener of graph A may collect graph B,
// and B's listener asking A to collect (A's listener is still running on
// this thread) is deferred.
TEST(CollectorListeners, AListenerOfOneGraphCollectsAnotherGraphForReal) {
  Graph a;
  Graph b;
  CollectStats b_from_a{.swept = -1};
  CollectStats a_from_b{.swept = -1};
  gc::ListenerRegistration a_listening =
      a.collector().Listen([&](const CollectEvent& e) {
        if (e.phase == CollectEvent::Phase::kEnd && b_from_a.swept < 0) {
          AddTestNode(a, "a_garbage_during_listener");
          b_from_a = b.Collect();
        }
      });
  gc::ListenerRegistration b_listening =
      b.collector().Listen([&](const CollectEvent& e) {
        if (e.phase == CollectEvent::Phase::kEnd && a_from_b.swept < 0) {
          a_from_b = a.Collect();
        }
      });
  AddTestNode(b, "b_garbage");
  a.Collect();
  EXPECT_EQ(b_from_a.swept, 1);
  EXPECT_EQ(b.gc_stats().collections, 1);
  EXPECT_EQ(a_from_b.swept, 0);
  EXPECT_EQ(a.gc_stats().collections, 1);
  EXPECT_TRUE(a.FindNode("a_garbage_during_listener").has_value());
  a_listening.Reset();
  b_listening.Reset();
}

// A collector of its own (no graph) and the listener calls it has seen.
class ListenerRegistrationTest : public ::testing::Test {
 protected:
  gc::ListenerRegistration Count(int& calls) {
    return collector_->Listen([&calls](const CollectEvent&) { ++calls; });
  }
  std::shared_ptr<gc::Heap> heap_ = std::make_shared<gc::Heap>(nullptr);
  std::unique_ptr<gc::Collector> collector_ =
      std::make_unique<gc::Collector>(*heap_, nullptr);
};

TEST_F(ListenerRegistrationTest, KeepsItsListenerWhileItLives) {
  int calls = 0;
  gc::ListenerRegistration r = Count(calls);
  collector_->Collect();
  collector_->Collect();
  EXPECT_EQ(calls, 4);  // start and end of each
}

TEST_F(ListenerRegistrationTest, RemovesItsListenerWhenDestroyed) {
  int calls = 0;
  { gc::ListenerRegistration r = Count(calls); }
  collector_->Collect();
  EXPECT_EQ(calls, 0);
}

TEST_F(ListenerRegistrationTest, ResetRemovesItsListener) {
  int calls = 0;
  gc::ListenerRegistration r = Count(calls);
  r.Reset();
  collector_->Collect();
  EXPECT_EQ(calls, 0);
  r.Reset();  // empty: nothing to do
}

TEST_F(ListenerRegistrationTest, AMovedFromRegistrationRemovesNothing) {
  int calls = 0;
  gc::ListenerRegistration moved_to;
  {
    gc::ListenerRegistration r = Count(calls);
    moved_to = std::move(r);
  }
  collector_->Collect();
  EXPECT_EQ(calls, 2);
  moved_to.Reset();
  collector_->Collect();
  EXPECT_EQ(calls, 2);
}

TEST_F(ListenerRegistrationTest, MoveAssigningRemovesTheListenerItReplaced) {
  int replaced_calls = 0;
  int kept_calls = 0;
  gc::ListenerRegistration r = Count(replaced_calls);
  r = Count(kept_calls);
  collector_->Collect();
  EXPECT_EQ(replaced_calls, 0);
  EXPECT_EQ(kept_calls, 2);
}

TEST_F(ListenerRegistrationTest, MayBeResetAndDroppedAfterItsCollector) {
  int calls = 0;
  gc::ListenerRegistration reset_later = Count(calls);
  gc::ListenerRegistration dropped_later = Count(calls);
  collector_.reset();
  heap_.reset();
  reset_later.Reset();
  EXPECT_EQ(calls, 0);
}

TEST_F(ListenerRegistrationTest, AListenerMayRemoveItself) {
  int calls = 0;
  gc::ListenerRegistration r;
  r = collector_->Listen([&](const CollectEvent&) {
    ++calls;
    r.Reset();
  });
  collector_->Collect();
  EXPECT_EQ(calls, 1);  // the start only: gone before the end
}

TEST(CollectorDebug, SaveGarbageKeepsSweptNodesForInspection) {
  Graph g;
  g.set_gc_policy({.save_garbage = true});
  AddTestNode(g, "lost");
  EXPECT_EQ(g.Collect().swept, 1);
  EXPECT_EQ(g.num_nodes(), 0);
  EXPECT_FALSE(g.FindNode("lost").has_value());
  EXPECT_EQ(g.SavedGarbage(), std::vector<std::string>{"lost (Test)"});
  g.collector().ClearSaved();
  EXPECT_TRUE(g.SavedGarbage().empty());
}

// A node state whose destructor reads its graph from another thread and
// waits for it, as a swept node's resource may (a variable's state handing
// its buffer to a pool that looks at the graph): it records the graph's
// live nodes and whether the swept node's name is free again. Run while
// the collecting thread held the graph's lock, it would never return.
class GraphReadingResource : public NodeResource {
 public:
  GraphReadingResource(Graph& g, int64_t& live_seen, bool& name_free_seen)
      : g_(g), live_seen_(live_seen), name_free_seen_(name_free_seen) {}
  ~GraphReadingResource() override {
    std::thread reader([this] {
      live_seen_ = g_.num_nodes();  // takes the graph's lock, shared
      name_free_seen_ = !g_.FindNode("swept").has_value();
    });
    reader.join();
  }

 private:
  Graph& g_;
  int64_t& live_seen_;
  bool& name_free_seen_;
};

TEST_F(CollectorTest, SweptNodesAreDestroyedAfterTheGraphIsUnlocked) {
  int64_t live_seen = -1;
  bool name_free_seen = false;
  NodeHandle kept = AddTestNode(g_, "kept");
  NodeSpec spec{.op = "Test", .name = "swept"};
  spec.resource =
      std::make_shared<GraphReadingResource>(g_, live_seen, name_free_seen);
  ASSERT_TRUE(g_.AddNode(std::move(spec)).ok());
  EXPECT_EQ(g_.Collect().swept, 1);
  // Destroyed within Collect(), once the node was unlinked and the lock
  // released: the graph already showed the node gone.
  EXPECT_EQ(live_seen, 1);
  EXPECT_TRUE(name_free_seen);
}

// Lazy sweeping (collector.h): a collector of a bare heap whose objects
// record their destruction.
class LazySweepTest : public ::testing::Test {
 protected:
  LazySweepTest() { heap_->SetVerifyCollectionsForTesting(true); }
  // `n` objects whose handles are dropped at once: garbage.
  void AddGarbage(int n, bool prompt) {
    WriterLock l(heap_->mu());
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(
          heap_
              ->Allocate(std::make_unique<testing::Probe>(&destroyed_, prompt),
                         {})
              .ok());
    }
  }

  std::shared_ptr<gc::Heap> heap_ = std::make_shared<gc::Heap>(nullptr);
  gc::Collector collector_{*heap_, nullptr};
  int destroyed_ = 0;
};

TEST_F(LazySweepTest, SweptObjectsWaitUnlessTheyAskToBeDestroyedPromptly) {
  AddGarbage(1, /*prompt=*/true);
  AddGarbage(2, /*prompt=*/false);
  EXPECT_EQ(collector_.Collect().swept, 3);
  EXPECT_EQ(destroyed_, 1);
  EXPECT_EQ(heap_->unreclaimed_count(), 2u);
  {
    ReaderLock l(heap_->mu());
    EXPECT_EQ(heap_->live_count(), 0);
  }
}

TEST_F(LazySweepTest, ASafePointThatDoesNotCollectDestroysSomeWaitingObjects) {
  collector_.set_policy(GcPolicy{.automatic = false});
  constexpr int kMore = 8;
  AddGarbage(gc::Collector::kReclaimPerSafePoint + kMore, false);
  collector_.Collect();
  EXPECT_EQ(destroyed_, 0);
  EXPECT_FALSE(collector_.MaybeCollect().has_value());
  EXPECT_EQ(destroyed_, int{gc::Collector::kReclaimPerSafePoint});
  EXPECT_FALSE(collector_.MaybeCollect().has_value());
  EXPECT_EQ(destroyed_, int{gc::Collector::kReclaimPerSafePoint} + kMore);
  EXPECT_EQ(heap_->unreclaimed_count(), 0u);
}

TEST_F(LazySweepTest, TheNextCollectionDestroysWhatWasLeftWaiting) {
  AddGarbage(3, false);
  collector_.Collect();
  EXPECT_EQ(destroyed_, 0);
  EXPECT_EQ(collector_.Collect().swept, 0);
  EXPECT_EQ(destroyed_, 3);
  EXPECT_EQ(heap_->unreclaimed_count(), 0u);
}

TEST_F(LazySweepTest, SavedGarbageIsSetAsideWholeNotLeftWaiting) {
  collector_.set_policy(GcPolicy{.save_garbage = true});
  AddGarbage(2, false);
  EXPECT_EQ(collector_.Collect().swept, 2);
  EXPECT_EQ(collector_.saved_count(), 2u);
  EXPECT_EQ(heap_->unreclaimed_count(), 0u);
  collector_.ClearSaved();
  EXPECT_EQ(destroyed_, 2);
}

TEST_F(LazySweepTest, SavedGarbageIsOnlyTheSavingCollectionsOwn) {
  AddGarbage(3, false);
  collector_.Collect();  // not saving: the three wait
  collector_.set_policy(GcPolicy{.save_garbage = true});
  AddGarbage(1, false);
  EXPECT_EQ(collector_.Collect().swept, 1);
  EXPECT_EQ(collector_.saved_count(), 1u);
  EXPECT_EQ(destroyed_, 3);
}

// Old nodes: held through two collections (the default promote_after).
std::vector<NodeHandle> PromotedNodes(Graph& g, int n) {
  std::vector<NodeHandle> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back(AddTestNode(g, "old"));
  g.Collect();
  g.Collect();
  return nodes;
}

TEST(CollectorGenerations, MinorCollectionSweepsYoungGarbageAndMarksOnlyYoung) {
  Graph g;
  std::vector<NodeHandle> old = PromotedNodes(g, 5);
  NodeHandle young = AddTestNode(g, "young", {old[0]});
  for (int i = 0; i < 3; ++i) AddTestNode(g, "garbage", {old[1]});
  CollectStats s = g.collector().CollectYoung();
  EXPECT_TRUE(s.minor);
  EXPECT_EQ(s.swept, 3);
  EXPECT_EQ(s.marked, 1);  // `young`; its old input is not traced
  EXPECT_EQ(g.num_nodes(), 6);
}

TEST(CollectorGenerations, MinorCollectionLeavesOldGarbageForAFullOne) {
  Graph g;
  PromotedNodes(g, 4);  // dropped at once: old garbage
  EXPECT_EQ(g.collector().CollectYoung().swept, 0);
  EXPECT_EQ(g.num_nodes(), 4);
  EXPECT_EQ(g.Collect().swept, 4);
}

TEST(CollectorGenerations, NodesStayYoungUntilTheySurvivePromoteAfter) {
  Graph g;
  g.set_gc_policy({.promote_after = 3});
  std::optional<NodeHandle> a = AddTestNode(g, "a");
  g.collector().CollectYoung();
  g.Collect();  // full collections age survivors too: a has survived 2
  a.reset();
  EXPECT_EQ(g.collector().CollectYoung().swept, 1);  // still young: swept
  std::optional<NodeHandle> b = AddTestNode(g, "b");
  for (int i = 0; i < 3; ++i) g.collector().CollectYoung();
  b.reset();
  EXPECT_EQ(g.collector().CollectYoung().swept, 0);  // old now
  EXPECT_EQ(g.Collect().swept, 1);
}

TEST(CollectorGenerations, YoungInputsOfYoungRootsSurvive) {
  Graph g;
  NodeHandle consumer;
  {
    NodeHandle input = AddTestNode(g, "input");
    consumer = AddTestNode(g, "consumer", {input});
  }
  EXPECT_EQ(g.collector().CollectYoung().swept, 0);
  EXPECT_TRUE(g.FindNode("input").has_value());
}

TEST(CollectorGenerations, YoungNodeReadByAnOldOneThroughAControlEdgeSurvives) {
  Graph g;
  std::vector<NodeHandle> old = PromotedNodes(g, 1);
  {
    NodeHandle young = AddTestNode(g, "young");
    NodeHandle young_input = AddTestNode(g, "young_input");
    ASSERT_TRUE(g.AddControlEdge(young_input, young).ok());
    ASSERT_TRUE(g.AddControlEdge(young, old[0]).ok());
  }
  EXPECT_EQ(g.collector().CollectYoung().swept, 0);
  EXPECT_TRUE(g.FindNode("young").has_value());
  EXPECT_TRUE(g.FindNode("young_input").has_value());
  old.clear();
  EXPECT_EQ(g.Collect().swept, 3);
}

TEST(CollectorGenerations, PinnedYoungNodeSurvivesAMinorCollection) {
  Graph g;
  const NodeId id = AddTestNode(g, "pinned").id();
  {
    gc::PinScope pin = g.PinForTesting({id}).value();
    EXPECT_EQ(g.collector().CollectYoung().swept, 0);
  }
  EXPECT_EQ(g.collector().CollectYoung().swept, 1);
}

TEST(CollectorGenerations, AMinorCollectionThatSweepsChangesTheStructure) {
  Graph g;
  std::vector<NodeHandle> old = PromotedNodes(g, 3);
  AddTestNode(g, "garbage");
  int64_t before;
  {
    ReaderLock l(g.heap().mu());
    before = g.heap().structure_version();
  }
  EXPECT_EQ(g.collector().CollectYoung().swept, 1);
  ReaderLock l(g.heap().mu());
  EXPECT_NE(g.heap().structure_version(), before);
}

TEST(CollectorGenerations, ACollectionThatSweepsNothingLeavesTheStructure) {
  Graph g;
  std::vector<NodeHandle> old = PromotedNodes(g, 3);
  int64_t before;
  {
    ReaderLock l(g.heap().mu());
    before = g.heap().structure_version();
  }
  EXPECT_EQ(g.Collect().swept, 0);
  EXPECT_EQ(g.collector().CollectYoung().swept, 0);
  ReaderLock l(g.heap().mu());
  EXPECT_EQ(g.heap().structure_version(), before);
}

TEST(CollectorConcurrency, BuildersAndMinorCollectionsShareTheGraph) {
  Graph g;
  std::vector<NodeHandle> keep = PromotedNodes(g, 1);
  std::atomic<bool> stop{false};
  std::thread collector([&] {
    for (int i = 0; !stop.load(); ++i) {
      if (i % 8 == 7) {
        g.Collect();
      } else {
        g.collector().CollectYoung();
      }
    }
  });
  std::vector<std::thread> builders;
  for (int t = 0; t < 3; ++t) {
    builders.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        NodeId first;
        NodeHandle chain;
        {
          NodeHandle node = AddTestNode(g, "b" + std::to_string(t), {keep[0]});
          first = node.id();
          chain = node;
        }
        for (int i = 0; i < 10; ++i) chain = AddTestNode(g, "b", {chain});
        // Reached only through the chain: no collection may sweep it.
        EXPECT_TRUE(g.AllLiveForTesting({first}));
      }
    });
  }
  for (auto& b : builders) b.join();
  stop.store(true);
  collector.join();
  g.Collect();
  EXPECT_EQ(g.num_nodes(), 1);
}

TEST(CollectorConcurrency, BuildersAndACollectorShareTheGraph) {
  Graph g;
  NodeHandle keep = AddTestNode(g, "keep");
  std::atomic<bool> stop{false};
  std::thread collector([&] {
    while (!stop.load()) g.Collect();
  });
  std::vector<std::thread> builders;
  for (int t = 0; t < 3; ++t) {
    builders.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        NodeHandle chain = AddTestNode(g, "b" + std::to_string(t), {keep});
        for (int i = 0; i < 10; ++i) chain = AddTestNode(g, "b", {chain});
        EXPECT_TRUE(g.FindNode("keep").has_value());
      }
    });
  }
  for (auto& b : builders) b.join();
  stop.store(true);
  collector.join();
  g.Collect();
  EXPECT_EQ(g.num_nodes(), 1);
}

}  // namespace
}  // namespace graphgc
