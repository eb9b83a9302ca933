// tools/cluster_mpi.cc: StartCluster() of //tools:grid_search_mpi (OpenMPI).
//
// Gather protocol, rank r > 0 to rank 0, in order: the number of results
// (MPI_INT), the results as bytes, the stats as bytes; rank 0 receives from
// ranks 1..size-1 in turn. TrialResult and ProcessStats are trivially
// copyable and every rank runs the same binary, so bytes are enough.
// Before that, after each trial, rank r > 0 sends rank 0 a heartbeat (one
// MPI_INT, small enough to be sent eagerly while rank 0 is busy). Rank 0
// receives with MPI_Irecv and polls (MPI_Test), draining heartbeats
// (MPI_Iprobe) as they come: a rank silent for silence_limit() seconds
// ends the wait with DeadlineExceeded naming it, and the caller aborts the
// job, where MPI_Recv would wait forever for a stopped rank.
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tools/cluster.h"

namespace graphgc::grid {
namespace {

constexpr int kTagCount = 1;
constexpr int kTagResults = 2;
constexpr int kTagStats = 3;
constexpr int kTagHeartbeat = 4;

using Clock = std::chrono::steady_clock;

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
      Clock::time_point last_word = Clock::now();
      int count = 0;
      absl::Status s = RecvFrom(r, &count, 1, MPI_INT, kTagCount,
                                "result count", &last_word);
      if (!s.ok()) return s;
      if (count < 0 || count > kMaxCount) {
        return absl::DataLossError(
            absl::StrCat("bad result count ", count, " ", from));
      }
      std::vector<TrialResult> theirs(count);
      s = RecvFrom(r, theirs.data(),
                   count * static_cast<int>(sizeof(TrialResult)), MPI_BYTE,
                   kTagResults, "results", &last_word);
      if (!s.ok()) return s;
      ProcessStats their_stats;
      s = RecvFrom(r, &their_stats, sizeof(ProcessStats), MPI_BYTE, kTagStats,
                   "stats", &last_word);
      if (!s.ok()) return s;
      DrainHeartbeats(r, &last_word);
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

  void Heartbeat() override {
    if (rank_ == 0) return;
    int alive = 1;
    // A failed heartbeat is no error of this rank's work: rank 0 sees the
    // silence, or the results, which matter.
    MPI_Send(&alive, 1, MPI_INT, 0, kTagHeartbeat, MPI_COMM_WORLD);
  }

  [[noreturn]] void Abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::exit(code);
  }

  absl::Status Finish() override {
    return MpiError(MPI_Finalize(), "MPI_Finalize");
  }

 private:
  // Receives any heartbeats rank `from` has sent; each one is word from it.
  void DrainHeartbeats(int from, Clock::time_point* last_word) {
    while (true) {
      int pending = 0;
      if (MPI_Iprobe(from, kTagHeartbeat, MPI_COMM_WORLD, &pending,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS ||
          !pending) {
        return;
      }
      int alive = 0;
      if (MPI_Recv(&alive, 1, MPI_INT, from, kTagHeartbeat, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        return;
      }
      *last_word = Clock::now();
    }
  }

  // MPI_Recv from rank `from` that gives up once the rank has been silent
  // (no heartbeat, no message) for silence_limit() seconds.
  absl::Status RecvFrom(int from, void* buffer, int count, MPI_Datatype type,
                        int tag, absl::string_view what,
                        Clock::time_point* last_word) {
    const std::string where =
        absl::StrCat("MPI_Irecv ", what, " from rank ", from);
    MPI_Request request;
    absl::Status s = MpiError(
        MPI_Irecv(buffer, count, type, from, tag, MPI_COMM_WORLD, &request),
        where);
    if (!s.ok()) return s;
    const auto limit = std::chrono::duration<double>(silence_limit());
    while (true) {
      int done = 0;
      s = MpiError(MPI_Test(&request, &done, MPI_STATUS_IGNORE), where);
      if (!s.ok()) return s;
      if (done) {
        *last_word = Clock::now();
        return absl::OkStatus();
      }
      DrainHeartbeats(from, last_word);
      if (Clock::now() - *last_word > limit) {
        // The job is aborted next; the request is left as it is.
        return absl::DeadlineExceededError(absl::StrCat(
            "rank ", from, " has been silent for ", silence_limit(),
            " s (--rank_timeout) while rank 0 waits for its ", what,
            ": it is stopped, hung or far slower than the others; aborting "
            "the job"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

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
