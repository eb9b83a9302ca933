#include "util/registration.h"

#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace graphgc {
namespace {

// A registry that records which keys were released.
struct Released {
  std::vector<int> keys;
};

void Record(Released& registry, const int& key) {
  registry.keys.push_back(key);
}

using TestRegistration = Registration<Released, int, &Record>;

TEST(Registration, ReleasesItsKeyOnDestruction) {
  auto registry = std::make_shared<Released>();
  { TestRegistration r(registry, 7); }
  EXPECT_EQ(registry->keys, std::vector<int>{7});
}

TEST(Registration, ResetReleasesOnceAndEmptiesTheKey) {
  auto registry = std::make_shared<Released>();
  TestRegistration r(registry, 7);
  r.Reset();
  r.Reset();
  EXPECT_EQ(r.key(), 0);
  EXPECT_EQ(registry->keys, std::vector<int>{7});
}

TEST(Registration, AMovedFromRegistrationReleasesNothing) {
  auto registry = std::make_shared<Released>();
  TestRegistration to;
  {
    TestRegistration from(registry, 7);
    to = std::move(from);
  }
  EXPECT_TRUE(registry->keys.empty());
  EXPECT_EQ(to.key(), 7);
  to.Reset();
  EXPECT_EQ(registry->keys, std::vector<int>{7});
}

TEST(Registration, MoveAssignmentReleasesTheKeyItReplaces) {
  auto registry = std::make_shared<Released>();
  TestRegistration a(registry, 1);
  TestRegistration b(registry, 2);
  a = std::move(b);
  EXPECT_EQ(registry->keys, std::vector<int>{1});
  EXPECT_EQ(a.key(), 2);
}

TEST(Registration, OutlivingItsRegistryReleasesNothing) {
  auto registry = std::make_shared<Released>();
  TestRegistration r(registry, 7);
  std::weak_ptr<Released> weak = registry;
  registry.reset();
  r.Reset();  // no registry to call: must not crash
  EXPECT_TRUE(weak.expired());
  EXPECT_EQ(r.key(), 0);
}

}  // namespace
}  // namespace graphgc
