#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz/ until it has had SECONDS of
# CPU time (default 30), each from a temporary copy of its seed corpus
# (tests/fuzz/corpus/<target>/), so runs never write into the repository.
# All targets run at once (FUZZ_JOBS, default: all of them). Each libFuzzer
# process is single-threaded; a watcher reads its user+system time
# (/proc/PID/stat) twice a second and interrupts it (SIGINT: libFuzzer
# prints its final stats and exits with -interrupted_exitcode) once it has
# had SECONDS. So every target gets the same fuzzing whatever else runs:
# five targets on an idle 2-core machine take 75 s of wall time, and the
# stage may run beside other work (run_tests.sh's second lane) without
# losing any of it. -max_total_time is only a backstop, at 4 times the
# wall time an idle machine needs; a target stopped by it reports the CPU
# time it had.
# Builds the targets first (tests/fuzz/build_fuzzers.sh; incremental).
#
# Usage: tests/fuzz/run_fuzzers.sh [SECONDS]
# Env:   FUZZ_OUT  build directory (default: build-fuzz)
#        FUZZ_TARGETS  space-separated subset (default: all but those with
#                      an open finding, OPEN_FINDING_TARGETS below)
#        FUZZ_JOBS  targets run at once (default: all)
# Prints one line per target: "fuzz <target>: OK|CRASH, N execs in C
# CPU-s (W s wall)"; a crash's reproducer is copied to FUZZ_OUT/crashes/.
# Exits non-zero if any target crashed (or failed to build or start).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
SECONDS_PER_TARGET=${1:-30}
OUT=${FUZZ_OUT:-$ROOT/build-fuzz}

if ! tests/fuzz/build_fuzzers.sh "$OUT"; then
  echo "fuzz: build failed"
  exit 1
fi

# Inputs bigger than this are cut: a GraphDef of a small model or an events
# file of a few events fits comfortably.
declare -A MAX_LEN=([graph_def_fuzzer]=16384 [event_file_fuzzer]=16384
                    [reshape_reduce_fuzzer]=256 [kernel_fuzzer]=1024
                    [tensor_fuzzer]=4096 [keras_weights_fuzzer]=32768
                    [csv_fuzzer]=16384 [model_config_fuzzer]=65536)

# The largest single allocation a target may make (libFuzzer's
# -malloc_limit_mb; more is reported as a crash, so a loader that allocates
# past its budget is a finding). Default: the RSS limit. keras_weights_fuzzer
# decodes images of at most 32 KiB, whose budget (KerasWeightsDecodeBudget)
# is 64 MiB and change; csv_fuzzer's budget is 1 MiB.
declare -A MALLOC_LIMIT_MB=([graph_def_fuzzer]=256 [event_file_fuzzer]=64
                            [model_config_fuzzer]=256 [csv_fuzzer]=64
                            [keras_weights_fuzzer]=96)
# Extra ASAN_OPTIONS per target (none at present: an allocation too large
# for ASan is a crash, as any past -malloc_limit_mb is).
declare -A EXTRA_ASAN=()
# Targets with an open finding (tests/fuzz/README.md): built, and run when
# named in FUZZ_TARGETS, but left out of the default set until the finding
# is fixed, so the test command's short run checks the others instead of
# rediscovering a known crash. None at present.
OPEN_FINDING_TARGETS=""

targets=${FUZZ_TARGETS:-$(cd tests/fuzz && ls -- *_fuzzer.cc | sed 's/\.cc$//' |
  grep -vxF -f <(tr ' ' '\n' <<<"$OPEN_FINDING_TARGETS"))}
num_targets=$(wc -w <<<"$targets")
cores=$(nproc)
jobs_max=${FUZZ_JOBS:-$num_targets}
# The wall time an idle machine needs for SECONDS of CPU each, sharing the
# cores; the backstop is 4 times that.
wall=$SECONDS_PER_TARGET
if ((jobs_max > cores)); then
  wall=$(((SECONDS_PER_TARGET * jobs_max + cores - 1) / cores))
fi
backstop=$((4 * wall))
ticks=$(getconf CLK_TCK)

