#!/usr/bin/env bash
# tests/tools/grid_search_mpi_test.sh BINARY
#
# The MPI runner of grid_search (//tools:grid_search_mpi) against the same
# binary alone (--mpi=off), on the digits set with a small grid:
#   1. `mpirun -np 2` on this machine (loopback) gives every trial the same
#      result as the single-process run, to the last printed digit;
#   2. a rank whose trial fails makes the whole run fail, with a message
#      naming the rank and the trial, and no table is printed.
set -euo pipefail

bin=$1
data=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
tmp=${TEST_TMPDIR:-$(mktemp -d)}
# Root in CI: OpenMPI refuses to run as root without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Loopback only: OpenMPI's TCP transports use no interface but lo.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
grid=(--data="$data" --folds=3 --units=8,16 --dropout=0,0.2 --epochs=4
      --patience=1 --trials)

fail() { echo "FAIL: $*" >&2; exit 1; }

# Under --config=asan: OpenMPI's runtime keeps what MPI_Init allocates and
# its memory hooks hide pointers from LeakSanitizer, which then reports
# leaks in libmpi, absl's flags and HDF5 at exit. Leak checking stays on for
# the single-process run; the ranks under mpirun keep every other ASan check.
mpirun_asan=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
run_mpi() {
  ASAN_OPTIONS=$mpirun_asan mpirun --allow-run-as-root --oversubscribe -np 2 "$@"
}

# The trial lines of a run's output.
trials() { sed -n '/^Trials/,/^$/p' "$1"; }

"$bin" --mpi=off "${grid[@]}" >"$tmp/alone.out" 2>"$tmp/alone.err" ||
  { cat "$tmp/alone.err" >&2; fail "the single-process run failed"; }
run_mpi "$bin" "${grid[@]}" >"$tmp/mpi.out" 2>"$tmp/mpi.err" ||
  { cat "$tmp/mpi.err" >&2; fail "the 2-rank run failed"; }

grep -q "on 2 processes (MPI)" "$tmp/mpi.out" ||
  fail "the mpirun run did not run on 2 ranks: $(head -1 "$tmp/mpi.out")"
n=$(trials "$tmp/alone.out" | grep -c '^  c')
[[ $n -eq 12 ]] || fail "expected 12 trial lines alone, got $n"
diff <(trials "$tmp/alone.out") <(trials "$tmp/mpi.out") ||
  fail "trial results differ between 1 and 2 ranks"
diff <(sed -n '/^config/,/^Best/p' "$tmp/alone.out" | cut -c1-70) \
     <(sed -n '/^config/,/^Best/p' "$tmp/mpi.out" | cut -c1-70) ||
  fail "the configuration tables differ"
grep -q '^Rank 1: 6 trials' "$tmp/mpi.out" || fail "rank 1 did not run 6 trials"
echo "ok: 12 trials equal on 1 and 2 ranks"

# Trial 5 (c01_f2) is rank 1's (5 % 2 == 1).
if run_mpi "$bin" "${grid[@]}" --fail_trial=5 >"$tmp/fail.out" 2>"$tmp/fail.err"; then
  fail "a run with a failing trial succeeded"
fi
grep -q "grid_search: rank 1: .*trial 5 (c01_f2)" "$tmp/fail.err" ||
  { cat "$tmp/fail.err" >&2; fail "no message naming rank 1 and trial 5"; }
if grep -q "^Best configuration" "$tmp/fail.out"; then
  fail "a failed run printed a table"
fi
echo "ok: a failing trial on rank 1 fails the run, naming rank and trial"
