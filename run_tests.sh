#!/usr/bin/env bash
# The test command, in two tiers (docs/testing.md):
#
#   ./run_tests.sh         the contributor tier: installs what is missing,
#                          then runs every test target in the default
#                          configuration (bazel test //..., which also builds
#                          every binary and benchmark and runs the source
#                          lints of tests/lint) and the Python package's
#                          pytest suites (tests/python), each test counted.
#   ./run_tests.sh --all   everything (.ci/run calls this one):
#  1. every test target (bazel test //...), which also builds every binary
#     and benchmark,
#  1b. the Python package's pytest suites (tests/python), each test
#     counted, then again against the wheel (setup.py) installed into a
#     fresh venv,
#  2. every test target again under AddressSanitizer+UBSan and under
#     ThreadSanitizer (--build_tests_only: benchmarks and tools are built
#     only in step 1),
#  2b. the Python module built under ThreadSanitizer and its threaded
#     pytest tests run with libtsan preloaded (tests/python/tsan_stage.sh),
#     each test counted,
#  3. the downstream workspace in tests/downstream, which consumes graphgc as
#     @graphgc exactly as API.md says, built plain and under the consumer's
#     own AddressSanitizer and ThreadSanitizer flags,
#  4. the CMake build (tests/cmake/cmake_stage.sh): its file lists checked
#     against Bazel's, graphgc built (-j2, ccache) and installed into a
#     scratch prefix, and tests/downstream_cmake built and run against it,
#     with find_package(graphgc) and with pkg-config,
#  4b. clang's thread-safety analysis as errors over every C++ source
#     (tests/lint/thread_safety.sh: the fuzzers' clang build for gc ops
#     runtime serialize util, a syntax-only pass, cached per file, for the
#     rest: models data tools python/ext bench examples tests),
#  5. a short run (FUZZ_SECONDS, default 30 CPU-seconds each, measured as
#     CPU time so the stage loses nothing by running beside others) of each
#     libFuzzer target of tests/fuzz from its seed corpus (clang +
#     ASan/UBSan, built by tests/fuzz/build_fuzzers.sh, already built by
#     step 4b), all at once,
# Both tiers end with the time each stage took and one line "N passed, N
# failed" counted from what ran (a test target per configuration, each
# pytest test, the downstream program, the CMake stage, the thread-safety
# check, each fuzz target).
#
# Stages 3, 4, 4b and 5 use neither this workspace's Bazel server nor its
# outputs, so they run in a second lane beside stages 1-2b (their output is
# printed when those are done; RUN_TESTS_SERIAL=1 runs them one after the
# other instead): on two cores, a run after a small change spends most of
# each stage compiling one file or running one long test, leaving the other
# core idle. The fuzz runs end the second lane: each target stops at its
# CPU-time budget, so running them while lane 1 still runs costs them
# nothing.
#
# Compiled work is kept outside the clone, so a second run (or a fresh clone
# on the same machine) recompiles only what changed: Bazel's disk cache
# (~/.cache/graphgc/bazel-disk, set in .bazelrc and tests/downstream/.bazelrc)
# and ccache for the fuzzers' clang build and the CMake build
# (~/.cache/graphgc/ccache; CMake's build trees are the clone's build-cmake/,
# inside the clone so ccache sees the same relative paths from any clone).
set -uo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)

all=0
case "${1:-}" in
  --all) all=1 ;;
  "") ;;
  *)
    echo "usage: $0 [--all]" >&2
    exit 2
    ;;
esac

passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Stage timings, printed at the end: "name seconds".
timings=()
stage_start=$SECONDS
end_stage() {
  timings+=("$(printf '%-34s %5d s' "$1" $((SECONDS - stage_start)))")
  stage_start=$SECONDS
}


