// tools/cluster.cc: the single-process cluster.
#include "tools/cluster.h"

#include <cstdlib>

namespace graphgc::grid {
namespace {

class Local : public Cluster {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  absl::Status Gather(const std::vector<TrialResult>& mine,
                      const ProcessStats& my_stats,
                      std::vector<TrialResult>* results,
                      std::vector<ProcessStats>* stats) override {
    *results = mine;
    *stats = {my_stats};
    return absl::OkStatus();
  }
  [[noreturn]] void Abort(int code) override { std::exit(code); }
  absl::Status Finish() override { return absl::OkStatus(); }
};

}  // namespace

std::unique_ptr<Cluster> LocalCluster() { return std::make_unique<Local>(); }

}  // namespace graphgc::grid
