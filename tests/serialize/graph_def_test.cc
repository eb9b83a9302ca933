#include "serialize/graph_def.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "runtime/graph.h"
#include "runtime/session.h"
#include "serialize/attr_value.pb.h"
#include "serialize/node_def.pb.h"
#include "serialize/tensor.pb.h"

namespace graphgc {
namespace {

// A small model with every feature the format has: a placeholder of unknown
// batch size, a constant, MatMul with transpose_b, a variable and its read,
// BiasAdd, Relu, Softmax, a two-output op read at output 1, Sum with
// keep_dims (and its helper axes constant) and a control input.
struct Model {
  Output total;
  Output backprop;
  std::vector<NodeHandle> roots() const {
    return {total.handle(), backprop.handle()};
  }
};

Model BuildModel(Graph& g) {
  Output x = ops::Placeholder(g, DT_FLOAT, {-1, 3}, {.name = "x"}).value();
  Output labels =
      ops::Placeholder(g, DT_INT32, {-1}, {.name = "labels"}).value();
  Output w = ops::Const(g,
                        Tensor::FromData<float>(
                            {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6})
                            .value(),
                        {.name = "dense/kernel"})
                 .value();
  Output mm =
      ops::MatMul(x, w, {.name = "dense/MatMul", .transpose_b = true}).value();
  Output var =
      ops::VarHandleOp(g, DT_FLOAT, {2}, {.name = "dense/bias"}).value();
  Output read =
      ops::ReadVariableOp(var, {.name = "dense/BiasAdd/ReadVariableOp"})
          .value();
  Output biased = ops::BiasAdd(mm, read, {.name = "dense/BiasAdd"}).value();
  Output relu = ops::Relu(biased, {.name = "dense/Relu"}).value();
  Output softmax = ops::Softmax(relu, {.name = "softmax"}).value();
  Output init = ops::NoOp(g, {.name = "init"}).value();
  Output total = ops::Sum(softmax, {.name = "total",
                                    .control_inputs = {init.handle()},
                                    .axes = {1},
                                    .keep_dims = true})
                     .value();
  ops::SoftmaxCrossEntropyOutputs xent =
      ops::SparseSoftmaxCrossEntropyWithLogits(relu, labels, {.name = "xent"})
          .value();
  Output backprop =
      ops::Identity(xent.backprop, {.name = "xent_backprop"}).value();
  return Model{total, backprop};
}

std::string ExportBytes(absl::Span<const NodeHandle> roots) {
  absl::StatusOr<proto::GraphDef> def = ExportGraphDef(roots);
  EXPECT_TRUE(def.ok()) << def.status();
  return def.ok() ? DeterministicBytes(*def) : std::string();
}

const proto::NodeDef* FindNodeDef(const proto::GraphDef& def,
                                  const std::string& name) {
  for (const proto::NodeDef& n : def.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

proto::NodeDef* MutableNodeDef(proto::GraphDef& def, const std::string& name) {
  for (proto::NodeDef& n : *def.mutable_node()) {
    if (n.name() == name) return &n;
  }
  ADD_FAILURE() << "no node " << name;
  static proto::NodeDef dummy;
  return &dummy;
}

std::vector<std::string> Inputs(const proto::NodeDef& n) {
  return std::vector<std::string>(n.input().begin(), n.input().end());
}

// --- export ---

TEST(ExportGraphDef, ExportsOnlyNodesTheRootsReach) {
  Graph g;
  g.set_gc_policy(GcPolicy{.automatic = false});
  Model m = BuildModel(g);
  Output unrelated =
      ops::Placeholder(g, DT_FLOAT, {1}, {.name = "unrelated"}).value();
  ASSERT_TRUE(ops::Relu(unrelated, {.name = "garbage"}).ok());  // dropped
  ASSERT_TRUE(g.FindNode("garbage").has_value());  // not collected yet
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  EXPECT_EQ(FindNodeDef(def, "unrelated"), nullptr);
  EXPECT_EQ(FindNodeDef(def, "garbage"), nullptr);
  EXPECT_NE(FindNodeDef(def, "init"), nullptr);  // reached by control only
  EXPECT_NE(FindNodeDef(def, "dense/MatMul"), nullptr);
  EXPECT_EQ(def.node_size(), g.num_nodes() - 2);
}

TEST(ExportGraphDef, ListsInputsBeforeTheirConsumers) {
  Graph g;
  Model m = BuildModel(g);
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  std::vector<std::string> seen;
  for (const proto::NodeDef& n : def.node()) {
    for (std::string in : n.input()) {
      if (in[0] == '^') in = in.substr(1);
      in = in.substr(0, in.find(':'));
      EXPECT_NE(std::find(seen.begin(), seen.end(), in), seen.end())
          << n.name() << " reads " << in << " before it is listed";
    }
    seen.push_back(n.name());
  }
}

TEST(ExportGraphDef, TwoIdenticalGraphsGiveIdenticalBytes) {
  Graph g1;
  Graph g2;
  // Different slot numbers in g2: unrelated nodes first, some collected.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(ops::Placeholder(g2, DT_FLOAT, {1}).ok());
  }
  g2.Collect();
  Output other = ops::Placeholder(g2, DT_FLOAT, {1}, {.name = "o"}).value();
  Model m1 = BuildModel(g1);
  Model m2 = BuildModel(g2);
  EXPECT_EQ(ExportBytes(m1.roots()), ExportBytes(m2.roots()));
}

TEST(ExportGraphDef, InputsAreSpelledAsTensorFlowSpellsThem) {
  Graph g;
  Model m = BuildModel(g);
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  EXPECT_EQ(Inputs(*FindNodeDef(def, "dense/MatMul")),
            (std::vector<std::string>{"x", "dense/kernel"}));
  EXPECT_EQ(Inputs(*FindNodeDef(def, "xent_backprop")),
            (std::vector<std::string>{"xent:1"}));
  EXPECT_EQ(Inputs(*FindNodeDef(def, "total")),
            (std::vector<std::string>{"softmax", "total/reduction_indices",
                                      "^init"}));
}

TEST(ExportGraphDef, AttrsHaveTensorFlowNamesAndTypes) {
  Graph g;
  Model m = BuildModel(g);
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  EXPECT_EQ(def.versions().producer(), kGraphDefProducer);

  const auto& mm = FindNodeDef(def, "dense/MatMul")->attr();
  ASSERT_EQ(mm.at("transpose_a").value_case(), proto::AttrValue::kB);
  EXPECT_FALSE(mm.at("transpose_a").b());
  EXPECT_TRUE(mm.at("transpose_b").b());
  ASSERT_EQ(mm.at("T").value_case(), proto::AttrValue::kType);
  EXPECT_EQ(mm.at("T").type(), proto::DT_FLOAT);
  const auto& shapes = mm.at("_output_shapes").list().shape();
  ASSERT_EQ(shapes.size(), 1);
  ASSERT_EQ(shapes[0].dim_size(), 2);
  EXPECT_EQ(shapes[0].dim(0).size(), -1);
  EXPECT_EQ(shapes[0].dim(1).size(), 2);

  const auto& c = FindNodeDef(def, "dense/kernel")->attr();
  ASSERT_EQ(c.at("value").value_case(), proto::AttrValue::kTensor);
  const proto::TensorProto& t = c.at("value").tensor();
  EXPECT_EQ(t.dtype(), proto::DT_FLOAT);
  ASSERT_EQ(t.tensor_shape().dim_size(), 2);
  EXPECT_EQ(t.tensor_shape().dim(0).size(), 2);
  EXPECT_EQ(t.tensor_shape().dim(1).size(), 3);
  std::vector<float> values(6);
  ASSERT_EQ(t.tensor_content().size(), 6 * sizeof(float));
  std::memcpy(values.data(), t.tensor_content().data(), 6 * sizeof(float));
  EXPECT_EQ(values, (std::vector<float>{1, 2, 3, 4, 5, 6}));

  const auto& x = FindNodeDef(def, "x")->attr();
  ASSERT_EQ(x.at("shape").value_case(), proto::AttrValue::kShape);
  ASSERT_EQ(x.at("shape").shape().dim_size(), 2);
  EXPECT_EQ(x.at("shape").shape().dim(0).size(), -1);
  EXPECT_EQ(x.at("shape").shape().dim(1).size(), 3);
  EXPECT_EQ(x.at("dtype").type(), proto::DT_FLOAT);

  const auto& sum = FindNodeDef(def, "total")->attr();
  ASSERT_EQ(sum.at("keep_dims").value_case(), proto::AttrValue::kB);
  EXPECT_TRUE(sum.at("keep_dims").b());

  const auto& init = FindNodeDef(def, "init")->attr();
  ASSERT_EQ(init.at("_output_shapes").value_case(), proto::AttrValue::kList);
  EXPECT_EQ(init.at("_output_shapes").list().shape_size(), 0);
}

TEST(ExportGraphDef, DoesNotCollect) {
  Graph g;
  // A policy under which any safe point would collect.
  g.set_gc_policy(GcPolicy{.growth_ratio = 0, .min_new_nodes = 0});
  Model m = BuildModel(g);
  WeakNodeHandle garbage(
      ops::Placeholder(g, DT_FLOAT, {1}, {.name = "garbage"}).value().handle());
  int starts = 0;
  gc::ListenerRegistration counting =
      g.collector().Listen([&](const CollectEvent& e) {
        if (e.phase == CollectEvent::Phase::kStart) ++starts;
      });
  ASSERT_TRUE(ExportGraphDef(m.roots()).ok());
  EXPECT_EQ(starts, 0);
  EXPECT_TRUE(garbage.Lock().has_value());
}

TEST(ExportGraphDef, RootsOfTwoGraphsAreAnError) {
  Graph g1;
  Graph g2;
  Output a = ops::Placeholder(g1, DT_FLOAT, {1}).value();
  Output b = ops::Placeholder(g2, DT_FLOAT, {1}).value();
  absl::StatusOr<proto::GraphDef> def = ExportGraphDef({a, b});
  EXPECT_EQ(def.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(def.status().message().find("another graph"), std::string::npos)
      << def.status();
}

TEST(ExportGraphDef, EmptyRootHandleIsAnError) {
  Graph g;
  Output a = ops::Placeholder(g, DT_FLOAT, {1}).value();
  std::vector<NodeHandle> roots = {a.handle(), NodeHandle()};
  absl::StatusOr<proto::GraphDef> def = ExportGraphDef(roots);
  EXPECT_EQ(def.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(def.status().message().find("root 1"), std::string::npos)
      << def.status();
}

// --- import ---

TEST(ImportGraphDef, RoundTripIsByteIdentical) {
  Graph g1;
  Model m = BuildModel(g1);
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  Graph g2;
  std::vector<NodeHandle> nodes = ImportGraphDef(def, g2).value();
  ASSERT_EQ(static_cast<int>(nodes.size()), def.node_size());
  std::vector<NodeHandle> roots = {*g2.FindNode("total"),
                                   *g2.FindNode("xent_backprop")};
  EXPECT_EQ(DeterministicBytes(def), ExportBytes(roots));
}

TEST(ImportGraphDef, ReturnsHandlesInGraphDefOrderThatKeepNodesAlive) {
  Graph g1;
  Model m = BuildModel(g1);
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  Graph g2;
  std::vector<NodeHandle> nodes = ImportGraphDef(def, g2).value();
  ASSERT_EQ(static_cast<int>(nodes.size()), def.node_size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(g2.Describe(nodes[i])->name, def.node(i).name());
  }
  EXPECT_EQ(g2.Collect().swept, 0);
  EXPECT_EQ(g2.num_nodes(), def.node_size());
}

TEST(ImportGraphDef, IsASafePoint) {
  Graph g1;
  Model m = BuildModel(g1);
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  Graph g2;
  g2.set_gc_policy(GcPolicy{.growth_ratio = 0, .min_new_nodes = 0});
  WeakNodeHandle garbage(
      ops::Placeholder(g2, DT_FLOAT, {1}, {.name = "garbage"})
          .value()
          .handle());
  int starts = 0;
  gc::ListenerRegistration counting =
      g2.collector().Listen([&](const CollectEvent& e) {
        if (e.phase == CollectEvent::Phase::kStart) ++starts;
      });
  ASSERT_TRUE(ImportGraphDef(def, g2).ok());
  EXPECT_EQ(starts, 1);
  EXPECT_FALSE(garbage.Lock().has_value());
}

TEST(ImportGraphDef, NamesHeldOnlyByGarbageAreCollectedAndReused) {
  Graph g;  // default policy: MaybeCollect alone would not collect here
  proto::GraphDef def;
  {
    Model m = BuildModel(g);
    def = ExportGraphDef(m.roots()).value();
  }  // the model's handles are gone; its nodes wait for a collection
  ASSERT_TRUE(g.FindNode("dense/MatMul").has_value());
  absl::StatusOr<std::vector<NodeHandle>> nodes = ImportGraphDef(def, g);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(g.num_nodes(), def.node_size());
  EXPECT_EQ(g.Describe(*g.FindNode("dense/MatMul"))->name, "dense/MatMul");
}

TEST(ImportGraphDef, ANameALiveNodeHoldsIsStillRefusedAfterCollecting) {
  Graph g1;
  Model m = BuildModel(g1);
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  Graph g2;
  Output live =
      ops::Placeholder(g2, DT_FLOAT, {1}, {.name = "softmax"}).value();
  ops::Placeholder(g2, DT_FLOAT, {1}, {.name = "x"}).value();  // garbage
  absl::StatusOr<std::vector<NodeHandle>> r = ImportGraphDef(def, g2);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists) << r.status();
  EXPECT_NE(r.status().message().find("node named 'softmax'"),
            std::string::npos)
      << r.status();
  EXPECT_EQ(g2.num_nodes(), 1);  // the garbage collected, nothing imported
  EXPECT_FALSE(g2.FindNode("dense/MatMul").has_value());
  EXPECT_EQ(g2.Describe(live.handle())->name, "softmax");
}

TEST(ImportGraphDef, RefusesNodesInAScopeALiveOwnerReserved) {
  Graph g1;
  Model m = BuildModel(g1);
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  Graph g2;
  ScopeReservation dense = g2.ReserveScope("dense", "Layer 'dense'");
  absl::StatusOr<std::vector<NodeHandle>> r = ImportGraphDef(def, g2);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists) << r.status();
  EXPECT_NE(r.status().message().find("scope 'dense' is reserved by Layer "
                                      "'dense'"),
            std::string::npos)
      << r.status();
  EXPECT_EQ(g2.num_nodes(), 0);
  // Under a prefix, or once the owner is gone, the same GraphDef imports.
  EXPECT_TRUE(ImportGraphDef(def, g2, {.prefix = "copy"}).ok());
  dense = ScopeReservation();
  EXPECT_TRUE(ImportGraphDef(def, g2).ok());
}

TEST(ImportGraphDef, RefusesANodeNamedLikeAReservedScope) {
  proto::GraphDef def;
  {
    Graph g1;
    Output x = ops::Placeholder(g1, DT_FLOAT, {1}, {.name = "dense"}).value();
    def = ExportGraphDef({x}).value();
  }
  Graph g2;
  ScopeReservation dense = g2.ReserveScope("dense");
  absl::StatusOr<std::vector<NodeHandle>> r = ImportGraphDef(def, g2);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists) << r.status();
  EXPECT_NE(r.status().message().find("reserved by a live layer or model"),
            std::string::npos)
      << r.status();
  EXPECT_EQ(g2.num_nodes(), 0);
}

TEST(ImportGraphDef, NodesOutOfOrderAreImportedInDependencyOrder) {
  Graph g1;
  Model m = BuildModel(g1);
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  proto::GraphDef reversed = def;
  std::reverse(reversed.mutable_node()->begin(),
               reversed.mutable_node()->end());
  proto::GraphDef parsed;
  ASSERT_TRUE(parsed.ParseFromString(reversed.SerializeAsString()));
  ASSERT_EQ(parsed.node(0).name(), def.node(def.node_size() - 1).name());
  Graph g2;
  ASSERT_TRUE(ImportGraphDef(parsed, g2).ok());
  std::vector<NodeHandle> roots = {*g2.FindNode("total"),
                                   *g2.FindNode("xent_backprop")};
  EXPECT_EQ(DeterministicBytes(def), ExportBytes(roots));
}

TEST(ImportGraphDef, PrefixRenamesEveryNodeAndInput) {
  Graph g;
  Model m = BuildModel(g);
  proto::GraphDef def = ExportGraphDef(m.roots()).value();
  ASSERT_TRUE(ImportGraphDef(def, g, {.prefix = "copy"}).ok());
  std::optional<NodeHandle> mm = g.FindNode("copy/dense/MatMul");
  ASSERT_TRUE(mm.has_value());
  NodeInfo info = g.Describe(*mm).value();
  ASSERT_EQ(info.inputs.size(), 2u);
  EXPECT_EQ(info.inputs[0].node_name(), "copy/x");
  EXPECT_EQ(info.inputs[1].node_name(), "copy/dense/kernel");
}

TEST(ImportGraphDef, ReadsTypedTensorFieldsAndSplatValues) {
  proto::GraphDef def;
  auto add_const = [&](const std::string& name,
                       std::function<void(proto::TensorProto&)> fill) {
    proto::NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op("Const");
    (*n->mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
    proto::TensorProto& t = *(*n->mutable_attr())["value"].mutable_tensor();
    t.set_dtype(proto::DT_FLOAT);
    t.mutable_tensor_shape()->add_dim()->set_size(3);
    fill(t);
  };
  add_const("full", [](proto::TensorProto& t) {
    t.add_float_val(1);
    t.add_float_val(2);
    t.add_float_val(3);
  });
  add_const("splat", [](proto::TensorProto& t) { t.add_float_val(7); });
  Graph g;
  std::vector<NodeHandle> nodes = ImportGraphDef(def, g).value();
  auto values = [&](const NodeHandle& h) {
    Tensor t = GetAttr<Tensor>(g.Describe(h)->attrs, "value").value();
    return std::vector<float>(t.data<float>().begin(), t.data<float>().end());
  };
  EXPECT_EQ(values(nodes[0]), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(values(nodes[1]), (std::vector<float>{7, 7, 7}));
}

// --- failed imports: each leaves the graph as it was ---

class FailedImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = BuildModel(graph_);
    def_ = ExportGraphDef(model_.roots()).value();
    before_nodes_ = graph_.num_nodes();
    before_bytes_ = ExportBytes(model_.roots());
  }

  // Imports def_ after `corrupt` (with a prefix, so only the corruption can
  // fail it) and checks the status and that the graph is unchanged.
  void ExpectFailure(std::function<void(proto::GraphDef&)> corrupt,
                     absl::StatusCode code, const std::string& message,
                     ImportOptions options = {.prefix = "copy"}) {
    proto::GraphDef def = def_;
    corrupt(def);
    absl::StatusOr<std::vector<NodeHandle>> r =
        ImportGraphDef(def, graph_, options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code) << r.status();
    EXPECT_NE(r.status().message().find(message), std::string::npos)
        << r.status();
    EXPECT_EQ(graph_.num_nodes(), before_nodes_);
    EXPECT_FALSE(graph_.FindNode("copy/x").has_value());
    EXPECT_EQ(ExportBytes(model_.roots()), before_bytes_);
    // Staged, not rolled back: no node was ever added.
    EXPECT_EQ(graph_.gc_stats().peak_nodes, before_nodes_);
  }

  Graph graph_;
  Model model_;
  proto::GraphDef def_;
  int64_t before_nodes_ = 0;
  std::string before_bytes_;
};

TEST_F(FailedImportTest, UncorruptedImportSucceeds) {
  // The control for every test below: the same import, uncorrupted, works.
  ASSERT_TRUE(ImportGraphDef(def_, graph_, {.prefix = "copy"}).ok());
  EXPECT_EQ(graph_.num_nodes(), before_nodes_ + def_.node_size());
}

TEST_F(FailedImportTest, UnknownOpLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        MutableNodeDef(d, "dense/Relu")->set_op("Frobnicate");
      },
      absl::StatusCode::kInvalidArgument,
      "node 'dense/Relu' (Frobnicate): op type 'Frobnicate' is not registered");
}

