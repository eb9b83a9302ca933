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
#     file's clean result is cached by a hash of its preprocessed text
#     (~/.cache/graphgc/thread-safety), so only files whose translation unit
#     changed are analysed again.
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
# are inside it: their inline code expands __FILE__, which would otherwise
# put the clone's absolute path into every including file's preprocessed
# text, and the cache below would miss in every other clone.
GEN=$(realpath --relative-to=. "$OUT/gen")
FLAGS=(-std=c++20 -fsyntax-only -DEIGEN_USE_THREADS -I. -I"$GEN"
       -I/usr/include/eigen3 -I/usr/include/hdf5/serial
       -I/usr/lib/x86_64-linux-gnu/openmpi/include -DOMPI_SKIP_MPICXX
       $(/usr/bin/python3-config --includes 2>/dev/null || echo -I/usr/include/python3.11)
       -Wno-deprecated-declarations
       -Wthread-safety -Wthread-safety-beta -Werror=thread-safety
       -Werror=thread-safety-beta)
export CLANG=${CXX_SYNTAX:-clang++-14}
# Each file's result is cached outside the clone, keyed by a hash of the
# compiler's version, the flags and the file's preprocessed text (-P: no
# line markers, so the clone's path is not in it): a file whose translation
# unit did not change is not analysed again, in this clone or any other on
# this machine. Only a clean analysis is recorded; a warning is reported
# every run until it is fixed. THREAD_SAFETY_CACHE=0 analyses every file.
export TS_CACHE=${THREAD_SAFETY_CACHE_DIR:-$HOME/.cache/graphgc/thread-safety}
export TS_USE_CACHE=${THREAD_SAFETY_CACHE:-1}
mkdir -p "$TS_CACHE"
export TS_KEY_PREFIX
TS_KEY_PREFIX="$("$CLANG" --version | head -1) ${FLAGS[*]}"
check_file() {  # file flags...
  set -o pipefail
  local src=$1
  shift
  local key=""
  if [[ $TS_USE_CACHE == 1 ]]; then
    key=$({ echo "$TS_KEY_PREFIX"; "$CLANG" "${@/-fsyntax-only/-E}" -P "$src"; } |
          sha256sum | cut -c1-40) || key=""
    if [[ -n $key && -f $TS_CACHE/$key ]]; then
      echo "  CACHED $src"
      return 0
    fi
  fi
  echo "  SYNTAX $src"
  "$CLANG" "$@" "$src" || return 1
  if [[ -n $key ]]; then touch "$TS_CACHE/$key"; fi
}
export -f check_file
# The tests, benchmarks and examples too (tests/fuzz is compiled by step 1;
# tests/downstream is a consumer's workspace, built by its own stage).
if ! { ls models/*.cc data/*.cc tools/*.cc python/ext/*.cc bench/*.cc \
          examples/*.cc
       find tests -name '*.cc' -not -path 'tests/downstream*' \
         -not -path 'tests/fuzz/*' | sort; } |
     xargs -P "$JOBS" -I{} bash -c 'check_file "$@"' _ {} "${FLAGS[@]}"; then
  echo "thread-safety: FAILED (models/ data/ tools/ python/ext/ bench/"\
       "examples/ tests/)"
  exit 1
fi
echo "thread-safety: OK"