# CPU time (user + system) of process $1 in clock ticks, or nothing once it
# has gone. Field 2 of /proc/PID/stat is "(comm)", which may hold spaces,
# so the fields are counted after its closing parenthesis: utime and stime
# are fields 14 and 15, the 12th and 13th after it.
cpu_ticks() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return
  local rest=(${stat##*) })
  echo $((rest[11] + rest[12]))
}

# Interrupts process $1 once it has had $2 seconds of CPU; writes the last
# CPU time seen (ticks) to $3.
watch_cpu() {
  local pid=$1 budget=$(($2 * ticks)) out=$3 used
  while used=$(cpu_ticks "$pid") && [[ -n $used ]]; do
    echo "$used" >"$out"
    if ((used >= budget)); then
      kill -INT "$pid" 2>/dev/null
      return
    fi
    sleep 0.5
  done
}
work=$(mktemp -d "${TMPDIR:-/tmp}/graphgc-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT/crashes"

# Runs target $1 and writes its report (the lines printed below) to
# $work/$1/report, and "ok" or "crash" to $work/$1/result.
run_target() {
  local t=$1
  local corpus_name=${t%_fuzzer}
  local corpus=$work/$t/corpus
  mkdir -p "$corpus" "$work/$t/artifacts"
  if [[ -d tests/fuzz/corpus/$corpus_name ]]; then
    cp -r "tests/fuzz/corpus/$corpus_name/." "$corpus/"
  fi
  local log=$work/$t/log
  local started=$SECONDS
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}${EXTRA_ASAN[$t]:-} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  TMPDIR=$work/$t \
    "$OUT/$t" "$corpus" \
      -max_total_time="$backstop" -interrupted_exitcode=72 \
      -max_len="${MAX_LEN[$t]:-8192}" \
      -rss_limit_mb=2048 -malloc_limit_mb="${MALLOC_LIMIT_MB[$t]:-2048}" \
      -timeout=25 -print_final_stats=1 \
      -artifact_prefix="$work/$t/artifacts/" >"$log" 2>&1 &
  local pid=$!
  watch_cpu "$pid" "$SECONDS_PER_TARGET" "$work/$t/cpu" &
  local watcher=$!
  wait "$pid"
  local rc=$?
  wait "$watcher"
  # 72: interrupted by the watcher, its CPU time had: a clean end. 0:
  # libFuzzer ended it at -max_total_time, the wall-clock backstop, before
  # it had its CPU time (a loaded machine): also clean, and said so.
  local ended=""
  if [[ $rc -eq 72 ]]; then
    rc=0
  elif [[ $rc -eq 0 ]]; then
    ended="; stopped by the ${backstop} s wall-clock backstop"
  fi
  local execs cpu
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cpu=$(($(cat "$work/$t/cpu" 2>/dev/null || echo 0) / ticks))
  if [[ $rc -eq 0 ]]; then
    echo "fuzz $t: OK, ${execs:-?} execs in $cpu CPU-s" \
         "($((SECONDS - started)) s wall, $jobs_max at once$ended)" \
      >"$work/$t/report"
    echo ok >"$work/$t/result"
    return
  fi
  {
    echo "fuzz $t: CRASH (exit $rc), ${execs:-?} execs; log follows"
    grep -E -A40 '^==[0-9]+==ERROR|runtime error|deadly signal|_fuzzer: ' \
      "$log" | head -60
    for a in "$work/$t"/artifacts/*; do
      [[ -e $a ]] || continue
      cp "$a" "$OUT/crashes/$t-$(basename "$a")"
      echo "  reproducer: $OUT/crashes/$t-$(basename "$a")"
    done
  } >"$work/$t/report"
  echo crash >"$work/$t/result"
}

running=0
for t in $targets; do
  mkdir -p "$work/$t"
  if ((running >= jobs_max)); then
    wait -n
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
wait

# Reports in target order; a target with no result (its runner died) counts
# as a crash.
failed=0
for t in $targets; do
  if [[ -f $work/$t/report ]]; then cat "$work/$t/report"; fi
  if [[ $(cat "$work/$t/result" 2>/dev/null) != ok ]]; then
    [[ -f $work/$t/report ]] || echo "fuzz $t: CRASH (no result from its run)"
    failed=$((failed + 1))
  fi
done

if [[ $failed -ne 0 ]]; then
  echo "fuzz: $failed target(s) crashed"
  exit 1
fi
echo "fuzz: all targets OK"