TEST_F(FailedImportTest, DanglingInputLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        MutableNodeDef(d, "dense/MatMul")->set_input(1, "w");
      },
      absl::StatusCode::kInvalidArgument,
      "ImportGraphDef: node 'dense/MatMul' (MatMul): input 1 'w' is not "
      "defined");
}

TEST_F(FailedImportTest, DanglingControlInputLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        MutableNodeDef(d, "total")->set_input(2, "^nowhere");
      },
      absl::StatusCode::kInvalidArgument,
      "node 'total' (Sum): control input '^nowhere' is not defined");
}

TEST_F(FailedImportTest, DuplicateNameLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) { *d.add_node() = *FindNodeDef(d, "softmax"); },
      absl::StatusCode::kInvalidArgument,
      "node 'softmax' (Softmax): duplicate name");
}

TEST_F(FailedImportTest, CycleLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        MutableNodeDef(d, "dense/MatMul")->add_input("^softmax");
      },
      absl::StatusCode::kInvalidArgument, "is part of a cycle");
}

TEST_F(FailedImportTest, AttrOfWrongTypeLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        (*MutableNodeDef(d, "dense/MatMul")->mutable_attr())["transpose_a"]
            .set_i(1);
      },
      absl::StatusCode::kInvalidArgument,
      "node 'dense/MatMul' (MatMul): attribute 'transpose_a': must be a bool, "
      "got a int");
}

