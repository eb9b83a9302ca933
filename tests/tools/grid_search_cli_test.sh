#!/usr/bin/env bash
# tests/tools/grid_search_cli_test.sh BINARY CASE
#
# What //tools:grid_search refuses before any trial runs, one CASE per
# sh_test (tests/tools/BUILD), each a clean exit 1 with a message:
#   gzip_bomb         a 1 MiB gzip CSV inflating to 1 GiB of short rows,
#                     under an address-space limit: ResourceExhausted
#                     naming the file and the budget, no abort
#   huge_label        a label of 2147483646 in a 40-row CSV: refused
#                     naming the row (no 16 GiB output layer)
#   huge_grid         a grid of 2^32 trials (an int wraps to 0): refused,
#                     counted, before the grid is expanded
#   bad_save_best     --save_best under a regular file: refused before the
#                     first trial
#   mpi_launch        started as one of 2 MPI ranks (mpirun -np 2): refused
#                     with a hint to use grid_search_mpi
set -euo pipefail

bin=$1
case_name=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail() { echo "FAIL: $*" >&2; exit 1; }

# 40 rows of 4 features, labels 0/1.
small_csv() {
  local i
  for ((i = 0; i < 40; ++i)); do
    echo "$((i % 7)),$((i % 5)),$((i % 3)),$((i % 2 * 9)),$((i % 2))"
  done
}

# Runs the binary (timeout: a hang fails the test rather than stalling it);
# its exit code goes to $rc, its output to $tmp/out and $tmp/err.
run() {
  rc=0
  timeout 300 "$bin" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

# Expects exit 1 (a clean refusal: not 0, not a signal or a sanitizer's
# abort) and the stderr text $1.
expect_refused() {
  [[ $rc -eq 1 ]] || { cat "$tmp/err" >&2; fail "exit $rc, expected 1"; }
  grep -qF -- "$1" "$tmp/err" ||
    { cat "$tmp/err" >&2; fail "no message '$1'"; }
  if grep -q "trial 1/" "$tmp/err"; then fail "a trial ran"; fi
}

case $case_name in
  gzip_bomb)
    # 1 MiB of "0,0\n" gzip'd (about 1 KiB), the member repeated 1024
    # times: 1 GiB of text, 268 million rows.
    head -c $((1 << 20)) < <(yes 0,0) | gzip -9 >"$tmp/member.gz"
    for ((i = 0; i < 10; ++i)); do  # doubled 10 times: 1024 members
      cat "$tmp/member.gz" "$tmp/member.gz" >"$tmp/double.gz"
      mv "$tmp/double.gz" "$tmp/member.gz"
    done
    mv "$tmp/member.gz" "$tmp/bomb.csv.gz"
    # 2 GiB of address space. Under ASan/TSan (their options are set by
    # --config=asan/tsan) the shadow memory needs terabytes of it: no limit.
    if [[ -z ${ASAN_OPTIONS:-} && -z ${TSAN_OPTIONS:-} ]]; then
      ulimit -v $((2 << 20))
    fi
    run --data="$tmp/bomb.csv.gz" --folds=2 --epochs=1
    expect_refused "RESOURCE_EXHAUSTED: $tmp/bomb.csv.gz"
    expect_refused "budget of 268435456 bytes"
    ;;
  huge_label)
    { small_csv | head -16; echo "1,2,3,4,2147483646"; small_csv | tail -23; } \
      >"$tmp/label.csv"
    run --data="$tmp/label.csv" --folds=2 --epochs=1 --units=4
    expect_refused "data row 17: label 2147483646"
    ;;
  huge_grid)
    small_csv >"$tmp/small.csv"
    {
      echo "units = $(seq -s, 1 65536)"
      echo "dropout = $(seq -s, 0 32767 | sed 's/\([0-9]*\)/0.0000\1/g')"
    } >"$tmp/grid.txt"
    run --data="$tmp/small.csv" --grid="$tmp/grid.txt" --folds=2 --epochs=1
    expect_refused "= 4294967296 trials, over the maximum of 100000 (--max_trials)"
    ;;
  bad_save_best)
    small_csv >"$tmp/small.csv"
    : >"$tmp/a_file"
    run --data="$tmp/small.csv" --folds=2 --epochs=1 --units=4 \
      --save_best="$tmp/a_file/model"
    expect_refused "--save_best $tmp/a_file/model: cannot be created"
    ;;
  mpi_launch)
    small_csv >"$tmp/small.csv"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
    rc=0
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
      timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 "$bin" \
      --data="$tmp/small.csv" --folds=2 --epochs=1 --units=4 \
      >"$tmp/out" 2>"$tmp/err" || rc=$?
    [[ $rc -ne 0 ]] || { cat "$tmp/out" >&2; fail "mpirun -np 2 grid_search succeeded"; }
    grep -qF "Use grid_search_mpi" "$tmp/err" ||
      { cat "$tmp/err" >&2; fail "no hint to use grid_search_mpi"; }
    if grep -q "trial 1/" "$tmp/err"; then fail "a trial ran"; fi
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
