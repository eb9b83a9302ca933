// Sequential::Save and SaveWeights write, for the models of
// tests/models/save_golden_cases.h, the very bytes checked in under
// tests/models/testdata/save_golden/ (see save_golden_gen.cc).
#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/models/save_golden_cases.h"
#include "tests/testing/file_bytes.h"
#include "tests/testing/temp_path.h"

namespace graphgc {
namespace {

namespace fs = std::filesystem;

constexpr char kGoldenRoot[] = "tests/models/testdata/save_golden";

// The regular files under `dir`, relative to it, sorted.
std::vector<std::string> FilesUnder(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      out.push_back(entry.path().lexically_relative(dir).string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "" when equal, else where and how they differ.
std::string Difference(const std::string& want, const std::string& got) {
  const auto mismatch =
      std::mismatch(want.begin(), want.end(), got.begin(), got.end());
  if (mismatch.first == want.end() && mismatch.second == got.end()) return "";
  const size_t offset = mismatch.first - want.begin();
  return absl::StrCat(
      "first difference at byte offset ", offset, " (golden ", want.size(),
      " bytes, saved ", got.size(), " bytes; golden byte ",
      offset < want.size()
          ? absl::StrCat(static_cast<unsigned char>(want[offset]))
          : std::string("<end>"),
      ", saved byte ",
      offset < got.size()
          ? absl::StrCat(static_cast<unsigned char>(got[offset]))
          : std::string("<end>"),
      ")");
}

class SaveGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(SaveGolden, WritesTheCheckedInBytes) {
  const std::string name = GetParam();
  const std::string root = TestTempPath();
  ASSERT_TRUE(testing::WriteGoldenCase(name, root).ok());
  const fs::path golden = fs::path(kGoldenRoot) / name;
  const fs::path saved = fs::path(root) / name;
  const std::vector<std::string> files = FilesUnder(golden);
  ASSERT_FALSE(files.empty()) << "no golden files in " << golden;
  ASSERT_EQ(FilesUnder(saved), files);
  for (const std::string& file : files) {
    EXPECT_EQ(
        Difference(ReadFileBytes(golden / file), ReadFileBytes(saved / file)),
        "")
        << name << "/" << file;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SaveGolden,
                         ::testing::ValuesIn(testing::GoldenCaseNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace graphgc
