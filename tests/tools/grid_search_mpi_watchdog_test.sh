#!/usr/bin/env bash
# tests/tools/grid_search_mpi_watchdog_test.sh BINARY
#
# A stopped rank (kill -STOP) does not make rank 0 wait forever: under
# `mpirun -np 2` with --rank_timeout=3, rank 1 is stopped after its first
# of 3 trials (40 epochs each, so it cannot finish first); rank 0 finishes
# its own trials, waits 3 s for rank 1 and aborts the job with a message
# naming rank 1. The run must end non-zero (the `timeout` only turns the
# old wait-forever into a failure).
set -euo pipefail

bin=$1
data=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
tmp=${TEST_TMPDIR:-$(mktemp -d)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
fail() { echo "FAIL: $*" >&2; exit 1; }

# OpenMPI's memory hooks hide pointers from LeakSanitizer (see
# grid_search_mpi_test.sh).
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
  timeout -s KILL 240 mpirun --allow-run-as-root --oversubscribe -np 2 \
  "$bin" --data="$data" --folds=3 --units=32,64 --epochs=40 --patience=40 \
  --rank_timeout=3 \
  >"$tmp/out" 2>"$tmp/err" &
job=$!

# Rank 1: the child of our mpirun (the child of `timeout`, $job) whose
# environment says OMPI_COMM_WORLD_RANK=1.
rank1=""
for ((i = 0; i < 3000; ++i)); do
  for p in $(pgrep -P "$(pgrep -P $job | head -1)" 2>/dev/null || true); do
    if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null |
       grep -qx OMPI_COMM_WORLD_RANK=1; then
      rank1=$p
    fi
  done
  [[ -z $rank1 ]] || break
  sleep 0.1
done
[[ -n $rank1 ]] || { kill -KILL $job 2>/dev/null; fail "rank 1 never started"; }
# Stopped after its first trial (so after MPI_Init, which needs it).
for ((i = 0; i < 3000; ++i)); do
  grep -q "\[rank 1\] trial 1/" "$tmp/err" && break
  sleep 0.1
done
kill -STOP "$rank1"
echo "stopped rank 1 (pid $rank1)"

rc=0
wait $job || rc=$?
kill -KILL "$rank1" 2>/dev/null || true
[[ $rc -ne 0 ]] || fail "the run with a stopped rank succeeded"
[[ $rc -ne 137 ]] || { cat "$tmp/err" >&2; fail "rank 0 waited for the stopped rank until killed"; }
grep -q "rank 1 has been silent for 3 s (--rank_timeout)" "$tmp/err" ||
  { cat "$tmp/err" >&2; fail "no message naming the silent rank 1"; }
if grep -q "^Best configuration" "$tmp/out"; then
  fail "a run with a stopped rank printed a table"
fi
echo "ok: a stopped rank 1 aborts the job after --rank_timeout, named (exit $rc)"