TEST_F(FailedImportTest, MissingAttrLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        MutableNodeDef(d, "dense/kernel")->mutable_attr()->erase("value");
      },
      absl::StatusCode::kInvalidArgument,
      "node 'dense/kernel' (Const): attribute 'value' (tensor) is missing");
}

TEST_F(FailedImportTest, UnknownAttrLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        (*MutableNodeDef(d, "dense/Relu")->mutable_attr())["alpha"].set_f(1);
      },
      absl::StatusCode::kInvalidArgument,
      "node 'dense/Relu' (Relu): unknown attribute 'alpha'");
}

TEST_F(FailedImportTest, TensorContentOfWrongSizeLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        proto::TensorProto* t =
            (*MutableNodeDef(d, "dense/kernel")->mutable_attr())["value"]
                .mutable_tensor();
        t->mutable_tensor_content()->resize(5 * sizeof(float));
      },
      absl::StatusCode::kInvalidArgument,
      "node 'dense/kernel' (Const): attribute 'value': tensor of shape [2,3] "
      "needs 24 bytes of tensor_content, got 20");
}

TEST_F(FailedImportTest, TypedTensorFieldOfWrongSizeLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        proto::TensorProto* t =
            (*MutableNodeDef(d, "dense/kernel")->mutable_attr())["value"]
                .mutable_tensor();
        t->clear_tensor_content();
        t->add_float_val(1);
        t->add_float_val(2);
      },
      absl::StatusCode::kInvalidArgument,
      "holds 6 elements but float_val has 2 values");
}

