#include "runtime/node.h"

#include <cassert>
#include <cstddef>
#include <new>
#include <variant>

#include "absl/base/config.h"
#include "util/fixed_size_pool.h"
#include "util/pool_cache.h"

namespace graphgc {
namespace {

// Made on first use and never destroyed: nodes may be freed during exit,
// after static destructors have run.
FixedSizePool& NodePool() {
  static FixedSizePool* const pool = new FixedSizePool(sizeof(Node));
  return *pool;
}

// Each thread's stash of node blocks: a node is made under the graph's
// lock, and the pool's own lock on top of it cost as much as the pool.
using NodeCache = PoolCache<NodePool>;

}  // namespace

// Under AddressSanitizer every node is an allocation of its own, so that
// LeakSanitizer reports a leaked node and ASan's quarantine keeps a freed
// one from being reused at once; the pool's own poisoning is tested in
// tests/util/fixed_size_pool_test.cc.
#ifdef ABSL_HAVE_ADDRESS_SANITIZER
constexpr bool kPooled = false;
#else
constexpr bool kPooled = true;
#endif

// Node is final, so every size asked for or handed back is sizeof(Node).
void* Node::operator new(std::size_t size) {
  assert(size == sizeof(Node));
  if constexpr (!kPooled) return ::operator new(size);
  return NodeCache::Allocate();
}

void Node::operator delete(void* node, [[maybe_unused]] std::size_t size) {
  assert(size == sizeof(Node));
  if constexpr (!kPooled) {
    ::operator delete(node);
  } else {
    NodeCache::Free(node);
  }
}

int64_t Node::ApproxBytes() const {
  int64_t bytes = sizeof(Node) + static_cast<int64_t>(name.capacity());
  for (const auto& [key, value] : attrs()) {
    bytes += static_cast<int64_t>(key.size() + sizeof(AttrValue));
    if (const Tensor* t = std::get_if<Tensor>(&value)) bytes += t->TotalBytes();
  }
  if (resource != nullptr) bytes += resource->ApproxBytes();
  return bytes;
}

}  // namespace graphgc
