// tools/cluster_local.cc: StartCluster() of the binary built without MPI.
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/cluster.h"

namespace graphgc::grid {
namespace {

// What says this process is one of several ranks of an MPI job, or "".
std::string MpiLaunch() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* value = std::getenv(name);
    int size = 0;
    if (value != nullptr && (!absl::SimpleAtoi(value, &size) || size > 1)) {
      return absl::StrCat(name, "=", value);
    }
  }
  // PMIx gives a rank but no size variable; mpirun -np 1 sets the size.
  if (std::getenv("PMIX_RANK") != nullptr &&
      std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) {
    return "PMIX_RANK";
  }
  return "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<Cluster>> StartCluster(const std::string& mode,
                                                      int*, char***) {
  if (mode != "off" && mode != "auto" && mode != "on") {
    return absl::InvalidArgumentError(
        absl::StrCat("--mpi must be auto, on or off, got '", mode, "'"));
  }
  const std::string launch = MpiLaunch();
  if (!launch.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "started as one of several MPI ranks (", launch,
        "), but this binary is built without MPI: every rank would run the "
        "whole search into the same outputs. Use grid_search_mpi "
        "(//tools:grid_search_mpi) under mpirun, or run grid_search alone"));
  }
  if (mode == "on") {
    return absl::FailedPreconditionError(
        "--mpi=on: this binary is built without MPI; use "
        "//tools:grid_search_mpi");
  }
  return LocalCluster();
}

}  // namespace graphgc::grid