# Counts the log's lines matching PASS_RE as passed and those matching
# FAIL_RE as failed, and one failure more when the command (exit code RC)
# failed with no failing line listed (a build error, a crash, a sanitizer
# report before any result).
count_log() {  # name rc pass_re fail_re
  local name=$1 rc=$2 p f
  p=$(grep -cE "$3" "$log" || true)
  f=$(grep -cE "$4" "$log" || true)
  passed=$((passed + p))
  failed=$((failed + f))
  if [[ $rc -ne 0 && $f -eq 0 ]]; then
    echo "=== $name: exited $rc with no failing test listed; counting one failure"
    failed=$((failed + 1))
  fi
}

run_bazel_tests() {
  local name=$1
  shift
  echo "=== bazel test ($name): $*"
  ./bazelw test --keep_going "$@" 2>&1 | tee "$log"
  # Bazel's per-target summary lines: "//pkg:test  (cached) PASSED in 0.1s".
  count_log "bazel test ($name)" "${PIPESTATUS[0]}" \
    '^//[^ ]+ +(\(cached\) )?PASSED' \
    '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|FLAKY)'
}

# Runs a command that is one counted check: prints "NAME PASSED" or
# "NAME FAILED" and adds it to the counts.
count_result() {  # name command...
  local name=$1
  shift
  if "$@"; then
    echo "$name PASSED"
    passed=$((passed + 1))
  else
    echo "$name FAILED"
    failed=$((failed + 1))
  fi
}

# Counts each pytest test of the log (pytest -rA: "PASSED ...", "FAILED
# ...", "ERROR ...").
count_pytest() {  # name rc
  count_log "$1" "$2" '^PASSED ' '^(FAILED|ERROR) '
}

