// The hostile-load driver of hostile_load_test.sh:
//   hostile_load make DIR   writes a model directory whose config.json
//                           declares 3.75 GiB of weights (Dense(4 -> 3 *
//                           2^26)) beside a sparse 3 GiB model.weights.h5
//                           (nothing on disk);
//   hostile_load load DIR   LoadModel(DIR): prints the status and the peak
//                           resident set in KiB, exits 0 when the load was
//                           refused with ResourceExhausted;
//   hostile_load sanitized  prints 1 under AddressSanitizer or
//                           ThreadSanitizer (which need more address space
//                           than a ulimit -v leaves), else 0.
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/saving.h"
#include "nlohmann/json.hpp"

namespace {

int Make(const std::string& dir) {
  using Json = nlohmann::json;
  std::filesystem::create_directories(dir);
  const Json config = {{"class_name", "Sequential"},
                       {"config",
                        {{"name", "hostile"},
                         {"layers",
                          {{{"class_name", "InputLayer"},
                            {"config", {{"batch_shape", {nullptr, 4}}}}},
                           {{"class_name", "Dense"},
                            {"config", {{"units", int64_t{3} << 26}}}}}}}}};
  std::ofstream(dir + "/config.json") << config.dump();
  std::ofstream(dir + "/model.weights.h5") << "";
  std::filesystem::resize_file(dir + "/model.weights.h5", int64_t{3} << 30);
  return 0;
}

int Load(const std::string& dir) {
  const absl::StatusOr<graphgc::Sequential> m = graphgc::LoadModel(dir);
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  std::printf("status: %s\npeak_kib: %ld\n", m.status().ToString().c_str(),
              usage.ru_maxrss);
  return absl::IsResourceExhausted(m.status()) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "sanitized") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    std::puts("1");
#else
    std::puts("0");
#endif
    return 0;
  }
  if (argc != 3 || (mode != "make" && mode != "load")) {
    std::fprintf(stderr, "usage: hostile_load make|load DIR | sanitized\n");
    return 2;
  }
  return mode == "make" ? Make(argv[2]) : Load(argv[2]);
}
