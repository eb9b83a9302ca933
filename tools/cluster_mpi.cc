// tools/cluster_mpi.cc: StartCluster() of //tools:grid_search_mpi (OpenMPI).
//
// Gather protocol, rank r > 0 to rank 0, in order: the number of results
// (MPI_INT), the results as bytes, the stats as bytes; rank 0 receives from
// ranks 1..size-1 in turn. TrialResult and ProcessStats are trivially
// copyable and every rank runs the same binary, so bytes are enough.
#include <mpi.h>

#include <climits>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "tools/cluster.h"

namespace graphgc::grid {
namespace {

constexpr int kTagCount = 1;
constexpr int kTagResults = 2;
constexpr int kTagStats = 3;

absl::Status MpiError(int rc, absl::string_view what) {
  if (rc == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return absl::InternalError(
      absl::StrCat(what, ": ", absl::string_view(text, len)));
}

class Mpi : public Cluster {
 public:
  Mpi(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  absl::Status Gather(const std::vector<TrialResult>& mine,
                      const ProcessStats& my_stats,
                      std::vector<TrialResult>* results,
                      std::vector<ProcessStats>* stats) override {
    results->clear();
    stats->clear();
    constexpr int kMaxCount = INT_MAX / static_cast<int>(sizeof(TrialResult));
    if (rank_ != 0) {
      if (mine.size() > static_cast<size_t>(kMaxCount)) {
        return absl::ResourceExhaustedError("too many results to send");
      }
      int count = static_cast<int>(mine.size());
      absl::Status s =
          MpiError(MPI_Send(&count, 1, MPI_INT, 0, kTagCount, MPI_COMM_WORLD),
                   "MPI_Send count");
      if (s.ok()) {
        s = MpiError(
            MPI_Send(mine.data(), count * static_cast<int>(sizeof(TrialResult)),
                     MPI_BYTE, 0, kTagResults, MPI_COMM_WORLD),
            "MPI_Send results");
      }
      if (s.ok()) {
        s = MpiError(MPI_Send(&my_stats, sizeof(ProcessStats), MPI_BYTE, 0,
                              kTagStats, MPI_COMM_WORLD),
                     "MPI_Send stats");
      }
      return s;
    }
    *results = mine;
    stats->push_back(my_stats);
    for (int r = 1; r < size_; ++r) {
      const std::string from = absl::StrCat("from rank ", r);
      int count = 0;
      absl::Status s = MpiError(MPI_Recv(&count, 1, MPI_INT, r, kTagCount,
                                         MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                                absl::StrCat("MPI_Recv count ", from));
      if (!s.ok()) return s;
      if (count < 0 || count > kMaxCount) {
        return absl::DataLossError(
            absl::StrCat("bad result count ", count, " ", from));
      }
      std::vector<TrialResult> theirs(count);
      s = MpiError(
          MPI_Recv(theirs.data(), count * static_cast<int>(sizeof(TrialResult)),
                   MPI_BYTE, r, kTagResults, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          absl::StrCat("MPI_Recv results ", from));
      if (!s.ok()) return s;
      ProcessStats their_stats;
      s = MpiError(MPI_Recv(&their_stats, sizeof(ProcessStats), MPI_BYTE, r,
                            kTagStats, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                   absl::StrCat("MPI_Recv stats ", from));
      if (!s.ok()) return s;
      for (const TrialResult& t : theirs) {
        if (t.index % size_ != r || t.rank != r) {
          return absl::DataLossError(absl::StrCat(
              "rank ", r, " sent trial ", t.index, ", not one of its own"));
        }
      }
      results->insert(results->end(), theirs.begin(), theirs.end());
      stats->push_back(their_stats);
    }
    return absl::OkStatus();
  }

  [[noreturn]] void Abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::exit(code);
  }

  absl::Status Finish() override {
    return MpiError(MPI_Finalize(), "MPI_Finalize");
  }

 private:
  int rank_;
  int size_;
};

bool LaunchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Cluster>> StartCluster(const std::string& mode,
                                                      int* argc, char*** argv) {
  if (mode != "off" && mode != "auto" && mode != "on") {
    return absl::InvalidArgumentError(
        absl::StrCat("--mpi must be auto, on or off, got '", mode, "'"));
  }
  if (mode == "off" || (mode == "auto" && !LaunchedByMpirun())) {
    return LocalCluster();
  }
  absl::Status s = MpiError(MPI_Init(argc, argv), "MPI_Init");
  if (!s.ok()) return s;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<Cluster>(std::make_unique<Mpi>(rank, size));
}

}  // namespace graphgc::grid