// A kernel of 2^29 floats declared by its shape and held as one value to
// repeat: 2 GiB, within the one-tensor cap, but with the model's other
// constants past the default budget for all tensors. Refused before any
// tensor is built.
TEST_F(FailedImportTest, SplatConstantsPastTheTensorBudgetLeaveGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        proto::TensorProto* t =
            (*MutableNodeDef(d, "dense/kernel")->mutable_attr())["value"]
                .mutable_tensor();
        t->clear_tensor_content();
        t->mutable_tensor_shape()->clear_dim();
        t->mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 29);
        t->add_float_val(1);
      },
      absl::StatusCode::kResourceExhausted,
      absl::StrCat("budget of ", kMaxImportedTensorBytes,
                   " bytes for tensors (ImportOptions::max_tensor_bytes)"));
}

TEST_F(FailedImportTest, BadDtypeEnumLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        (*MutableNodeDef(d, "x")->mutable_attr())["dtype"].set_type(
            static_cast<proto::DataType>(999));
      },
      absl::StatusCode::kInvalidArgument,
      "node 'x' (Placeholder): attribute 'dtype': bad dtype enum value 999");
}

TEST_F(FailedImportTest, BadInputStringLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        MutableNodeDef(d, "dense/MatMul")->set_input(0, "x:abc");
      },
      absl::StatusCode::kInvalidArgument,
      "node 'dense/MatMul' (MatMul): input 0 'x:abc' is not");
}

