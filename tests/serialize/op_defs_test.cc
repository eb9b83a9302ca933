// Exported GraphDefs against TensorFlow's OpDefs for the producer they
// declare (kGraphDefProducer, TensorFlow 2.9).
//
// testdata/op_defs.pbtxt is an OpList of the OpDefs of every op graphgc
// exports, as TensorFlow registered them at that producer (taken from
// tensorflow/core/ops/compat/ops_history_v2/<Op>.pbtxt; see
// testdata/README.md). It is read with TensorBoard's vendored op_def.proto
// (the descriptor set of tensorboard_schema_test). Every node of the full
// training graphs that the TensorBoard callback writes, for the seed
// program's model and for a model with every layer kind, must name an op
// there, with that op's input count, every required attr, attrs of the
// declared kinds and allowed dtypes, and no attr the op does not declare.
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "models/spatial_layers.h"
#include "ops/concat_ops.h"
#include "ops/gradients.h"
#include "ops/ops.h"
#include "runtime/tensor.h"
#include "serialize/event_file.h"
#include "serialize/graph.pb.h"
#include "serialize/graph_def.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/temp_path.h"
#include "tests/testing/tensorboard_schema.h"

namespace graphgc {
namespace {

namespace pb = ::google::protobuf;

using ::graphgc::testing::RunfilePath;
using ::graphgc::testing::TensorBoardSchema;

// One OpDef, read through reflection of TensorBoard's tensorboard.OpDef.
class OpDefView {
 public:
  explicit OpDefView(const pb::Message& m) : m_(m) {}

  std::string Str(const pb::Message& m, const char* field) const {
    return m.GetReflection()->GetString(m, Field(m, field));
  }
  std::vector<const pb::Message*> Repeated(const pb::Message& m,
                                           const char* field) const {
    std::vector<const pb::Message*> out;
    const pb::FieldDescriptor* f = Field(m, field);
    for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) {
      out.push_back(&m.GetReflection()->GetRepeatedMessage(m, f, i));
    }
    return out;
  }
  bool Has(const pb::Message& m, const char* field) const {
    return m.GetReflection()->HasField(m, Field(m, field));
  }
  const pb::Message& Sub(const pb::Message& m, const char* field) const {
    return m.GetReflection()->GetMessage(m, Field(m, field));
  }
  // The `type` values of an AttrValue's list.
  std::set<int> ListTypes(const pb::Message& attr_value) const {
    std::set<int> out;
    const pb::Message& list = Sub(attr_value, "list");
    const pb::FieldDescriptor* f = Field(list, "type");
    for (int i = 0; i < list.GetReflection()->FieldSize(list, f); ++i) {
      out.insert(list.GetReflection()->GetRepeatedEnumValue(list, f, i));
    }
    return out;
  }

  const pb::Message& message() const { return m_; }
  std::string name() const { return Str(m_, "name"); }

 private:
  static const pb::FieldDescriptor* Field(const pb::Message& m,
                                          const char* name) {
    const pb::FieldDescriptor* f = m.GetDescriptor()->FindFieldByName(name);
    if (f == nullptr) ADD_FAILURE() << "no field " << name;
    return f;
  }
  const pb::Message& m_;
};

// TensorFlow's OpDefs for kGraphDefProducer, from testdata/op_defs.pbtxt.
class OpDefs {
 public:
  OpDefs() {
    if (!schema_.errors().empty()) {
      ADD_FAILURE() << "TensorBoard's schema: " << schema_.errors();
      return;
    }
    const pb::Descriptor* type = schema_.Find("OpList");
    if (type == nullptr) {
      ADD_FAILURE() << "no tensorboard.OpList";
      return;
    }
    list_ = schema_.New(type);
    if (!pb::TextFormat::ParseFromString(
            ReadFileBytes(
                RunfilePath("tests/serialize/testdata/op_defs.pbtxt")),
            list_.get())) {
      ADD_FAILURE() << "testdata/op_defs.pbtxt does not parse as an OpList";
      return;
    }
    OpDefView view(*list_);
    for (const pb::Message* op : view.Repeated(*list_, "op")) {
      ops_.emplace(OpDefView(*op).name(), op);
    }
  }

  // The OpDef of `op`, or null.
  const pb::Message* Find(const std::string& op) const {
    auto it = ops_.find(op);
    return it == ops_.end() ? nullptr : it->second;
  }