# The second lane: the downstream workspace, the CMake build, clang's
# thread-safety analysis (with the fuzzers' build) and the fuzz runs. Writes
# its output to $side_dir/log, "passed failed" to $side_dir/counts and its
# stage timings to $side_dir/timings.
downstream_app() {  # bazel flags...
  (cd tests/downstream && "$ROOT/bazelw" run "$@" //:app)
}
side_lane() {
  local passed=0 failed=0 timings=() stage_start=$SECONDS
  # The downstream workspace consumes graphgc as @graphgc with only the lines
  # of shared/API.md, built plain and under its own ASan and TSan settings
  # (tests/downstream/.bazelrc: the consumer's flags, none of graphgc's).
  for cfg in plain asan tsan; do
    echo "=== downstream workspace (tests/downstream), $cfg"
    local flags=()
    [[ $cfg != plain ]] && flags=(--config="$cfg")
    count_result "//tests/downstream:app ($cfg)" downstream_app "${flags[@]}"
  done
  end_stage "downstream workspace (lane 2)"

  # The CMake build: same files as Bazel's, installed into a scratch prefix,
  # and tests/downstream_cmake built against it (find_package and pkg-config).
  echo "=== cmake: tests/cmake/cmake_stage.sh"
  count_result "//tests/downstream_cmake:app (cmake install)" \
    tests/cmake/cmake_stage.sh
  end_stage "cmake build + install (lane 2)"

  echo "=== clang -Wthread-safety: tests/lint/thread_safety.sh"
  count_result "thread-safety (clang -Wthread-safety -Werror)" \
    tests/lint/thread_safety.sh
  end_stage "clang -Wthread-safety (lane 2)"

  # Every libFuzzer target at once, each until it has had FUZZ_SECONDS of
  # CPU time (tests/fuzz/run_fuzzers.sh; the targets were built just above).
  echo "=== fuzz: tests/fuzz/run_fuzzers.sh ${FUZZ_SECONDS:-30}"
  # A log of its own (lane 1 writes the shared one), read by count_log.
  local log
  log=$(mktemp)
  tests/fuzz/run_fuzzers.sh "${FUZZ_SECONDS:-30}" 2>&1 | tee "$log"
  count_log fuzz "${PIPESTATUS[0]}" '^fuzz [a-z_]+: OK' '^fuzz [a-z_]+: CRASH'
  rm -f "$log"
  end_stage "fuzzers (${FUZZ_SECONDS:-30} CPU-s each, lane 2)"
  echo "$passed $failed" >"$side_dir/counts"
  printf '%s\n' "${timings[@]}" >"$side_dir/timings"
}
side_dir=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$side_dir"' EXIT
# Install whatever is missing once, before the lanes both call ./bazelw.
BAZELW_INSTALL_ONLY=1 ./bazelw
if [[ $all == 1 && ${RUN_TESTS_SERIAL:-0} != 1 ]]; then
  side_lane >"$side_dir/log" 2>&1 &
  side_pid=$!
fi

run_bazel_tests default //...
end_stage "bazel test //... (default)"
# The Python package (python/): build it, then run the pytest suites of
# tests/python with Debian's /usr/bin/python3, counting each test. Right
# after the default stage, whose build it reuses, and before the sanitizer
# stages move bazel-bin to their configurations.
echo "=== python: pytest tests/python"
if ./bazelw build //python:graphgc; then
  PYTHONPATH="$ROOT/bazel-bin/python" PYTHONDONTWRITEBYTECODE=1 \
    /usr/bin/python3 -m pytest -q -rA -p no:cacheprovider tests/python 2>&1 |
    tee "$log"
  count_pytest python "${PIPESTATUS[0]}"
else
  echo "=== python: //python:graphgc did not build; counting one failure"
  failed=$((failed + 1))
fi
end_stage "python (pytest tests/python)"
if [[ $all == 0 ]]; then
  echo "=== stage timings (total $SECONDS s)"
  printf '%s\n' "${timings[@]}"
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
  exit
fi
# The wheel (setup.py): built with Debian's python3-build, installed into a
# fresh venv that sees Debian's NumPy, and the pytest suites run again
# against the installed package (no PYTHONPATH, from outside the clone).
echo "=== python wheel: build, install into a fresh venv, pytest tests/python"
wheel_dir=$(mktemp -d)
if /usr/bin/python3 -m build --wheel --no-isolation --outdir "$wheel_dir/dist" . &&
  /usr/bin/python3 -m venv --system-site-packages "$wheel_dir/venv" &&
  "$wheel_dir/venv/bin/pip" install -q --no-index --no-deps "$wheel_dir"/dist/*.whl; then
  (cd "$wheel_dir" && PYTHONDONTWRITEBYTECODE=1 venv/bin/python -m pytest -q -rA \
    -p no:cacheprovider --rootdir "$ROOT/tests/python" "$ROOT/tests/python") 2>&1 |
    tee "$log"
  count_pytest "python wheel" "${PIPESTATUS[0]}"
else
  echo "=== python wheel: did not build or install; counting one failure"
  failed=$((failed + 1))
fi
rm -rf "$wheel_dir"
end_stage "python wheel (venv + pytest)"
run_bazel_tests asan --config=asan --build_tests_only //...
end_stage "bazel test //... (asan+ubsan)"
run_bazel_tests tsan --config=tsan --build_tests_only //...
end_stage "bazel test //... (tsan)"
# The Python module under ThreadSanitizer (tests/python/tsan_stage.sh): the
# module built with --config=tsan (the library's objects are the stage
# above's), then the pytest tests marked `threads` under /usr/bin/python3
# with gcc's libtsan preloaded; any TSan report fails the run.
echo "=== python under tsan: tests/python/tsan_stage.sh"
tests/python/tsan_stage.sh 2>&1 | tee "$log"
count_pytest "python under tsan" "${PIPESTATUS[0]}"
end_stage "python threads (tsan)"

# The second lane (see the top): wait for it, print its output, add its
# counts and timings.
if [[ -n ${side_pid:-} ]]; then
  wait "$side_pid"
  end_stage "(waiting for lane 2)"
  echo "=== second lane (downstream, CMake, clang -Wthread-safety, fuzz), ran beside the stages above:"
  cat "$side_dir/log"
else
  side_lane
fi
# A lane that died before writing its counts counts as one failure.
read -r p f <"$side_dir/counts" || { p=0; f=1; }
passed=$((passed + p))
failed=$((failed + f))
mapfile -t -O "${#timings[@]}" timings <"$side_dir/timings"

echo "=== stage timings (total $SECONDS s)"
printf '%s\n' "${timings[@]}"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