TEST_F(FailedImportTest, InputOfMissingOutputLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        MutableNodeDef(d, "dense/MatMul")->set_input(0, "x:1");
      },
      absl::StatusCode::kInvalidArgument,
      "input 0 'x:1' reads output 1 of 'x' (Placeholder), which has 1");
}

TEST_F(FailedImportTest, WrongInputCountLeavesGraphUnchanged) {
  ExpectFailure(
      [](proto::GraphDef& d) {
        MutableNodeDef(d, "dense/Relu")->add_input("x");
      },
      absl::StatusCode::kInvalidArgument,
      "node 'dense/Relu' (Relu): takes 1 data inputs, got 2");
}

TEST_F(FailedImportTest, TakenNameLeavesGraphUnchanged) {
  // Without a prefix, every name is already in the graph.
  ExpectFailure([](proto::GraphDef&) {}, absl::StatusCode::kAlreadyExists,
                "the graph already has a node named", ImportOptions{});
}

TEST_F(FailedImportTest, ShapeFunctionFailureBuildsNothing) {
  // Valid in every way the importer checks up front; MatMul's shape
  // function rejects [?,3] x [4,2]^T only once x and the kernel are built.
  ExpectFailure(
      [](proto::GraphDef& d) {
        proto::TensorProto* t =
            (*MutableNodeDef(d, "dense/kernel")->mutable_attr())["value"]
                .mutable_tensor();
        t->mutable_tensor_shape()->mutable_dim(1)->set_size(4);
        t->mutable_tensor_content()->resize(8 * sizeof(float));
      },
      absl::StatusCode::kInvalidArgument, "node 'dense/MatMul' (MatMul): ");
  // The names were never taken.
  ASSERT_TRUE(ImportGraphDef(def_, graph_, {.prefix = "copy"}).ok());
  EXPECT_TRUE(graph_.FindNode("copy/x").has_value());
}

