#include "runtime/name_table.h"

#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace graphgc {
namespace {

struct FakeNode {
  std::string name;
};
using Table = NameTable<FakeNode>;
constexpr uint32_t kAll = ~uint32_t{0};  // Erase compares the whole payload

uint32_t HashOf(const std::string& name) {
  return static_cast<uint32_t>(absl::Hash<std::string>{}(name));
}

std::vector<std::unique_ptr<FakeNode>> MakeNodes(int n,
                                                 const std::string& base) {
  std::vector<std::unique_ptr<FakeNode>> nodes;
  for (int i = 0; i < n; ++i) {
    nodes.push_back(
        std::make_unique<FakeNode>(FakeNode{absl::StrCat(base, "_", i)}));
  }
  return nodes;
}

void InsertAll(Table& t, const std::vector<std::unique_ptr<FakeNode>>& nodes) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    t.Insert(nodes[i].get(), HashOf(nodes[i]->name), static_cast<uint32_t>(i));
  }
}

const FakeNode* Lookup(const Table& t, const std::string& name) {
  return t.Find(name, HashOf(name)).node;
}

// EraseIf's contract for the caller: return false for a slot without an
// entry.
template <typename Pred>
void EraseWhere(Table& t, Pred pred) {
  t.EraseIf([&](uint32_t payload, bool full, size_t) {
    return full && pred(payload);
  });
}

// Inserts `more` in order until an insert rebuilds the arrays (used()
// falls: the tombstones are gone); how many it inserted, or 0 if none did.
size_t InsertUntilRebuilt(Table& t,
                          const std::vector<std::unique_ptr<FakeNode>>& more) {
  for (size_t inserted = 0; inserted < more.size();) {
    const size_t used = t.used();
    const FakeNode* n = more[inserted++].get();
    t.Insert(n, HashOf(n->name), 0);
    if (t.used() < used) return inserted;
  }
  return 0;
}

TEST(NameTable, AnEmptyTableFindsNothingAndHoldsNoArrays) {
  Table t;
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.capacity(), 0u);
  EXPECT_EQ(Lookup(t, "x"), nullptr);
  EXPECT_FALSE(t.Erase(HashOf("x"), 0, kAll));
  EraseWhere(t, [](uint32_t) { return true; });
  EXPECT_FALSE(t.AnyOf([](const FakeNode*) { return true; }));
}

// Small arrays grow fourfold, bigger ones double: a scope of 100 names is
// rebuilt at 8, 32 and 128 slots.
TEST(NameTable, SmallArraysGrowFourfoldThenDouble) {
  Table t;
  const auto nodes = MakeNodes(1000, "n");
  std::vector<size_t> capacities;
  for (size_t i = 0; i < nodes.size(); ++i) {
    t.Insert(nodes[i].get(), HashOf(nodes[i]->name), static_cast<uint32_t>(i));
    if (capacities.empty() || capacities.back() != t.capacity()) {
      capacities.push_back(t.capacity());
    }
    if (i + 1 == 100) {
      EXPECT_EQ(capacities, (std::vector<size_t>{8, 32, 128}));
    }
  }
  EXPECT_EQ(capacities,
            (std::vector<size_t>{8, 32, 128, 256, 512, 1024, 2048}));
  for (const auto& node : nodes) EXPECT_EQ(Lookup(t, node->name), node.get());
}

TEST(NameTable, FindsEachInsertedNameWithItsPayloadAndOnlyThose) {
  auto nodes = MakeNodes(1000, "n");
  Table t;
  InsertAll(t, nodes);
  EXPECT_EQ(t.size(), 1000u);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Table::Item e = t.Find(nodes[i]->name, HashOf(nodes[i]->name));
    ASSERT_EQ(e.node, nodes[i].get()) << nodes[i]->name;
    EXPECT_EQ(e.payload, i);
  }
  EXPECT_EQ(Lookup(t, "n_1000"), nullptr);
  EXPECT_EQ(Lookup(t, "m_1"), nullptr);
}

TEST(NameTable, ComparesNamesNotOnlyHashes) {
  FakeNode a{"a"}, b{"b"};
  Table t;
  t.Insert(&a, 7, 1);
  t.Insert(&b, 7, 2);
  EXPECT_EQ(t.Find("a", 7).node, &a);
  EXPECT_EQ(t.Find("b", 7).node, &b);
  EXPECT_EQ(t.Find("c", 7).node, nullptr);
}

TEST(NameTable, HashesThatMeanEmptyOrRemovedAreStoredAsAnyOther) {
  // 0 and 1 are the keys' marks for an empty slot and a tombstone.
  FakeNode a{"a"}, b{"b"}, c{"c"};
  Table t;
  t.Insert(&a, 0, 1);
  t.Insert(&b, 1, 2);
  t.Insert(&c, 2, 3);
  EXPECT_EQ(t.Find("a", 0).node, &a);
  EXPECT_EQ(t.Find("b", 1).node, &b);
  EXPECT_EQ(t.Find("c", 2).node, &c);
  EXPECT_TRUE(t.Erase(1, 2, kAll));
  EXPECT_EQ(t.Find("b", 1).node, nullptr);
  EXPECT_EQ(t.Find("a", 0).node, &a);
  EXPECT_EQ(t.Find("c", 2).node, &c);
}

