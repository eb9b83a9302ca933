// save_golden_gen ROOT: writes every case of tests/models/save_golden_cases.h
// into ROOT/<case>/. The checked-in files were written by
//   ./bazelw run //tests/models:save_golden_gen -- "$PWD/tests/models/testdata/save_golden"
// from a tree whose Save output they pin; rewrite them only for an intended
// change of the format.
#include <cstdio>
#include <string>

#include "tests/models/save_golden_cases.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s ROOT\n", argv[0]);
    return 2;
  }
  for (const std::string& name : graphgc::testing::GoldenCaseNames()) {
    const absl::Status s = graphgc::testing::WriteGoldenCase(name, argv[1]);
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), s.ToString().c_str());
      return 1;
    }
  }
  return 0;
}
