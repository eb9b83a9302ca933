#include "tests/testing/temp_path.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "gtest/gtest.h"

namespace graphgc {

std::string TestTempPath(std::string_view suffix) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const ::testing::TestInfo* info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info != nullptr ? info->name() : "no_test";
  std::replace(name.begin(), name.end(), '/', '_');  // "Test/0": one level
  std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
  path += suffix;
  std::error_code ec;  // nothing there is fine
  std::filesystem::remove_all(path, ec);
  return path;
}

}  // namespace graphgc
