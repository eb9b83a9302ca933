#!/bin/bash
# tests/cmake/check_sources.sh: the CMake build (cmake/sources.cmake) and the
# Bazel build compile the same library files. Lists every .cc, .h and .proto
# file of this workspace that //util, //gc, //runtime, //ops, //models and
# //serialize depend on (bazel query) and every file cmake/sources.cmake
# names, and prints the difference. Exit 0 when they are the same.
# Usage: tests/cmake/check_sources.sh   (from anywhere in the clone)
set -euo pipefail
cd "$(dirname "$0")/../.."

bazel_list=$(./bazelw query --noshow_progress \
  'kind("source file", deps(//util + //gc + //runtime + //ops + //models + //serialize))' \
  2>/dev/null | grep '^//' | sed 's|^//||; s|^:||; s|:|/|' |
  grep -E '\.(cc|h|proto)$' | sort)
# Listed files, and the files of each `file(GLOB ... "<dir>/*.cc")`.
cmake_globs=$(grep -oE '[a-z_]+/[a-z_/]+/\*\.cc' cmake/sources.cmake || true)
cmake_list=$( (grep -oE '^\s+[a-z_]+/[A-Za-z0-9_./]+\.(cc|h|proto)\s*$' \
  cmake/sources.cmake | tr -d ' '; for g in $cmake_globs; do ls $g; done) |
  sort)

if [[ "$bazel_list" == "$cmake_list" ]]; then
  echo "check_sources: Bazel and CMake list the same $(wc -l <<<"$bazel_list") files"
  exit 0
fi
echo "check_sources: the lists differ (< Bazel only, > CMake only):"
diff <(echo "$bazel_list") <(echo "$cmake_list") | grep '^[<>]'
exit 1