TEST(NameTable, EntriesAndTombstonesFillAtMostSevenEighths) {
  auto nodes = MakeNodes(10000, "n");
  Table t;
  for (size_t i = 0; i < nodes.size(); ++i) {
    t.Insert(nodes[i].get(), HashOf(nodes[i]->name), static_cast<uint32_t>(i));
    EXPECT_LE(t.used() * 8, t.capacity() * 7);
    if (i % 3 == 0) t.Erase(HashOf(nodes[i]->name), i, kAll);
    EXPECT_LE(t.used() * 8, t.capacity() * 7);
  }
}

TEST(NameTable, EraseRemovesOneEntryByItsHashAndPayload) {
  auto nodes = MakeNodes(500, "n");
  Table t;
  InsertAll(t, nodes);
  for (size_t i = 0; i < nodes.size(); i += 3) {
    EXPECT_TRUE(t.Erase(HashOf(nodes[i]->name), i, kAll));
  }
  EXPECT_FALSE(t.Erase(HashOf(nodes[0]->name), 0, kAll));
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(Lookup(t, nodes[i]->name) != nullptr, i % 3 != 0) << i;
  }
  EXPECT_EQ(t.size(), 500u - 167u);
}

TEST(NameTable, EraseComparesOnlyThePayloadBitsOfItsMask) {
  // Two names with one hash; payloads 0x0107 and 0x0207.
  FakeNode a{"a"}, b{"b"};
  Table t;
  t.Insert(&a, 7, 0x0107);
  t.Insert(&b, 7, 0x0207);
  EXPECT_FALSE(t.Erase(7, 0x0307, kAll));
  EXPECT_FALSE(t.Erase(8, 0x0207, kAll));     // the right payload, wrong hash
  EXPECT_TRUE(t.Erase(7, 0xff0207, 0xffff));  // b: the mask ignores 0xff
  EXPECT_EQ(t.Find("b", 7).node, nullptr);
  EXPECT_EQ(t.Find("a", 7).node, &a);
  EXPECT_EQ(t.size(), 1u);
}

TEST(NameTable, ErasingTheLastOfARunLeavesNoTombstones) {
  auto nodes = MakeNodes(5, "n");
  Table t;
  InsertAll(t, nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_TRUE(t.Erase(HashOf(nodes[i]->name), i, kAll));
  }
  EXPECT_EQ(t.used(), 0u);
}

TEST(NameTable, EraseIfVisitsEverySlotOnceAndKeepsTheRestFindable) {
  auto nodes = MakeNodes(20000, "n");
  Table t;
  InsertAll(t, nodes);
  std::set<size_t> indexes;
  size_t full = 0;
  t.EraseIf([&](uint32_t payload, bool is_full, size_t index) {
    EXPECT_TRUE(indexes.insert(index).second) << "slot twice: " << index;
    full += is_full;
    return is_full && payload % 2 == 0;
  });
  EXPECT_EQ(indexes.size(), t.capacity());
  EXPECT_EQ(full, nodes.size());
  EXPECT_EQ(t.size(), 10000u);
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(Lookup(t, nodes[i]->name) != nullptr, i % 2 == 1) << i;
  }
}

TEST(NameTable, EraseIfGivesTheNodeOfEachSlotItAsksAbout) {
  auto nodes = MakeNodes(100, "n");
  Table t;
  InsertAll(t, nodes);
  t.EraseIf([&](uint32_t payload, bool full, size_t index) {
    if (full) {
      EXPECT_EQ(t.NodeAt(index), nodes[payload].get());
    }
    return false;
  });
}

TEST(NameTable, CrowdedRunsKeepEverySurvivorFindableAfterSweeps) {
  // Every hash is one of three, so runs are long and wrap around the
  // arrays' end.
  auto nodes = MakeNodes(180, "n");
  const uint32_t kHashes[] = {2, 0x55555555u, 0xAAAAAAAAu};
  std::mt19937 rng(17);
  for (int round = 0; round < 50; ++round) {
    Table t;
    std::vector<uint32_t> hash(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      hash[i] = kHashes[rng() % 3];
      t.Insert(nodes[i].get(), hash[i], static_cast<uint32_t>(i));
    }
    std::vector<bool> leaves(nodes.size());
    for (size_t i = 0; i < leaves.size(); ++i) leaves[i] = rng() % 2 == 0;
    EraseWhere(t, [&](uint32_t i) { return leaves[i]; });
    size_t kept = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const FakeNode* found = t.Find(nodes[i]->name, hash[i]).node;
      EXPECT_EQ(found != nullptr, !leaves[i]) << "round " << round << " " << i;
      kept += !leaves[i];
    }
    EXPECT_EQ(t.size(), kept);
  }
}

