# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the shell tests: TAP helpers.  ok/not_ok print one result and
# count it ($n, $failed); check NAME EXPR prints ok if EXPR (eval'd) holds.
# gone PID holds once process PID has exited: no such process, or a zombie
# nobody has reaped (a detached daemon whose parent is a PID namespace's
# first process, which may never reap it).
n=0 failed=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check () { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }
gone () { [ ! -e /proc/$1/stat ] || [ "$(sed 's/.*) //' /proc/$1/stat 2>/dev/null | cut -c1)" = Z ]; }
