#!/usr/bin/env bash
# The tfevents command line: --help prints the usage text (it used to try to
# open a file named "--help"), no PATH prints it and exits 2, an unreadable
# path exits 2 naming it.
set -uo pipefail
bin=$1
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
echo "PASS"
