#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang++-14, libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer, straight from the sources
# (Bazel's toolchain here is configured for gcc). Also builds the seed corpus
# generator (same objects, sanitizers on, no libFuzzer main).
#
# Usage: tests/fuzz/build_fuzzers.sh [OUT_DIR]   (default: build-fuzz)
# Outputs OUT_DIR/<target> for each tests/fuzz/*_fuzzer.cc and
# OUT_DIR/make_seed_corpus. Rebuilds only what is older than its sources.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=${1:-$ROOT/build-fuzz}
mkdir -p "$OUT/obj" "$OUT/gen"

CXX=${CXX:-clang++-14}
# ccache keeps compiled objects outside the clone (~/.cache/graphgc/ccache),
# keyed by preprocessed source and flags with paths made relative to the
# checkout, so a fresh clone of the same sources recompiles nothing.
if command -v ccache >/dev/null && [[ ${FUZZ_CCACHE:-1} == 1 ]]; then
  export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/graphgc/ccache}
  export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=true
  CXX="ccache $CXX"
fi
JOBS=${JOBS:-2}

# Project sources the targets link: every library source of data/ gc/
# models/ ops/ runtime/ serialize/ util/, subfolders included (found, so a
# new file cannot be forgotten; each fuzzer links all of them; the op and
# layer registries are function-local statics, so nothing depends on link
# order).
mapfile -t SRCS < <(find data gc models ops runtime serialize util -name '*.cc' | sort)
mapfile -t PROTOS < <(ls serialize/*.proto)

ABSL_LIBS=$(sed -n 's/^ *"\(-l[a-z0-9_]*\)",$/\1/p' third_party/system.BUILD |
            grep -E -- '-l(absl_|rt|pthread)' | sort -u | tr '\n' ' ')
# serialize/keras_weights.cc uses Debian's serial HDF5 (headers under
# /usr/include/hdf5/serial, as third_party/system.BUILD says).
# data/csv.cc inflates gzip with zlib.
LIBS="-lprotobuf $ABSL_LIBS -lhdf5_serial -lz"

# float-cast-overflow is not part of -fsanitize=undefined: a float out of an
# integer's range converted to it (Cast of fuzzed data) is undefined too.
SAN="-fsanitize=address,undefined,float-cast-overflow \
  -fno-sanitize-recover=undefined,float-cast-overflow"
# Clang's thread-safety analysis, as errors: this build is also the
# -Wthread-safety stage of run_tests.sh (tests/lint/thread_safety.sh) for
# every source it compiles.
THREAD_SAFETY="-Wthread-safety -Wthread-safety-beta -Werror=thread-safety \
  -Werror=thread-safety-beta"
COMMON="-std=c++20 -O1 -g -fno-omit-frame-pointer $SAN -DEIGEN_USE_THREADS \
  -I$ROOT -I$OUT/gen -I/usr/include/eigen3 -I/usr/include/hdf5/serial \
  -Wno-deprecated-declarations $THREAD_SAFETY"

# Objects compiled with other flags (an older checkout of this script) are
# rebuilt: the mtime checks below would otherwise keep them unchecked.
if [[ $(cat "$OUT/obj/.flags" 2>/dev/null) != "$COMMON" ]]; then
  rm -f "$OUT"/obj/*.o
  echo "$COMMON" >"$OUT/obj/.flags"
fi

# 1. Protobuf sources (regenerated when a .proto is newer).
stamp=$OUT/gen/.stamp
if [[ ! -f $stamp ]] || [[ -n $(find "${PROTOS[@]}" -newer "$stamp") ]]; then
  protoc --cpp_out="$OUT/gen" --proto_path=. "${PROTOS[@]}"
  touch "$stamp"
fi
GEN_SRCS=()
for p in "${PROTOS[@]}"; do GEN_SRCS+=("$OUT/gen/${p%.proto}.pb.cc"); done
# Each registry's list of kinds (layers, losses, metrics; as Bazel's genrules
# and CMake make them), rewritten only when it changes so its object is not
# rebuilt every time.
mkdir -p "$OUT/gen/models"
for registry in Layer:layers:layer Loss:losses:loss Metric:metrics:metric; do
  IFS=: read -r kind dir stem <<<"$registry"
  out=$OUT/gen/models/builtin_${stem}_kinds.cc
  models/gen_builtin_kinds.sh "$out.tmp" "$kind" models/"$dir"/*.cc
  if ! cmp -s "$out.tmp" "$out"; then mv "$out.tmp" "$out"; else rm "$out.tmp"; fi
  GEN_SRCS+=("$out")
done

# 2. Objects, instrumented for coverage (fuzzer-no-link).
compile() {  # src obj
  local src=$1 obj=$2
  if [[ ! -f $obj || $src -nt $obj ]] ||
     [[ -n $(find data gc models ops runtime serialize util tests/fuzz "$OUT/gen" \
              -name '*.h' -newer "$obj" 2>/dev/null | head -1) ]]; then
    echo "  CXX $src"
    # The kernel files are Eigen-heavy and the targets that run kernels
    # (reshape_reduce, kernel) run them on small tensors: compiled
    # unoptimised (still with coverage) they take a fraction of the time.
    local extra="-fsanitize=fuzzer-no-link"
    if [[ $src == ops/*_ops.cc || $src == ops/*_kernels.cc ]]; then extra="$extra -O0"; fi
    # shellcheck disable=SC2086
    $CXX $COMMON $extra -c "$src" -o "$obj"
  fi
}
export -f compile
export CXX COMMON OUT
OBJS=()
jobs_list=()
for src in "${SRCS[@]}" "${GEN_SRCS[@]}"; do
  obj=$OUT/obj/$(echo "${src#"$OUT"/}" | tr '/' '_').o
  OBJS+=("$obj")
  jobs_list+=("$src" "$obj")
done
# The targets' own sources (each fuzzer and the corpus generator) are
# compiled the same way, apart from the link: ccache'd and in parallel with
# the rest, so a change to a library source recompiles none of them.
MAINS=(tests/fuzz/*_fuzzer.cc tests/fuzz/make_seed_corpus.cc)
for src in "${MAINS[@]}"; do
  jobs_list+=("$src" "$OUT/obj/main_$(basename "$src" .cc).o")
done
printf '%s\0%s\0' "${jobs_list[@]}" |
  xargs -0 -n 2 -P "$JOBS" bash -c 'compile "$0" "$1"'

# 3. Fuzz targets and the corpus generator, linked in parallel by lld
# (Debian's `lld`): about 1 s a link here against 5 s for GNU ld, and
# every target is relinked after any library change.
link() {  # main-object out extra-flags...
  local main=$1 out=$2
  shift 2
  if [[ ! -f $out || $main -nt $out ]] ||
     [[ -n $(find "${OBJS[@]}" -newer "$out" | head -1) ]]; then
    echo "  LINK $out"
    # shellcheck disable=SC2086
    $LINK_CXX $COMMON -fuse-ld=lld "$@" "$main" "${OBJS[@]}" $LIBS -o "$out"
  fi
}
export -f link
export LIBS LINK_CXX=${CXX#ccache } OBJS_FILE=$OUT/obj/.objs
printf '%s\0' "${OBJS[@]}" >"$OBJS_FILE"
links=()
for src in "${MAINS[@]}"; do
  name=$(basename "$src" .cc)
  flag=-fsanitize=fuzzer
  [[ $name == make_seed_corpus ]] && flag=-fsanitize=fuzzer-no-link
  links+=("$OUT/obj/main_$name.o" "$OUT/$name" "$flag")
done
# The object list reaches the xargs shells through a file (an array cannot
# be exported).
printf '%s\0%s\0%s\0' "${links[@]}" |
  xargs -0 -n 3 -P "$JOBS" bash -c \
    'mapfile -d "" -t OBJS <"$OBJS_FILE"; link "$0" "$1" "$2"'
echo "fuzzers built in $OUT"