TEST_F(FailedImportTest, FailureOfTheLastNodeLeavesEveryNameFree) {
  // The last node in GraphDef and in dependency order fails its shape
  // function ([2,3] x [2,3]: inner dimensions 3 vs 2) after every other
  // node was staged.
  proto::GraphDef def = def_;
  proto::NodeDef* last = def.add_node();
  last->set_name("zz_last");
  last->set_op("MatMul");
  last->add_input("dense/kernel");
  last->add_input("dense/kernel");
  ExpectFailure([&](proto::GraphDef& d) { d = def; },
                absl::StatusCode::kInvalidArgument,
                "node 'zz_last' (MatMul): ");
  for (const proto::NodeDef& node : def.node()) {
    EXPECT_FALSE(graph_.FindNode("copy/" + node.name()).has_value())
        << node.name();
  }
  ASSERT_TRUE(ImportGraphDef(def_, graph_, {.prefix = "copy"}).ok());
}

TEST_F(FailedImportTest, NameCollisionInsideTheDefLeavesEveryNameFree) {
  // Two nodes of the GraphDef named alike: refused before anything is
  // staged, and every other name stays free.
  ExpectFailure(
      [](proto::GraphDef& d) {
        proto::NodeDef* twin = d.add_node();
        *twin = *FindNodeDef(d, "x");
      },
      absl::StatusCode::kInvalidArgument,
      "node 'x' (Placeholder): duplicate name");
  for (const proto::NodeDef& node : def_.node()) {
    EXPECT_FALSE(graph_.FindNode("copy/" + node.name()).has_value())
        << node.name();
  }
}

