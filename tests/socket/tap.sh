# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the shell tests: TAP helpers.  ok/not_ok print one result and
# count it ($n, $failed); check NAME EXPR prints ok if EXPR (eval'd) holds.
n=0 failed=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check () { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }
