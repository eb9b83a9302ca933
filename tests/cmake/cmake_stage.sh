#!/bin/bash
# tests/cmake/cmake_stage.sh: run_tests.sh's "cmake" stage, also runnable by
# itself. Checks that the CMake and Bazel builds list the same files, builds
# graphgc with CMake (-j2, through ccache), installs it into a scratch
# prefix, then builds and runs tests/downstream_cmake/ against the installed
# tree twice: with find_package(graphgc) and with pkg-config's graphgc.pc.
# Build trees live in ~/.cache/graphgc/cmake/<hash of the clone's path>
# (CMAKE_BUILD_DIR overrides), so a rerun compiles only what changed.
# Exit 0 when everything passed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# One build tree per clone (CMake refuses a tree configured from another
# source directory); ccache, with paths taken relative to the clone, makes a
# new clone's first build cheap when another clone compiled the same files.
BUILD=${CMAKE_BUILD_DIR:-$HOME/.cache/graphgc/cmake/$(printf '%s' "$ROOT" | md5sum | cut -c1-12)}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/graphgc/ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
mkdir -p "$BUILD"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
PREFIX=$SCRATCH/prefix

"$ROOT/tests/cmake/check_sources.sh"

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$ROOT" -B "$BUILD/graphgc" "${launcher[@]}" >/dev/null
cmake --build "$BUILD/graphgc" -j2
cmake --install "$BUILD/graphgc" --prefix "$PREFIX" >/dev/null
for f in include/models/sequential.h include/serialize/event.pb.h \
         lib/libgraphgc.a lib/cmake/graphgc/graphgcConfig.cmake \
         lib/pkgconfig/graphgc.pc; do
  [[ -f $PREFIX/$f ]] || { echo "cmake stage: $f not installed"; exit 1; }
done

# find_package(graphgc) + target_link_libraries(app graphgc::graphgc).
cmake -S "$ROOT/tests/downstream_cmake" -B "$BUILD/downstream" \
  "${launcher[@]}" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$BUILD/downstream" -j2
mkdir -p "$SCRATCH/run_cmake"
"$BUILD/downstream/app" "$SCRATCH/run_cmake"

# pkg-config: the same program, compiled with graphgc.pc's flags.
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# shellcheck disable=SC2046
${launcher:+ccache} g++ -o "$BUILD/app_pkgconfig" \
  "$ROOT/tests/downstream_cmake/app.cc" $(pkg-config --cflags --libs graphgc)
mkdir -p "$SCRATCH/run_pc"
"$BUILD/app_pkgconfig" "$SCRATCH/run_pc"
echo "cmake stage: passed"
