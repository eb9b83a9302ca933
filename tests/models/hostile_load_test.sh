#!/usr/bin/env bash
# LoadModel of a directory whose config.json declares 3.75 GiB of weights
# beside a sparse 3 GiB model.weights.h5, under a 2 GiB address-space limit
# (ulimit -v): refused with ResourceExhausted (a clean status, no abort),
# within 60 s, and with a resident set far below the declared size.
# Under AddressSanitizer or ThreadSanitizer, which reserve terabytes of
# address space, the limit is left out; the status and time are checked.
set -uo pipefail
bin=$1
fail() { echo "FAIL: $*"; exit 1; }

dir=${TEST_TMPDIR:-/tmp}/hostile_load
rm -rf "$dir"
"$bin" make "$dir" || fail "could not make the hostile directory"

sanitized=$("$bin" sanitized)
start=$SECONDS
if [[ $sanitized == 0 ]]; then
  # glibc reserves address space per thread arena: keep it to a few.
  out=$(ulimit -v $((2 * 1024 * 1024)) && MALLOC_ARENA_MAX=2 "$bin" load "$dir" 2>&1)
else
  out=$("$bin" load "$dir" 2>&1)
fi
rc=$?
elapsed=$((SECONDS - start))
echo "$out"
[[ $rc -eq 0 ]] || fail "load exited $rc (not a clean ResourceExhausted)"
grep -q "RESOURCE_EXHAUSTED" <<<"$out" || fail "no ResourceExhausted status"
grep -q "config.json" <<<"$out" || fail "the status does not name config.json"
((elapsed <= 60)) || fail "took ${elapsed} s"
peak=$(sed -n 's/^peak_kib: //p' <<<"$out")
if [[ $sanitized == 0 ]]; then
  ((peak < 256 * 1024)) || fail "peak resident set ${peak} KiB"
fi
echo "PASS (${elapsed} s, peak ${peak} KiB)"
