# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the bwssd tests with a name: a domain of their own ($domain,
# exported as BWSS_DOMAIN), a scratch directory ($tmp), the processes to
# kill at exit ($pids), and the TAP helpers (ok, not_ok, check; $n, $failed).
domain="bwss-test-$1-$$"
export BWSS_DOMAIN=$domain
tmp=$(mktemp -d)
pids=
trap 'kill -9 $pids 2>/dev/null; rm -rf "$tmp"; rm -f /dev/shm/$domain /dev/shm/$domain.*' EXIT
trap 'exit 143' TERM
n=0 failed=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check () { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }
