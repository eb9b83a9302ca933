#!/bin/bash
# tests/python/tsan_stage.sh: run_tests.sh's "python under ThreadSanitizer"
# stage, also runnable by itself (extra arguments go to pytest). Builds the
# extension module with --config=tsan (it reuses the tsan stage's objects
# of the library; only python/ext compiles extra), then runs the pytest
# tests marked `threads` (tests/python/conftest.py: two Python threads
# fitting while a third collects, other threads' NumPy allocators, a lent
# array released on a thread Python never saw) under Debian's
# /usr/bin/python3, which is not built with TSan: gcc 12's libtsan is
# preloaded, so TSan sees every access our instrumented module makes and
# every pthread lock and condition variable (CPython's GIL among them), but
# not CPython's or NumPy's own memory accesses. Any report stops the run
# (halt_on_error=1, exit code 66, counted as a failure by run_tests.sh).
# Exit 0 when every test passed with no report.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

libtsan=$(g++ -print-file-name=libtsan.so)
if [[ ! -e $libtsan ]]; then
  echo "tsan_stage: g++ has no libtsan.so (got '$libtsan'); install libgcc-12-dev" >&2
  exit 1
fi

./bazelw build --config=tsan //python:graphgc
bin=$(./bazelw info --config=tsan bazel-bin 2>/dev/null)

LD_PRELOAD=$libtsan \
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$ROOT/tests/python/tsan_suppressions.txt" \
  PYTHONPATH="$bin/python" PYTHONDONTWRITEBYTECODE=1 \
  /usr/bin/python3 -m pytest -q -rA -p no:cacheprovider --capture=sys \
  -m threads \
  tests/python "$@"
