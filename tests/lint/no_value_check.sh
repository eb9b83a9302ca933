#!/usr/bin/env bash
# tests/lint/no_value_check.sh
#
# Fails, listing file:line, for every `.value()` call in library code: the
# .h and .cc files under gc/ runtime/ ops/ models/ serialize/ util/ tools/
# python/ (the extension module, where an abort takes the interpreter down).
# Library code returns a fallible result's status (GG_ASSIGN_OR_RETURN,
# GG_RETURN_IF_ERROR) instead of calling .value() on it, which aborts the
# process on an error.
#
# The rule, kept simple on purpose:
#   - a line whose first non-blank characters are `//` is a comment and is
#     skipped; on other lines only the text before a `//` is looked at;
#   - any `.value()` left is a hit (`.value(` followed by `)`, so calls with
#     arguments such as `value_or(x)` or `value(i)` are not);
#   - a hit is allowed when tests/lint/no_value_allowlist.txt has a line
#     `path:text` whose path is the file and whose text occurs in the line
#     (for accessors that are not StatusOr/optional: a proto's repeated
#     field, std::error_code::value(), GG_ASSIGN_OR_RETURN's own expansion).
#
# Usage: no_value_check.sh [workspace root [folder...]]. Without a root (as
# the sh_test //tests/lint:no_value_check runs it) the root is found from
# this script's real location, so the check reads the current source tree;
# folders (default: all eight above) narrow the check, e.g. `. models`.
set -euo pipefail

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
root=${1:-$(cd "$here/../.." && pwd)}
[[ $# -gt 0 ]] && shift
wanted=("$@")
[[ ${#wanted[@]} -eq 0 ]] && wanted=(gc runtime ops models serialize util tools python)
allowlist="$root/tests/lint/no_value_allowlist.txt"
cd "$root"

dirs=()
for d in "${wanted[@]}"; do
  [[ -d $d ]] && dirs+=("$d")
done
if [[ ${#dirs[@]} -eq 0 ]]; then
  echo "no_value_check: no library folder found under $root" >&2
  exit 2
fi

hits=$(find "${dirs[@]}" -type f \( -name '*.h' -o -name '*.cc' \) -print0 |
  sort -z |
  xargs -0 awk -v allowlist="$allowlist" '
    BEGIN {
      while ((getline entry < allowlist) > 0) {
        if (entry ~ /^[ \t]*(#|$)/) continue
        sep = index(entry, ":")
        if (sep == 0) continue
        n++
        allow_file[n] = substr(entry, 1, sep - 1)
        allow_text[n] = substr(entry, sep + 1)
      }
    }
    {
      line = $0
      if (line ~ /^[ \t]*\/\//) next
      cut = index(line, "//")
      if (cut > 0) line = substr(line, 1, cut - 1)
      if (index(line, ".value()") == 0) next
      for (i = 1; i <= n; i++) {
        if (FILENAME == allow_file[i] && index(line, allow_text[i]) > 0) next
      }
      printf "%s:%d: %s\n", FILENAME, FNR, $0
    }')

if [[ -n $hits ]]; then
  echo "$hits"
  echo
  echo "no_value_check: $(wc -l <<<"$hits") .value() call(s) in library code."
  echo "Return the status instead (GG_ASSIGN_OR_RETURN / GG_RETURN_IF_ERROR);"
  echo "for an accessor that is not a StatusOr or optional, add a"
  echo "'path:text' line to tests/lint/no_value_allowlist.txt."
  exit 1
fi
echo "no_value_check: no .value() call in ${dirs[*]}"