TEST(NameTable, MatchesASetUnderRandomInsertsErasesAndSweeps) {
  auto nodes = MakeNodes(4000, "k");
  std::mt19937 rng(5);
  Table t;
  std::vector<bool> in(nodes.size(), false);
  size_t count = 0;
  for (int step = 0; step < 60000; ++step) {
    const size_t i = rng() % nodes.size();
    const int what = static_cast<int>(rng() % 100);
    if (what < 60 && !in[i]) {
      t.Insert(nodes[i].get(), HashOf(nodes[i]->name),
               static_cast<uint32_t>(i));
      in[i] = true;
      ++count;
    } else if (what < 99 && in[i]) {
      EXPECT_TRUE(t.Erase(HashOf(nodes[i]->name), i, kAll));
      in[i] = false;
      --count;
    } else if (what == 99) {
      const uint32_t mod = 2 + rng() % 5;
      EraseWhere(t, [&](uint32_t p) {
        if (p % mod != 0) return false;
        in[p] = false;
        --count;
        return true;
      });
    }
    ASSERT_EQ(t.size(), count);
    ASSERT_LE(t.used() * 8, t.capacity() * 7);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(Lookup(t, nodes[i]->name) != nullptr, in[i]) << i;
  }
}

TEST(NameTable, AThrowingPredicateLeavesTheRestFindable) {
  auto nodes = MakeNodes(3000, "n");
  Table t;
  InsertAll(t, nodes);
  std::set<uint32_t> gone;
  int asked = 0;
  EXPECT_THROW(t.EraseIf([&](uint32_t payload, bool full, size_t) {
    if (++asked == 2000) throw std::runtime_error("stop");
    const bool kill = full && payload % 2 == 0;
    if (kill) gone.insert(payload);
    return kill;
  }),
               std::runtime_error);
  EXPECT_EQ(t.size(), nodes.size() - gone.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(Lookup(t, nodes[i]->name) != nullptr, gone.count(i) == 0) << i;
  }
}

TEST(NameTable, InsertsAfterASweepReuseTombstonesUntilARebuildDropsThem) {
  auto nodes = MakeNodes(3000, "n");
  auto more = MakeNodes(3000, "m");
  Table t;
  InsertAll(t, nodes);
  EraseWhere(t, [](uint32_t) { return true; });
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.used(), nodes.size());  // all tombstones
  // New names fill tombstones and empty slots until the bound is reached;
  // the arrays are then rebuilt without the tombstones, sized for the
  // entries (at most half full), not for the tombstones.
  const size_t inserted = InsertUntilRebuilt(t, more);
  ASSERT_GT(inserted, 0u) << "no rebuild";
  EXPECT_EQ(t.used(), t.size());
  EXPECT_EQ(t.size(), inserted);
  EXPECT_LE(t.size() * 2, t.capacity());
  EXPECT_LT(t.capacity(), t.size() * 4);
  for (size_t i = 0; i < inserted; ++i) {
    EXPECT_EQ(Lookup(t, more[i]->name), more[i].get());
  }
  for (const auto& n : nodes) EXPECT_EQ(Lookup(t, n->name), nullptr);
}

TEST(NameTable, ARebuildAfterASweepKeepsTheArraysWhenTheyAreBigEnough) {
  auto nodes = MakeNodes(3500, "n");  // 4096 slots, near the bound
  Table t;
  InsertAll(t, nodes);
  const size_t capacity = t.capacity();
  ASSERT_EQ(capacity, 4096u);
  // Leave a tenth: the tombstones keep the arrays near the bound, and the
  // rebuild that the next inserts bring keeps their size.
  EraseWhere(t, [](uint32_t i) { return i % 10 != 0; });
  auto more = MakeNodes(1500, "m");
  const size_t inserted = InsertUntilRebuilt(t, more);
  ASSERT_GT(inserted, 0u) << "no rebuild";
  EXPECT_EQ(t.capacity(), capacity);
  EXPECT_EQ(t.size(), 350u + inserted);
  EXPECT_EQ(t.used(), t.size());
}

TEST(NameTable, AnyOfStopsAtTheFirstMatch) {
  auto nodes = MakeNodes(100, "n");
  Table t;
  InsertAll(t, nodes);
  int calls = 0;
  EXPECT_TRUE(t.AnyOf([&](const FakeNode*) { return ++calls == 3; }));
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(t.AnyOf([](const FakeNode* n) { return n->name == "x"; }));
  t.Erase(HashOf(nodes[5]->name), 5, kAll);
  EXPECT_FALSE(t.AnyOf([&](const FakeNode* n) { return n == nodes[5].get(); }));
}

}  // namespace
}  // namespace graphgc
