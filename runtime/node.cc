#include "runtime/node.h"

#include <variant>

namespace graphgc {

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
