#!/usr/bin/env bash
# The clang -Wthread-safety stage of run_tests.sh: every C++ source of
# graphgc (libraries, tests, benchmarks, examples) compiled by clang++-14
# with the thread-safety analysis (-Wthread-safety -Wthread-safety-beta) as
# errors, so each ABSL_GUARDED_BY, ABSL_*_LOCKS_REQUIRED and scoped lock is
# checked (g++ ignores them).
#
#  1. gc/ ops/ runtime/ serialize/ util/: the fuzzers' clang build
#     (tests/fuzz/build_fuzzers.sh, ccache'd, incremental) compiles them
#     with these flags; the fuzz stage then reuses its objects.
#  2. models/, data/, tools/ and python/ext/, which no fuzzer links, and
#     the tests, benchmarks and examples: a syntax-only pass (the analysis
#     runs in the front end, so nothing is generated), with OpenMPI's and
#     CPython's headers for tools/cluster_mpi and the Python module. Each
#     file's clean result is cached (~/.cache/graphgc/thread-safety) by its
#     content and the content of every header it read
#     (tests/lint/thread_safety_pass.py), so only files whose translation
#     unit changed are analysed again.
#
# Usage: tests/lint/thread_safety.sh [FUZZ_OUT]  (default: build-fuzz)
# Prints "thread-safety: OK" or the warnings and "thread-safety: FAILED";
# exits non-zero on any warning or build error.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-${FUZZ_OUT:-$PWD/build-fuzz}}
JOBS=${JOBS:-2}

if ! tests/fuzz/build_fuzzers.sh "$OUT"; then
  echo "thread-safety: FAILED (clang build of gc ops runtime serialize util)"
  exit 1
fi

# The generated protobuf headers are named relative to the clone when they
# are inside it, so the cache below records them by the same path in every
# clone (and their inline code's __FILE__ does not name the clone).
GEN=$(realpath --relative-to=. "$OUT/gen")
FLAGS=(-std=c++20 -fsyntax-only -DEIGEN_USE_THREADS -I. -I"$GEN"
       -I/usr/include/eigen3 -I/usr/include/hdf5/serial
       -I/usr/lib/x86_64-linux-gnu/openmpi/include -DOMPI_SKIP_MPICXX
       $(/usr/bin/python3-config --includes 2>/dev/null || echo -I/usr/include/python3.11)
       -Wno-deprecated-declarations
       -Wthread-safety -Wthread-safety-beta -Werror=thread-safety
       -Werror=thread-safety-beta)
CLANG=${CXX_SYNTAX:-clang++-14}
# Each file's clean result is cached outside the clone
# (tests/lint/thread_safety_pass.py, as ccache's direct mode): keyed by the
# compiler's version, the flags and the file's content, and valid while
# every header it read has the content it had then. A file whose
# translation unit did not change is not analysed again, in this clone or
# any other on this machine, and the check costs no compiler run. Only a
# clean analysis is recorded; a warning is reported every run until it is
# fixed. THREAD_SAFETY_CACHE=0 analyses every file.
TS_CACHE=${THREAD_SAFETY_CACHE_DIR:-$HOME/.cache/graphgc/thread-safety}
CACHE_ARGS=(--cache "$TS_CACHE")
if [[ ${THREAD_SAFETY_CACHE:-1} != 1 ]]; then CACHE_ARGS=(--no-cache); fi
# The tests, benchmarks and examples too (tests/fuzz is compiled by step 1;
# tests/downstream is a consumer's workspace, built by its own stage).
if ! { ls models/*.cc data/*.cc tools/*.cc python/ext/*.cc bench/*.cc \
          examples/*.cc
       find tests -name '*.cc' -not -path 'tests/downstream*' \
         -not -path 'tests/fuzz/*' | sort; } |
     /usr/bin/python3 tests/lint/thread_safety_pass.py --compiler "$CLANG" \
       "${CACHE_ARGS[@]}" --jobs "$JOBS" \
       --key-prefix "$("$CLANG" --version | head -1)" -- "${FLAGS[@]}"; then
  echo "thread-safety: FAILED (models/ data/ tools/ python/ext/ bench/"\
       "examples/ tests/)"
  exit 1
fi
echo "thread-safety: OK"
