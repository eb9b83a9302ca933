#include "gc/edge_list.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace graphgc {
namespace gc {
namespace {

std::vector<uint32_t> Edges(const EdgeList& list) {
  return std::vector<uint32_t>(list.begin(), list.end());
}

TEST(EdgeList, IsSixteenBytesAndStartsEmptyAndInline) {
  EXPECT_EQ(sizeof(EdgeList), 16u);
  EdgeList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.capacity(), EdgeList::kInline);
}

TEST(EdgeList, KeepsUpToTwoEdgesInline) {
  EdgeList list;
  list.push_back(7);
  list.push_back(9);
  EXPECT_EQ(Edges(list), (std::vector<uint32_t>{7, 9}));
  EXPECT_EQ(list.capacity(), EdgeList::kInline);
}

TEST(EdgeList, GrowsPastTwoEdgesKeepingTheirOrder) {
  EdgeList list;
  std::vector<uint32_t> want;
  for (uint32_t i = 0; i < 100; ++i) {
    list.push_back(i * 3);
    want.push_back(i * 3);
    ASSERT_EQ(Edges(list), want);
  }
  EXPECT_EQ(list.size(), 100u);
  EXPECT_EQ(list[57], 171u);
  EXPECT_EQ(list.span().size(), 100u);
}

TEST(EdgeList, AssignReplacesTheEdgesInlineOrNot) {
  EdgeList list;
  const std::vector<uint32_t> five = {1, 2, 3, 4, 5};
  list.assign(five);
  EXPECT_EQ(Edges(list), five);
  const std::vector<uint32_t> two = {8, 6};
  list.assign(two);
  EXPECT_EQ(Edges(list), two);
  list.assign({});
  EXPECT_TRUE(list.empty());
}

TEST(EdgeList, ShrinkToFitAfterClearFreesTheBufferAndIsInlineAgain) {
  EdgeList list;
  list.assign(std::vector<uint32_t>{1, 2, 3, 4});
  EXPECT_GT(list.capacity(), EdgeList::kInline);
  list.clear();
  EXPECT_GT(list.capacity(), EdgeList::kInline);  // clear keeps the buffer
  list.shrink_to_fit();
  EXPECT_EQ(list.capacity(), EdgeList::kInline);
  list.push_back(4);
  EXPECT_EQ(Edges(list), (std::vector<uint32_t>{4}));
}

TEST(EdgeList, ShrinkToFitOfTwoOutOfLineEdgesMovesThemInline) {
  EdgeList list;
  list.assign(std::vector<uint32_t>{1, 2, 3});
  list.assign(std::vector<uint32_t>{5, 6});
  list.shrink_to_fit();
  EXPECT_EQ(list.capacity(), EdgeList::kInline);
  EXPECT_EQ(Edges(list), (std::vector<uint32_t>{5, 6}));
}

TEST(EdgeList, AMoveTakesTheEdgesAndLeavesTheSourceEmpty) {
  for (uint32_t n : {2u, 6u}) {  // inline, out of line
    EdgeList from;
    std::vector<uint32_t> want;
    for (uint32_t i = 0; i < n; ++i) {
      from.push_back(i + 10);
      want.push_back(i + 10);
    }
    EdgeList to = std::move(from);
    EXPECT_EQ(Edges(to), want);
    EXPECT_TRUE(from.empty());  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(from.capacity(), EdgeList::kInline);
    EdgeList other;
    other.assign(std::vector<uint32_t>{1, 2, 3, 4, 5});
    other = std::move(to);
    EXPECT_EQ(Edges(other), want);
  }
}

}  // namespace
}  // namespace gc
}  // namespace graphgc
