// tests/testing/file_bytes.h
//
// A file's whole contents as a string, and a string as a file's contents,
// for tests that make input files and look at output files. Test code only:
// unbounded, and a failure shows as what the test then compares.
//
// Example:
//   WriteFileBytes(path, "a,b\n1,2\n");
//   EXPECT_EQ(ReadFileBytes(path), "a,b\n1,2\n");
#ifndef GRAPHGC_TESTS_TESTING_FILE_BYTES_H_
#define GRAPHGC_TESTS_TESTING_FILE_BYTES_H_

#include <string>
#include <string_view>

namespace graphgc {

// Every byte of the file at `path`; "" when it cannot be read.
std::string ReadFileBytes(const std::string& path);

// Makes the file at `path` hold exactly `bytes` (created or truncated).
void WriteFileBytes(const std::string& path, std::string_view bytes);

}  // namespace graphgc

#endif  // GRAPHGC_TESTS_TESTING_FILE_BYTES_H_