TEST_F(FailedImportTest, ANameTakenByTheLastNodeOnlyLeavesGraphUnchanged) {
  // Every node but the last could be added; the last one's name is held by
  // a live node.
  NodeHandle holder =
      ops::NoOp(graph_, {.name = "copy/xent_backprop"}).value().handle();
  before_nodes_ = graph_.num_nodes();
  ExpectFailure([](proto::GraphDef&) {}, absl::StatusCode::kAlreadyExists,
                "the graph already has a node named 'copy/xent_backprop'");
  EXPECT_FALSE(graph_.FindNode("copy/total").has_value());
}

}  // namespace
}  // namespace graphgc

namespace graphgc {
namespace {

// A GraphDef as an attacker would write it: x (float [-1]) reshaped to a fed
// int64 shape, then `op` (Sum, Mean or ArgMax) over axis 1 given by a
// Const, or fed (an int32 vector "axes") when `fed_axes`.
proto::GraphDef ReshapeThenReduce(const std::string& op, bool fed_axes) {
  // Built through the generated accessors, not TextFormat: TextFormat fills
  // the attr map by reflection inside Debian's libprotobuf, which is not
  // built with ThreadSanitizer, and crashes on the instrumented map under
  // --config=tsan.
  proto::GraphDef def;
  auto add = [&](const std::string& name, const std::string& type,
                 std::vector<std::string> inputs) {
    proto::NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op(type);
    for (const std::string& in : inputs) n->add_input(in);
    return n->mutable_attr();
  };
  auto placeholder = [&](const std::string& name, proto::DataType dtype,
                         int64_t dim) {
    auto* attr = add(name, "Placeholder", {});
    (*attr)["dtype"].set_type(dtype);
    (*attr)["shape"].mutable_shape()->add_dim()->set_size(dim);
  };
  placeholder("x", proto::DT_FLOAT, -1);
  placeholder("shape", proto::DT_INT64, 2);
  auto* reshape = add("r", "Reshape", {"x", "shape"});
  (*reshape)["T"].set_type(proto::DT_FLOAT);
  (*reshape)["Tshape"].set_type(proto::DT_INT64);
  if (fed_axes) {
    placeholder("axes", proto::DT_INT32, 2);
  } else {
    auto* axes = add("axes", "Const", {});
    (*axes)["dtype"].set_type(proto::DT_INT32);
    proto::TensorProto* value = (*axes)["value"].mutable_tensor();
    value->set_dtype(proto::DT_INT32);
    value->add_int_val(1);
  }
  auto* y = add("y", op, {"r", "axes"});
  (*y)["T"].set_type(proto::DT_FLOAT);
  (*y)["Tidx"].set_type(proto::DT_INT32);
  return def;
}

// The Output named `name` among imported nodes.
Output Named(const std::vector<NodeHandle>& nodes, const std::string& name) {
  for (const NodeHandle& h : nodes) {
    Output o(h, 0);
    if (o.node_name() == name) return o;
  }
  ADD_FAILURE() << "no node " << name;
  return Output();
}

// Imports ReshapeThenReduce(op, fed_axes) into a fresh graph and runs "y"
// with x fed `x`, "shape" fed `shape` and (when fed) "axes" fed {1, -1}.
absl::Status ImportAndRun(const std::string& op, bool fed_axes,
                          std::vector<float> x, std::vector<int64_t> shape) {
  Graph g;
  std::vector<NodeHandle> nodes =
      ImportGraphDef(ReshapeThenReduce(op, fed_axes), g).value();
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<std::pair<Output, Tensor>> feeds = {
      {Named(nodes, "x"), Tensor::FromData<float>({n}, x).value()},
      {Named(nodes, "shape"), Tensor::FromData<int64_t>({2}, shape).value()}};
  if (fed_axes) {
    feeds.emplace_back(
        Named(nodes, "axes"),
        Tensor::FromData<int32_t>({2}, std::vector<int32_t>{1, -1}).value());
  }
  Session session(g);
  return session.Run(feeds, {Named(nodes, "y")}).status();
}

// 7 * 0x6DB6DB6DB6DB6DB7 is 1 modulo 2^64.
constexpr int64_t kWrapsToOneWith7 = 0x6DB6DB6DB6DB6DB7;

TEST(ImportGraphDef, ImportedReshapeRefusesAFedShapeWhoseCountWraps) {
  for (const std::string op : {"Sum", "ArgMax"}) {
    SCOPED_TRACE(op);
    absl::Status s = ImportAndRun(op, false, {5}, {7, kWrapsToOneWith7});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("Reshape 'r'"), std::string::npos) << s;
    EXPECT_NE(s.message().find("too many elements"), std::string::npos) << s;
  }
}

TEST(ImportGraphDef, ImportedReductionOfAnEmptyTensorTooLargeToHoldIsRefused) {
  // Found by reshape_reduce_fuzzer: [2^37, 0] is empty and legal, its sum
  // over axis 1 has 2^37 floats (512 GiB).
  absl::Status s = ImportAndRun("Sum", false, {}, {int64_t{1} << 37, 0});
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

TEST(ImportGraphDef, ImportedReductionRefusesFedAxesNamingADimensionTwice) {
  for (const std::string op : {"Sum", "Mean"}) {
    SCOPED_TRACE(op);
    absl::Status s = ImportAndRun(op, true, {1, 2, 3, 4, 5, 6}, {2, 3});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("more than once"), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace graphgc
