#!/usr/bin/env bash
# The tfevents command line: --help prints the usage text (it used to try to
# open a file named "--help"), no PATH prints it and exits 2, an unreadable
# path exits 2 naming it. An events file of a few KiB on disk whose record
# parses to gigabytes is refused with a clear error and exit status 1 under
# a 1 GB address-space limit, in seconds, whether the expansion is in the
# event or in the GraphDef it holds.
set -uo pipefail
bin=$1
write_packed_zeros=$2
fail() { echo "FAIL: $*"; exit 1; }

out=$("$bin" --help 2>&1)
grep -q "Usage: tfevents PATH" <<<"$out" || fail "--help printed: $out"
grep -q "No such file" <<<"$out" && fail "--help was taken as a path: $out"

out=$("$bin" 2>&1); rc=$?
[[ $rc -eq 2 ]] || fail "no PATH exited $rc"
grep -q "Usage: tfevents PATH" <<<"$out" || fail "no PATH printed: $out"

out=$("$bin" "$TEST_TMPDIR/missing" 2>&1); rc=$?
[[ $rc -eq 2 ]] || fail "missing path exited $rc"
grep -q "missing" <<<"$out" || fail "missing path not named: $out"

out=$("$bin" --no_such_flag "$TEST_TMPDIR" 2>&1); rc=$?
[[ $rc -ne 0 ]] || fail "an unknown flag was accepted"
# A sparse record of 128 MiB of packed zeros: 2^27 int64 elements (1 GiB,
# more while the repeated field grows) once parsed. ASan and TSan reserve terabytes of address space, so under
# them the limit is left off (and the peak RSS unchecked: their shadow
# memory counts in it).
sanitized=0
if [[ -n ${ASAN_OPTIONS:-}${TSAN_OPTIONS:-} ]] ||
   ldd "$bin" 2>/dev/null | grep -qE 'lib(a|t)san'; then
  sanitized=1
fi
limit_kb=1000000
for kind in summary graph; do
  hostile=$TEST_TMPDIR/events.out.tfevents.$kind
  "$write_packed_zeros" "$hostile" "$kind" $((1 << 27)) ||
    fail "could not write $hostile"
  rss_file=$TEST_TMPDIR/rss.$kind
  started=$SECONDS
  out=$(
    if ((!sanitized)); then ulimit -v "$limit_kb"; fi
    if ((!sanitized)) && [[ -x /usr/bin/time ]]; then
      exec /usr/bin/time -f %M -o "$rss_file" timeout 120 "$bin" "$hostile"
    fi
    exec timeout 120 "$bin" "$hostile"
  ) 2>&1
  rc=$?
  took=$((SECONDS - started))
  [[ $rc -ne 124 ]] || fail "$kind: still running after 120 s"
  [[ $rc -eq 1 ]] || fail "$kind: exited $rc (want 1): $out"
  grep -q "OVER BUDGET: *$hostile: record at byte offset 0: .*budget of 2147483648 bytes of memory" <<<"$out" ||
    fail "$kind: no clear refusal naming the file, offset and budget: $out"
  if [[ -s $rss_file ]]; then
    rss_kb=$(tail -1 "$rss_file")
    ((rss_kb < limit_kb)) || fail "$kind: peak RSS $rss_kb KB"
    echo "$kind: refused in $took s, peak RSS $rss_kb KB"
  else
    echo "$kind: refused in $took s"
  fi
done
echo "PASS"
