#include "runtime/op_def.h"

#include "absl/strings/str_cat.h"
#include "runtime/node.h"

namespace graphgc {

OpKernelContext::OpKernelContext(
    const Node& node, absl::Span<const Tensor* const> inputs,
    absl::Span<NodeResource* const> input_resources,
    const Eigen::ThreadPoolDevice* device, int64_t step_id)
    : OpKernelContext(node, inputs, input_resources, device, step_id,
                      absl::Span<Tensor>()) {
  owned_outputs_.resize(node.output_types().size());
  outputs_ = absl::MakeSpan(owned_outputs_);
}

OpKernelContext::OpKernelContext(
    const Node& node, absl::Span<const Tensor* const> inputs,
    absl::Span<NodeResource* const> input_resources,
    const Eigen::ThreadPoolDevice* device, int64_t step_id,
    absl::Span<Tensor> outputs)
    : OpKernelContext(node, node.attrs(), node.resource.get(), inputs,
                      input_resources, device, step_id, outputs) {}

const std::string& OpKernelContext::node_name() const { return node_.name; }

const std::string& OpKernelContext::op() const { return node_.op(); }

absl::Status OpKernelContext::Error(const absl::Status& status) const {
  return absl::Status(status.code(), absl::StrCat(node_.op(), " '", node_.name,
                                                  "': ", status.message()));
}

}  // namespace graphgc
