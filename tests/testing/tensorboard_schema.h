// tests/testing/tensorboard_schema.h
//
// TensorBoard's own .proto schema for tests: the FileDescriptorSet protoc
// made of the protos vendored in tests/serialize/testdata/tensorboard_proto
// (//tests/serialize:tensorboard_descriptors.pb, package `tensorboard`,
// in the runfiles of every test that depends on this library), built into
// a DescriptorPool so messages can be parsed with TensorBoard's types rather
// than graphgc's.
#ifndef GRAPHGC_TESTS_TESTING_TENSORBOARD_SCHEMA_H_
#define GRAPHGC_TESTS_TESTING_TENSORBOARD_SCHEMA_H_

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/dynamic_message.h"

namespace graphgc::testing {

// The path of `path` (relative to the workspace root) in the test's
// runfiles.
inline std::string RunfilePath(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/",
                      workspace ? workspace : "graphgc", "/", path);
}

class TensorBoardSchema {
 public:
  TensorBoardSchema() {
    const std::string path =
        RunfilePath("tests/serialize/tensorboard_descriptors.pb");
    std::ifstream in(path, std::ios::binary);
    google::protobuf::FileDescriptorSet set;
    if (!set.ParseFromIstream(&in)) {
      errors_ = "cannot read " + path;
      return;
    }
    for (const google::protobuf::FileDescriptorProto& file : set.file()) {
      if (pool_.BuildFile(file) == nullptr) errors_ += file.name() + " ";
    }
  }

  // The descriptor of tensorboard.<name>, or null.
  const google::protobuf::Descriptor* Find(const std::string& name) const {
    return pool_.FindMessageTypeByName("tensorboard." + name);
  }

  // An empty message of `type`, which Find returned.
  std::unique_ptr<google::protobuf::Message> New(
      const google::protobuf::Descriptor* type) {
    return std::unique_ptr<google::protobuf::Message>(
        factory_.GetPrototype(type)->New());
  }

  // What did not load: "" when the whole set built.
  const std::string& errors() const { return errors_; }

 private:
  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_;
  std::string errors_;
};

}  // namespace graphgc::testing

#endif  // GRAPHGC_TESTS_TESTING_TENSORBOARD_SCHEMA_H_
