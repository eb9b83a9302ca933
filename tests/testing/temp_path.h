// tests/testing/temp_path.h
//
// A scratch path for the running test: "<dir>/<test name><suffix>", where
// <dir> is $TEST_TMPDIR (Bazel gives each test its own) or /tmp outside
// Bazel, and <test name> is gtest's name of the running test (a
// parameterized test's "Name/0" as "Name_0"). Whatever an
// earlier run left there is removed first, so the test starts from nothing
// at that path (the test makes the file or directory it needs); a test
// removes it again in its TearDown.
//
// Example:
//   log_dir_ = TestTempPath();              // .../LogsEveryEpoch
//   csv_path_ = TestTempPath(".csv");       // .../LogsEveryEpoch.csv
#ifndef GRAPHGC_TESTS_TESTING_TEMP_PATH_H_
#define GRAPHGC_TESTS_TESTING_TEMP_PATH_H_

#include <string>
#include <string_view>

namespace graphgc {

// The path above for the test running now (call it from a test body or a
// fixture's SetUp); outside a test, "<dir>/no_test<suffix>".
std::string TestTempPath(std::string_view suffix = "");

}  // namespace graphgc

#endif  // GRAPHGC_TESTS_TESTING_TEMP_PATH_H_
