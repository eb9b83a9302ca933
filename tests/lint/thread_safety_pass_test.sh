#!/usr/bin/env bash
# Runs thread_safety_pass_test.py with Debian's Python (see the BUILD rule).
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/thread_safety_pass_test.py"
