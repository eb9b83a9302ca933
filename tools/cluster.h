// tools/cluster.h
//
// Where the trials of a grid search run: one process alone, or the ranks of
// an MPI job (tools/cluster_mpi.cc, in //tools:grid_search_mpi only, so a
// machine without OpenMPI builds everything else). Rank r runs the trials
// whose index is r modulo size(); Gather() brings every rank's results and
// process stats to rank 0.
//
// StartCluster() is defined twice, once per binary: cluster_local.cc (always
// alone) and cluster_mpi.cc (MPI when launched by mpirun). Not thread-safe:
// one cluster per process, used from main's thread.
#ifndef GRAPHGC_TOOLS_CLUSTER_H_
#define GRAPHGC_TOOLS_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/grid_search_lib.h"

namespace graphgc::grid {

class Cluster {
 public:
  virtual ~Cluster() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // On rank 0: fills `results` with every rank's results (its own first)
  // and `stats` with every rank's stats, in rank order. On the others: sends
  // theirs and leaves both empty. Errors name the rank that sent bad data.
  // Rank 0 waits for each rank at most silence_limit() seconds after its
  // last word (a Heartbeat() or its results): a rank that is stopped or
  // hung gets DeadlineExceeded naming it, instead of a wait forever.
  virtual absl::Status Gather(const std::vector<TrialResult>& mine,
                              const ProcessStats& my_stats,
                              std::vector<TrialResult>* results,
                              std::vector<ProcessStats>* stats) = 0;
  // Ends every process of the job now with exit code `code` (after a rank
  // failed: no rank may wait for it forever).
  [[noreturn]] virtual void Abort(int code) = 0;
  // Leaves the job cleanly (MPI_Finalize); call once, at the end.
  virtual absl::Status Finish() = 0;
  // Tells rank 0 this rank is alive (after each trial); no-op alone.
  virtual void Heartbeat() {}

  // How long rank 0's Gather() waits for a silent rank (seconds, > 0).
  double silence_limit() const { return silence_limit_; }
  void set_silence_limit(double seconds) { silence_limit_ = seconds; }

 private:
  double silence_limit_ = 600;
};

// One process alone: rank 0 of 1.
std::unique_ptr<Cluster> LocalCluster();

// mode "off": LocalCluster(). "auto": MPI when started by mpirun (OpenMPI's
// OMPI_COMM_WORLD_SIZE or PMIX_RANK in the environment) and the binary has
// MPI, else alone. "on": MPI or an error. Anything else: InvalidArgument.
// The binary without MPI refuses (FailedPrecondition, pointing to
// grid_search_mpi) to start as one of several MPI ranks
// (OMPI_COMM_WORLD_SIZE or PMI_SIZE above 1, or PMIX_RANK set): each rank
// would run the whole search alone, into the same outputs.
absl::StatusOr<std::unique_ptr<Cluster>> StartCluster(const std::string& mode,
                                                      int* argc, char*** argv);

}  // namespace graphgc::grid

#endif  // GRAPHGC_TOOLS_CLUSTER_H_
