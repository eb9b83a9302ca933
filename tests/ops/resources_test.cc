#include "ops/resources.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphgc {
namespace {

using ::testing::HasSubstr;

TEST(VariableResource, ReadBeforeAssignIsFailedPrecondition) {
  VariableResource v(DT_FLOAT, {2});
  v.set_node_name("layer/w");
  EXPECT_FALSE(v.initialized());
  absl::StatusOr<Tensor> t = v.Read();
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(t.status().message(), HasSubstr("'layer/w'"));
}

TEST(VariableResource, AssignChecksDtypeAndShape) {
  VariableResource v(DT_FLOAT, {-1, 2});
  EXPECT_TRUE(v.Assign(Tensor::Zeros(DT_FLOAT, {3, 2}).value()).ok());
  EXPECT_TRUE(v.initialized());
  EXPECT_EQ(v.Assign(Tensor::Zeros(DT_FLOAT, {3, 3}).value()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.Assign(Tensor::Zeros(DT_INT32, {3, 2}).value()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(v.Read().value().shape(), (TensorShape{3, 2}));
}

TEST(RandomResource, SameSeedsSameNumbers) {
  RandomResource a(5, 6), b(5, 6), c(5, 7);
  std::vector<float> va(8), vb(8), vc(8);
  a.FillUniform(absl::MakeSpan(va));
  b.FillUniform(absl::MakeSpan(vb));
  c.FillUniform(absl::MakeSpan(vc));
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
}

}  // namespace
}  // namespace graphgc
