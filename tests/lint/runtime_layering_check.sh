#!/usr/bin/env bash
# tests/lint/runtime_layering_check.sh
#
# Fails, naming the file and line, when runtime/ reaches up into ops/ (issue
# 16: runtime/ depends on nothing above it; the op library registers what
# the runtime applies, e.g. fusion rules, instead). Two checks over the
# source tree:
#   - no `#include "ops/...` in runtime/*.h or runtime/*.cc;
#   - no "//ops" label in runtime/BUILD.
#
# The BUILD check reads the file, not Bazel's graph (a test cannot run
# Bazel); the graph itself is checked by hand with
#   ./bazelw query 'deps(//runtime:plan_builder)' | grep //ops
# which must print nothing, for every //runtime target.
#
# Usage: runtime_layering_check.sh [workspace root]. Without a root (as the
# sh_test //tests/lint:runtime_layering_check runs it) the root is found
# from this script's real location, as no_value_check.sh does.
set -euo pipefail

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
root=${1:-$(cd "$here/../.." && pwd)}
cd "$root"
if [[ ! -f runtime/BUILD ]]; then
  echo "runtime_layering_check: no runtime/BUILD under $root" >&2
  exit 2
fi

fail=0
includes=$(grep -n '#include "ops/' runtime/*.h runtime/*.cc || true)
if [[ -n $includes ]]; then
  echo "runtime/ includes ops/ headers (runtime/ must not depend on ops/):"
  echo "$includes"
  fail=1
fi

# The BUILD file's targets, one block per `name = "..."`; every //ops label
# is a hit.
labels=$(awk '
  /name = "/ { match($0, /name = "[^"]*"/); target = substr($0, RSTART + 8, RLENGTH - 9) }
  /"\/\/ops[:"]/ {
    printf "runtime/BUILD:%d: (target %s) %s\n", NR, target, $0
  }' runtime/BUILD)
if [[ -n $labels ]]; then
  echo "runtime/BUILD names //ops (runtime/ must not depend on ops/):"
  echo "$labels"
  fail=1
fi
[[ $fail -eq 0 ]] && echo "runtime_layering_check: runtime/ reaches nothing in ops/"
exit $fail
