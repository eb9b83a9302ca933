#!/usr/bin/env bash
# tests/lint/node_boundary_check.sh
#
# Fails, listing file:line, where code outside runtime/ reaches past
# NodeView (runtime/node_view.h) into the runtime's own Node:
#   - a call of Graph::NodeForRuntime outside runtime/, or a mention of
#     RuntimeNodeAccess or of the friends it names that are defined in
#     runtime/'s .cc files (PlanBuilderNodes, GradientWalkNodes): C++
#     access control keeps everyone else from calling them, but not from
#     defining a second struct of a friend's name;
#   - an #include of runtime/node.h outside runtime/ and tests/runtime/
#     (the runtime's own tests, e.g. name_index_test, build Nodes).
# Bazel's visibility keeps other packages from depending on //runtime:node,
# but not from including its header through //runtime:graph (g++ builds
# have no layering check), so this test holds the line. Lines whose first
# non-blank characters are `//` are comments and are skipped.
#
# Usage: node_boundary_check.sh [workspace root]. Without a root (as the
# sh_test //tests/lint:node_boundary_check runs it) the root is found from
# this script's real location, so the check reads the current source tree.
set -euo pipefail

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
root=${1:-$(cd "$here/../.." && pwd)}
cd "$root"

dirs=()
for d in bench examples gc models ops python serialize tests tools util; do
  [[ -d $d ]] && dirs+=("$d")
done

hits=$(find "${dirs[@]}" -type f \( -name '*.h' -o -name '*.cc' \) -print0 |
  sort -z |
  xargs -0 awk '
    /^[ \t]*\/\// { next }
    /NodeForRuntime/ { print FILENAME ":" FNR ": calls NodeForRuntime: " $0 }
    /RuntimeNodeAccess|PlanBuilderNodes|GradientWalkNodes/ {
      print FILENAME ":" FNR ": names the runtime node access: " $0
    }
    /#[ \t]*include[ \t]*"runtime\/node\.h"/ && FILENAME !~ /^tests\/runtime\// {
      print FILENAME ":" FNR ": includes runtime/node.h: " $0
    }
  ')

if [[ -n $hits ]]; then
  echo "$hits"
  echo "node_boundary_check: read nodes through NodeView (runtime/node_view.h)" >&2
  exit 1
fi
echo "node_boundary_check: no NodeForRuntime or runtime/node.h outside runtime/"
