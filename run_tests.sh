#!/usr/bin/env bash
# The test command (README, .ci/run): installs what is missing, then runs
#  1. every test target (bazel test //...), which also builds every binary
#     and benchmark,
#  1b. the Python package's pytest suites (tests/python), each test
#     counted,
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
#  4b. clang's thread-safety analysis as errors over every library source
#     (tests/lint/thread_safety.sh: the fuzzers' clang build for gc ops
#     runtime serialize util, a syntax-only pass for models and tools),
#  5. a short run (FUZZ_SECONDS, default 30 s) of each libFuzzer target of
#     tests/fuzz from its seed corpus (clang + ASan/UBSan, built by
#     tests/fuzz/build_fuzzers.sh, already built by step 4b),
# and ends with the time each stage took and one line "N passed, N failed"
# counted from what ran (a test target per configuration, each pytest test,
# the downstream program, the CMake stage, the thread-safety check, each
# fuzz target).
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


run_bazel_tests() {
  local name=$1
  shift
  echo "=== bazel test ($name): $*"
  ./bazelw test --keep_going "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  # Bazel's per-target summary lines: "//pkg:test  (cached) PASSED in 0.1s".
  local p f
  p=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" || true)
  f=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE|FLAKY)' "$log" || true)
  passed=$((passed + p))
  failed=$((failed + f))
  if [[ $rc -ne 0 && $f -eq 0 ]]; then
    # Bazel failed before any test could report (analysis or build error).
    echo "=== $name: bazel exited $rc with no failing test listed; counting one failure"
    failed=$((failed + 1))
  fi
}

# Counts each pytest test of the log (pytest -rA: "PASSED ...", "FAILED
# ...", "ERROR ..."), and one failure when pytest ($2: its exit code) failed
# with no failing test listed (a crash, a sanitizer report, a bad import).
count_pytest() {
  local name=$1 rc=$2 p f
  p=$(grep -cE '^PASSED ' "$log" || true)
  f=$(grep -cE '^(FAILED|ERROR) ' "$log" || true)
  passed=$((passed + p))
  failed=$((failed + f))
  if [[ $rc -ne 0 && $f -eq 0 ]]; then
    echo "=== $name: pytest exited $rc with no failing test listed; counting one failure"
    failed=$((failed + 1))
  fi
}

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

# The downstream workspace consumes graphgc as @graphgc with only the lines
# of shared/API.md, built plain and under its own ASan and TSan settings
# (tests/downstream/.bazelrc: the consumer's flags, none of graphgc's).
for cfg in plain asan tsan; do
  echo "=== downstream workspace (tests/downstream), $cfg"
  flags=()
  [[ $cfg != plain ]] && flags=(--config="$cfg")
  if (cd tests/downstream && "$ROOT/bazelw" run "${flags[@]}" //:app); then
    echo "//tests/downstream:app ($cfg) PASSED"
    passed=$((passed + 1))
  else
    echo "//tests/downstream:app ($cfg) FAILED"
    failed=$((failed + 1))
  fi
done
end_stage "downstream workspace"

# The CMake build: same files as Bazel's, installed into a scratch prefix,
# and tests/downstream_cmake built against it (find_package and pkg-config).
echo "=== cmake: tests/cmake/cmake_stage.sh"
if tests/cmake/cmake_stage.sh; then
  echo "//tests/downstream_cmake:app (cmake install) PASSED"
  passed=$((passed + 1))
else
  echo "//tests/downstream_cmake:app (cmake install) FAILED"
  failed=$((failed + 1))
fi
end_stage "cmake build + install + consumer"

echo "=== clang -Wthread-safety: tests/lint/thread_safety.sh"
if tests/lint/thread_safety.sh; then
  echo "thread-safety (clang -Wthread-safety -Werror) PASSED"
  passed=$((passed + 1))
else
  echo "thread-safety (clang -Wthread-safety -Werror) FAILED"
  failed=$((failed + 1))
fi
end_stage "clang -Wthread-safety (+ fuzz build)"

echo "=== fuzz: tests/fuzz/run_fuzzers.sh ${FUZZ_SECONDS:-30}"
tests/fuzz/run_fuzzers.sh "${FUZZ_SECONDS:-30}" 2>&1 | tee "$log"
fuzz_rc=${PIPESTATUS[0]}
p=$(grep -cE '^fuzz [a-z_]+: OK' "$log" || true)
f=$(grep -cE '^fuzz [a-z_]+: CRASH' "$log" || true)
passed=$((passed + p))
failed=$((failed + f))
if [[ $fuzz_rc -ne 0 && $f -eq 0 ]]; then
  echo "=== fuzz: the fuzzers did not build or start; counting one failure"
  failed=$((failed + 1))
fi

end_stage "fuzzers (build + ${FUZZ_SECONDS:-30} s each)"

echo "=== stage timings (total $SECONDS s)"
printf '%s\n' "${timings[@]}"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