 private:
  TensorBoardSchema schema_;
  std::unique_ptr<pb::Message> list_;
  std::map<std::string, const pb::Message*> ops_;
};

// The AttrValue kind an OpDef attr type needs.
proto::AttrValue::ValueCase KindOf(const std::string& type) {
  if (type == "type") return proto::AttrValue::kType;
  if (type == "bool") return proto::AttrValue::kB;
  if (type == "int") return proto::AttrValue::kI;
  if (type == "float") return proto::AttrValue::kF;
  if (type == "string") return proto::AttrValue::kS;
  if (type == "shape") return proto::AttrValue::kShape;
  if (type == "tensor") return proto::AttrValue::kTensor;
  if (type.rfind("list(", 0) == 0) return proto::AttrValue::kList;
  return proto::AttrValue::VALUE_NOT_SET;
}

// What is wrong with `node` against `op_def`; empty when nothing.
std::vector<std::string> Check(const proto::NodeDef& node,
                               const pb::Message& op_def) {
  std::vector<std::string> problems;
  OpDefView v(op_def);
  // Inputs: one per plain arg, N for a number_attr, the list's length for a
  // type_list_attr.
  int64_t expected_inputs = 0;
  for (const pb::Message* arg : v.Repeated(op_def, "input_arg")) {
    const std::string number_attr = v.Str(*arg, "number_attr");
    const std::string type_list_attr = v.Str(*arg, "type_list_attr");
    if (!number_attr.empty()) {
      auto it = node.attr().find(number_attr);
      expected_inputs += it == node.attr().end() ? 0 : it->second.i();
    } else if (!type_list_attr.empty()) {
      auto it = node.attr().find(type_list_attr);
      expected_inputs +=
          it == node.attr().end() ? 0 : it->second.list().type_size();
    } else {
      ++expected_inputs;
    }
  }
  int64_t data_inputs = 0;
  for (const std::string& in : node.input()) {
    if (in.empty() || in[0] != '^') ++data_inputs;
  }
  if (data_inputs != expected_inputs) {
    problems.push_back(
        absl::StrCat(data_inputs, " inputs, the op takes ", expected_inputs));
  }
  std::set<std::string> declared;
  for (const pb::Message* attr : v.Repeated(op_def, "attr")) {
    const std::string name = v.Str(*attr, "name");
    const std::string type = v.Str(*attr, "type");
    declared.insert(name);
    auto it = node.attr().find(name);
    if (it == node.attr().end()) {
      if (!v.Has(*attr, "default_value")) {
        problems.push_back("required attr '" + name + "' missing");
      }
      continue;
    }
    const proto::AttrValue& value = it->second;
    if (value.value_case() != KindOf(type)) {
      problems.push_back(absl::StrCat("attr '", name, "' is not a ", type));
      continue;
    }
    if (v.Has(*attr, "allowed_values") && type == "type") {
      const std::set<int> allowed = v.ListTypes(v.Sub(*attr, "allowed_values"));
      if (!allowed.empty() && !allowed.contains(value.type())) {
        problems.push_back(absl::StrCat("attr '", name, "' dtype ",
                                        proto::DataType_Name(value.type()),
                                        " is not allowed"));
      }
    }
  }
  for (const auto& [name, value] : node.attr()) {
    if (name.empty() || name[0] == '_')
      continue;  // TensorFlow's internal attrs
    if (!declared.contains(name)) {
      problems.push_back("undeclared attr '" + name + "'");
    }
  }
  return problems;
}

// The graph the TensorBoard callback writes for `model` after one epoch.
proto::GraphDef TrainingGraph(Sequential& model, const Tensor& x,
                              const Tensor& y, const std::string& name) {
  const std::string log_dir = TestTempPath("_" + name);
  auto tensorboard = callbacks::TensorBoard::Create({.log_dir = log_dir});
  absl::StatusOr<History> h = model.Fit(
      x, y, {.batch_size = 4, .verbose = 0, .callbacks = {tensorboard}});
  EXPECT_TRUE(h.ok()) << h.status();
  proto::GraphDef graph;
  absl::StatusOr<std::vector<proto::Event>> events =
      EventFileReader::ReadAll(tensorboard->train_path());
  EXPECT_TRUE(events.ok()) << events.status();
  if (events.ok()) {
    for (const proto::Event& e : *events) {
      if (!e.graph_def().empty()) {
        EXPECT_TRUE(graph.ParseFromString(e.graph_def()));
      }
    }
  }
  std::filesystem::remove_all(log_dir);
  return graph;
}

// Every node's problems, "node (op): problem" a line.
std::string Problems(const proto::GraphDef& graph, const OpDefs& op_defs) {
  std::vector<std::string> lines;
  for (const proto::NodeDef& node : graph.node()) {
    const pb::Message* op_def = op_defs.Find(node.op());
    if (op_def == nullptr) {
      lines.push_back(absl::StrCat(node.name(), " (", node.op(),
                                   "): no such op at producer ",
                                   kGraphDefProducer));
      continue;
    }
    for (const std::string& p : Check(node, *op_def)) {
      lines.push_back(absl::StrCat(node.name(), " (", node.op(), "): ", p));
    }
  }
  return absl::StrJoin(lines, "\n");
}

Tensor Filled(std::vector<int64_t> shape, int64_t n) {
  std::vector<float> values(static_cast<size_t>(n));
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.01f * (i % 13);
  absl::StatusOr<Tensor> t = Tensor::FromData<float>(shape, values);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

Tensor Labels(int64_t n) {
  std::vector<int32_t> values(static_cast<size_t>(n));
  for (size_t i = 0; i < values.size(); ++i) values[i] = i % 3;
  absl::StatusOr<Tensor> t = Tensor::FromData<int32_t>({n}, values);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

TEST(OpDefs, SeedModelsTrainingGraphMatchesTensorFlowsOpDefs) {
  OpDefs op_defs;
  absl::StatusOr<Sequential> model = Sequential::Create({
      layers::Input({10}),
      layers::Dense(64, {.activation = "relu"}),
      layers::Dense(10, {.activation = "softmax"}),
  });
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(model
                  ->Compile({.optimizer = optimizers::Adam(),
                             .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
  const proto::GraphDef graph =
      TrainingGraph(*model, Filled({8, 10}, 80), Labels(8), "seed_op_defs");
  ASSERT_GT(graph.node_size(), 0);
  EXPECT_EQ(graph.versions().producer(), kGraphDefProducer);
  EXPECT_EQ(Problems(graph, op_defs), "");
}

TEST(OpDefs, EveryLayerKindsTrainingGraphMatchesTensorFlowsOpDefs) {
  OpDefs op_defs;
  absl::StatusOr<Sequential> model = Sequential::Create(
      {layers::Input({8, 8, 1}),
       layers::Conv2D(4, {3, 3}, {.padding = "same", .activation = "relu"}),
       layers::BatchNormalization(), layers::MaxPooling2D({2, 2}),
       layers::Dropout(0.25f), layers::Reshape({4, 16}), layers::Flatten(),
       layers::Dense(8), layers::Activation("tanh"),
       layers::Dense(3, {.activation = "softmax"})});
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(model
                  ->Compile({.optimizer = optimizers::SGD({.momentum = 0.9f}),
                             .loss = losses::SparseCategoricalCrossentropy(),
                             .metrics = {"accuracy"}})
                  .ok());
  const proto::GraphDef graph = TrainingGraph(
      *model, Filled({8, 8, 8, 1}, 8 * 64), Labels(8), "layers_op_defs");
  ASSERT_GT(graph.node_size(), 0);
  EXPECT_EQ(Problems(graph, op_defs), "");
}

// The spatial layers of models/spatial_layers.h (AvgPool, AvgPoolGrad, Pad,
// Slice, MaxPool, Conv2D, Mul) in a training graph.
TEST(OpDefs, SpatialLayersTrainingGraphMatchesTensorFlowsOpDefs) {
  OpDefs op_defs;
  absl::StatusOr<Sequential> model = Sequential::Create(
      {layers::Input({8, 2}),
       layers::Conv1D(4, 3, {.padding = "causal", .activation = "relu"}),
       layers::MaxPooling1D(), layers::AveragePooling1D(2),
       layers::Reshape({2, 2, 2}), layers::ZeroPadding2D({1}),
       layers::AveragePooling2D({2}, {.strides = {1}, .padding = "same"}),
       layers::UpSampling2D({2}), layers::Cropping2D({1, 0, 0, 1}),
       layers::Flatten(), layers::Dense(3, {.activation = "softmax"})});
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(model
                  ->Compile({.optimizer = optimizers::SGD({.momentum = 0.9f}),
                             .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
  const proto::GraphDef graph = TrainingGraph(*model, Filled({8, 8, 2}, 128),
                                              Labels(8), "spatial_op_defs");
  std::set<std::string> ops;
  for (const proto::NodeDef& node : graph.node()) ops.insert(node.op());
  for (const char* op : {"AvgPool", "AvgPoolGrad", "Pad", "Slice"}) {
    EXPECT_TRUE(ops.contains(op)) << op;
  }
  EXPECT_EQ(Problems(graph, op_defs), "");
}

// Conv2DTranspose (Shape, Slice, ConcatV2, Conv2DBackpropInput and its
// gradient, Conv2DBackpropFilter and Conv2D) in a training graph.
TEST(OpDefs, Conv2DTransposeTrainingGraphMatchesTensorFlowsOpDefs) {
  OpDefs op_defs;
  absl::StatusOr<Sequential> model = Sequential::Create(
      {layers::Input({4, 4, 1}), layers::Conv2D(2, {2}),
       layers::Conv2DTranspose(3, {3}, {.strides = {2}, .activation = "relu"}),
       layers::Flatten(), layers::Dense(3, {.activation = "softmax"})});
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(model
                  ->Compile({.optimizer = optimizers::SGD({.momentum = 0.9f}),
                             .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
  const proto::GraphDef graph = TrainingGraph(
      *model, Filled({8, 4, 4, 1}, 128), Labels(8), "conv_transpose_op_defs");
  std::set<std::string> ops;
  for (const proto::NodeDef& node : graph.node()) ops.insert(node.op());
  for (const char* op :
       {"Conv2DBackpropInput", "Conv2DBackpropFilter", "ConcatV2", "Shape"}) {
    EXPECT_TRUE(ops.contains(op)) << op;
  }
  EXPECT_EQ(Problems(graph, op_defs), "");
}

// Embedding (Cast, GatherV2 and its gradient UnsortedSegmentSum) and the
// global pooling layers (Mean, MaxPool) in a training graph.
TEST(OpDefs, EmbeddingAndGlobalPoolingTrainingGraphMatchesTensorFlowsOpDefs) {
  OpDefs op_defs;
  absl::StatusOr<Sequential> model =
      Sequential::Create({layers::Input({8}), layers::Embedding(10, 4),
                          layers::GlobalMaxPooling1D(), layers::Reshape({2, 2}),
                          layers::GlobalAveragePooling1D(),
                          layers::Dense(3, {.activation = "softmax"})});
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(model
                  ->Compile({.optimizer = optimizers::SGD({.momentum = 0.9f}),
                             .loss = losses::SparseCategoricalCrossentropy()})
                  .ok());
  const proto::GraphDef graph =
      TrainingGraph(*model, Filled({8, 8}, 64), Labels(8), "embedding_op_defs");
  std::set<std::string> ops;
  for (const proto::NodeDef& node : graph.node()) ops.insert(node.op());
  EXPECT_TRUE(ops.contains("GatherV2"));
  EXPECT_TRUE(ops.contains("UnsortedSegmentSum"));
  EXPECT_EQ(Problems(graph, op_defs), "");
}

// ConcatV2 along a middle axis and its gradient (Slice), exported, and
// imported back.
TEST(OpDefs, AConcatV2AndItsGradientMatchTensorFlowsOpDefs) {
  OpDefs op_defs;
  Graph g;
  Output a = ops::Placeholder(g, DT_FLOAT, {-1, 2, 3}).value();
  Output b = ops::Placeholder(g, DT_FLOAT, {-1, 1, 3}).value();
  Output y = ops::ConcatV2({a, b}, 1, {.name = "concat"}).value();
  absl::StatusOr<std::vector<Output>> grads = AddGradients(y, {a, b});
  ASSERT_TRUE(grads.ok()) << grads.status();
  std::vector<Output> roots = *grads;
  roots.push_back(y);
  absl::StatusOr<proto::GraphDef> graph = ExportGraphDef(roots);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::set<std::string> ops;
  for (const proto::NodeDef& node : graph->node()) ops.insert(node.op());
  EXPECT_TRUE(ops.contains("ConcatV2"));
  EXPECT_TRUE(ops.contains("Slice"));
  EXPECT_EQ(Problems(*graph, op_defs), "");
  Graph copy;
  absl::StatusOr<std::vector<NodeHandle>> imported =
      ImportGraphDef(*graph, copy);
  ASSERT_TRUE(imported.ok()) << imported.status();
  std::optional<NodeHandle> concat = copy.FindNode("concat");
  ASSERT_TRUE(concat.has_value());
  EXPECT_EQ(copy.Describe(*concat).value().output_shapes[0],
            TensorShape({-1, 3, 3}));
}

TEST(OpDefs, TheCheckFindsAnUndeclaredAttrAndAMissingInput) {
  OpDefs op_defs;
  proto::GraphDef graph;
  proto::NodeDef* node = graph.add_node();
  node->set_name("m");
  node->set_op("MatMul");
  node->add_input("a");
  (*node->mutable_attr())["T"].set_type(proto::DT_FLOAT);
  (*node->mutable_attr())["grad_a"].set_b(false);
  const std::string problems = Problems(graph, op_defs);
  EXPECT_NE(problems.find("1 inputs, the op takes 2"), std::string::npos)
      << problems;
  EXPECT_NE(problems.find("undeclared attr 'grad_a'"), std::string::npos)
      << problems;
}

}  // namespace
}  // namespace graphgc
