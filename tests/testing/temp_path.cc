#include "tests/testing/temp_path.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "gtest/gtest.h"

namespace graphgc {

std::string TestTempPath(std::string_view suffix) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const ::testing::TestInfo* info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/" +
                     (info != nullptr ? info->name() : "no_test");
  path += suffix;
  std::error_code ec;  // nothing there is fine
  std::filesystem::remove_all(path, ec);
  return path;
}

}  // namespace graphgc
