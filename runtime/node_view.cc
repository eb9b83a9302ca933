#include "runtime/node_view.h"

#include <cassert>
#include <utility>

#include "runtime/node.h"
#include "util/mutex.h"

namespace graphgc {

NodeView::NodeView(NodeHandle node)
    : holder_(std::move(node)),
      node_(&RuntimeNodeAccess::NodeOf(*holder_.graph(), holder_.id())) {}

const std::string& NodeView::name() const { return node_->name; }

const std::string& NodeView::op() const { return node_->op(); }

const OpDef* NodeView::op_def() const { return node_->op_def; }

absl::Span<const NodeInput> NodeView::inputs() const { return node_->inputs; }

NodeView NodeView::input(size_t k) const {
  assert(k < node_->inputs.size());
  return NodeView(holder_, RuntimeNodeAccess::NodeOf(*holder_.graph(),
                                                     node_->inputs[k].node));
}

std::vector<NodeId> NodeView::control_inputs() const {
  ReaderLock lock(holder_.graph()->heap().mu());
  return node_->control_inputs;
}

const AttrMap& NodeView::attrs() const { return node_->attrs(); }

absl::Span<const DataType> NodeView::output_types() const {
  return node_->output_types();
}

absl::Span<const TensorShape> NodeView::output_shapes() const {
  return node_->output_shapes();
}

NodeResource* NodeView::resource() const { return node_->resource.get(); }

}  // namespace graphgc
