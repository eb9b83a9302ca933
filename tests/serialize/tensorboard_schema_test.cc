// Files graphgc writes decode with TensorBoard's own .proto schema.
//
// Our serialize/*.proto live in package graphgc.proto; the wire format does
// not carry the package, so TensorBoard must read them as its own Event,
// Summary and GraphDef. testdata/tensorboard_proto/ holds TensorBoard's
// vendored copies of TensorFlow's protos (package `tensorboard`), verbatim;
// protoc compiles them into a descriptor set (the BUILD's genrule) and
// every record of a real fit's event files is parsed with it: nothing may be
// left as an unknown field, and the text form must equal our own classes' text
// form field for field.

#include "tests/testing/tensorboard_schema.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "models/callbacks.h"
#include "models/layers.h"
#include "models/losses.h"
#include "models/optimizers.h"
#include "models/sequential.h"
#include "runtime/tensor.h"
#include "serialize/event.pb.h"
#include "serialize/graph.pb.h"
#include "serialize/tfrecord.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

namespace pb = ::google::protobuf;

using ::graphgc::testing::TensorBoardSchema;

// Paths of the fields, anywhere in `m`, that the schema does not declare.
void UnknownFields(const pb::Message& m, const std::string& path,
                   std::vector<std::string>& out) {
  const pb::Reflection* r = m.GetReflection();
  if (!r->GetUnknownFields(m).empty()) out.push_back(path);
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const pb::FieldDescriptor* f : fields) {
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const std::string sub = absl::StrCat(path, ".", f->name());
    if (f->is_repeated()) {
      for (int i = 0; i < r->FieldSize(m, f); ++i) {
        UnknownFields(r->GetRepeatedMessage(m, f, i), sub, out);
      }
    } else {
      UnknownFields(r->GetMessage(m, f), sub, out);
    }
  }
}

std::string Text(const pb::Message& m) {
  std::string text;
  pb::TextFormat::Printer printer;
  printer.PrintToString(m, &text);
  return text;
}

std::vector<std::string> Records(const std::string& path) {
  std::vector<std::string> records;
  auto reader = TFRecordReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return records;
  while (true) {
    absl::StatusOr<std::optional<std::string>> record = (*reader)->Read();
    EXPECT_TRUE(record.ok()) << record.status();
    if (!record.ok() || !record->has_value()) break;
    records.push_back(**record);
  }
  return records;
}

// A fit of a small classifier with a TensorBoard callback writing batch and
// epoch scalars, the graph, and a validation file.
class TensorBoardSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_dir_ = TestTempPath();
    absl::StatusOr<Sequential> model = Sequential::Create({
        layers::Input({4}),
        layers::Dense(8, {.activation = "relu"}),
        layers::Dense(3, {.activation = "softmax"}),
    });
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE(model
                    ->Compile({.optimizer = optimizers::Adam(),
                               .loss = losses::SparseCategoricalCrossentropy(),
                               .metrics = {"accuracy"}})
                    .ok());
    std::vector<float> xs(16 * 4);
    std::vector<int32_t> ys(16);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.1f * (i % 7);
    for (size_t i = 0; i < ys.size(); ++i) ys[i] = i % 3;
    absl::StatusOr<Tensor> x = Tensor::FromData<float>({16, 4}, xs);
    absl::StatusOr<Tensor> y = Tensor::FromData<int32_t>({16}, ys);
    ASSERT_TRUE(x.ok() && y.ok());
    tensorboard_ =
        callbacks::TensorBoard::Create({.log_dir = log_dir_, .update_freq = 1});
    absl::StatusOr<History> h =
        model->Fit(*x, *y,
                   {.epochs = 2,
                    .batch_size = 8,
                    .verbose = 0,
                    .callbacks = {tensorboard_},
                    .validation_data = std::make_pair(*x, *y)});
    ASSERT_TRUE(h.ok()) << h.status();
  }

  void TearDown() override { std::filesystem::remove_all(log_dir_); }

  std::string log_dir_;
  std::shared_ptr<callbacks::TensorBoard> tensorboard_;
};

TEST_F(TensorBoardSchemaTest, VendoredSchemaCompiles) {
  TensorBoardSchema schema;
  EXPECT_NE(schema.Find("Event"), nullptr) << schema.errors();
  EXPECT_NE(schema.Find("GraphDef"), nullptr) << schema.errors();
  EXPECT_EQ(schema.errors(), "");
}

TEST_F(TensorBoardSchemaTest, EveryEventDecodesFieldForField) {
  TensorBoardSchema schema;
  const pb::Descriptor* event_type = schema.Find("Event");
  ASSERT_NE(event_type, nullptr) << schema.errors();
  int scalars = 0;
  for (const std::string& path :
       {tensorboard_->train_path(), tensorboard_->validation_path()}) {
    const std::vector<std::string> records = Records(path);
    ASSERT_GE(records.size(), 3u) << path;
    for (size_t i = 0; i < records.size(); ++i) {
      SCOPED_TRACE(absl::StrCat(path, " record ", i));
      proto::Event ours;
      ASSERT_TRUE(ours.ParseFromString(records[i]));
      std::unique_ptr<pb::Message> theirs = schema.New(event_type);
      ASSERT_TRUE(theirs->ParseFromString(records[i]));
      std::vector<std::string> unknown;
      UnknownFields(*theirs, "Event", unknown);
      EXPECT_TRUE(unknown.empty()) << "undeclared fields in " << unknown[0];
      EXPECT_EQ(Text(*theirs), Text(ours));
      for (const proto::Summary::Value& v : ours.summary().value()) {
        if (v.value_case() == proto::Summary::Value::kSimpleValue) ++scalars;
      }
    }
  }
  // batch_loss for each of 4 batches, epoch_loss and epoch_accuracy for each
  // of 2 epochs in train, the same 4 epoch scalars in validation.
  EXPECT_GE(scalars, 4 + 4 + 4);
}

TEST_F(TensorBoardSchemaTest, TheGraphDecodesAsTensorBoardsGraphDef) {
  TensorBoardSchema schema;
  const pb::Descriptor* graph_type = schema.Find("GraphDef");
  ASSERT_NE(graph_type, nullptr) << schema.errors();
  int graphs = 0;
  for (const std::string& record : Records(tensorboard_->train_path())) {
    proto::Event event;
    ASSERT_TRUE(event.ParseFromString(record));
    if (event.graph_def().empty()) continue;
    ++graphs;
    proto::GraphDef ours;
    ASSERT_TRUE(ours.ParseFromString(event.graph_def()));
    std::unique_ptr<pb::Message> theirs = schema.New(graph_type);
    ASSERT_TRUE(theirs->ParseFromString(event.graph_def()));
    std::vector<std::string> unknown;
    UnknownFields(*theirs, "GraphDef", unknown);
    EXPECT_TRUE(unknown.empty()) << "undeclared fields in " << unknown[0];
    EXPECT_EQ(Text(*theirs), Text(ours));
    EXPECT_EQ(ours.node_size(), tensorboard_->graph_nodes());
  }
  EXPECT_EQ(graphs, 1);
}

}  // namespace
}  // namespace graphgc
