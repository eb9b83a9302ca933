// tools/cluster_local.cc: StartCluster() of the binary built without MPI.
#include "absl/strings/str_cat.h"
#include "tools/cluster.h"

namespace graphgc::grid {

absl::StatusOr<std::unique_ptr<Cluster>> StartCluster(const std::string& mode,
                                                      int*, char***) {
  if (mode == "off" || mode == "auto") return LocalCluster();
  if (mode == "on") {
    return absl::FailedPreconditionError(
        "--mpi=on: this binary is built without MPI; use "
        "//tools:grid_search_mpi");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--mpi must be auto, on or off, got '", mode, "'"));
}

}  // namespace graphgc::grid
