#!/bin/bash
# tests/cmake/cmake_stage.sh: run_tests.sh's "cmake" stage, also runnable by
# itself. Checks that the CMake and Bazel builds list the same files, builds
# graphgc with CMake (-j2, through ccache), installs it into a scratch
# prefix, then builds and runs tests/downstream_cmake/ against the installed
# tree twice: with find_package(graphgc) and with pkg-config's graphgc.pc.
# The build trees live in the clone, in build-cmake/ (CMAKE_BUILD_DIR
# overrides), so a rerun compiles only what changed.
# Exit 0 when everything passed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# Inside the clone, as build-fuzz/ is: ccache rewrites every path under
# CCACHE_BASEDIR (the clone) relative to the compiler's working directory,
# which is then inside the clone too, so two clones of the same tree send
# ccache the same command lines and a new clone's first build hits the
# cache the other clone filled. (A tree outside the clone, named after its
# path, made those relative paths differ per clone: every file missed.)
BUILD=${CMAKE_BUILD_DIR:-$ROOT/build-cmake}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/graphgc/ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=true
mkdir -p "$BUILD"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
# The install prefix is in the build tree too, at the same path every run
# and (relative to the clone) in every clone, so the consumer's compiles
# (its -I<prefix>/include) hit ccache like the library's; it is emptied
# first, so each run checks a fresh install. (A new temporary prefix per
# run made both of the consumer's compiles miss every time.)
PREFIX=$BUILD/prefix
rm -rf "$PREFIX"
# Prints how long each step took.
step_start=$SECONDS
step() {
  echo "cmake stage: $1 in $((SECONDS - step_start)) s"
  step_start=$SECONDS
}

"$ROOT/tests/cmake/check_sources.sh"

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$ROOT" -B "$BUILD/graphgc" "${launcher[@]}" >/dev/null
cmake --build "$BUILD/graphgc" -j2
step "graphgc built"
cmake --install "$BUILD/graphgc" --prefix "$PREFIX" >/dev/null
for f in include/graphgc/models/sequential.h \
         include/graphgc/serialize/event.pb.h lib/libgraphgc.a \
         lib/cmake/graphgc/graphgcConfig.cmake lib/pkgconfig/graphgc.pc; do
  [[ -f $PREFIX/$f ]] || { echo "cmake stage: $f not installed"; exit 1; }
done
# Headers live only under include/graphgc (nothing of ours at include/'s
# top level, where folder names like util/ would collide), and internal
# headers no public one includes are not installed.
if [[ $(ls "$PREFIX/include") != graphgc ]]; then
  echo "cmake stage: include/ holds more than graphgc/: $(ls "$PREFIX/include")"
  exit 1
fi
for f in runtime/executor.h ops/conv_ops.h; do
  [[ ! -e $PREFIX/include/graphgc/$f ]] ||
    { echo "cmake stage: internal header $f installed"; exit 1; }
done

# find_package(graphgc) + target_link_libraries(app graphgc::graphgc).
cmake -S "$ROOT/tests/downstream_cmake" -B "$BUILD/downstream" \
  "${launcher[@]}" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$BUILD/downstream" -j2
step "installed, and the find_package consumer built"
mkdir -p "$SCRATCH/run_cmake"
"$BUILD/downstream/app" "$SCRATCH/run_cmake"
step "the find_package consumer ran"

# pkg-config: the same program, compiled with graphgc.pc's flags (compiled
# and linked in two commands: ccache caches a compile, not a link).
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# shellcheck disable=SC2046
${launcher:+ccache} g++ -c -o "$BUILD/app_pkgconfig.o" \
  "$ROOT/tests/downstream_cmake/app.cc" $(pkg-config --cflags graphgc)
# shellcheck disable=SC2046
g++ -o "$BUILD/app_pkgconfig" "$BUILD/app_pkgconfig.o" \
  $(pkg-config --libs graphgc)
mkdir -p "$SCRATCH/run_pc"
"$BUILD/app_pkgconfig" "$SCRATCH/run_pc"
step "the pkg-config consumer built and ran"
echo "cmake stage: passed"
