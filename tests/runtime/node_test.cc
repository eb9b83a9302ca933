#include "runtime/node.h"

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/base/config.h"
#include "gtest/gtest.h"

namespace graphgc {
namespace {

std::unique_ptr<Node> NewNode() {
  return std::make_unique<Node>(NodeKey::ForTesting());
}

// Outside AddressSanitizer builds, nodes come from a pool: a freed node's
// memory is the next node's.
TEST(Node, AFreedNodesMemoryIsTheNextNodes) {
#ifdef ABSL_HAVE_ADDRESS_SANITIZER
  GTEST_SKIP() << "each node is its own allocation under AddressSanitizer";
#else
  std::unique_ptr<Node> first = NewNode();
  const void* address = first.get();
  first.reset();
  std::unique_ptr<Node> second = NewNode();
  EXPECT_EQ(static_cast<const void*>(second.get()), address);
#endif
}

TEST(Node, LiveNodesNeverShareMemory) {
  std::vector<std::unique_ptr<Node>> nodes;
  std::set<const void*> addresses;
  for (int i = 0; i < 2000; ++i) {
    nodes.push_back(NewNode());
    nodes.back()->name = "n" + std::to_string(i);
    addresses.insert(nodes.back().get());
  }
  EXPECT_EQ(addresses.size(), nodes.size());
  for (int i = 0; i < 2000; ++i) {
    EXPECT_EQ(nodes[i]->name, "n" + std::to_string(i));
  }
}

// Deleted through gc::Object, as the heap deletes them.
TEST(Node, NodesMadeAndFreedOnManyThreadsAtOnceStayIntact) {
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &bad] {
      for (int round = 0; round < 50; ++round) {
        std::vector<std::unique_ptr<gc::Object>> objects;
        for (int i = 0; i < 100; ++i) {
          std::unique_ptr<Node> node = NewNode();
          node->base_length = static_cast<uint32_t>(t * 1000 + i);
          objects.push_back(std::move(node));
        }
        for (int i = 0; i < 100; ++i) {
          if (static_cast<Node&>(*objects[i]).base_length !=
              static_cast<uint32_t>(t * 1000 + i)) {
            ++bad[t];
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace graphgc
