# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the bwssd tests with a name: a domain of their own ($domain,
# exported as BWSS_DOMAIN), a scratch directory ($tmp), the processes to
# kill at exit ($pids), and the TAP helpers of tap.sh.
domain="bwss-test-$1-$$"
export BWSS_DOMAIN=$domain
tmp=$(mktemp -d)
pids=
trap 'kill -9 $pids 2>/dev/null; rm -rf "$tmp"; rm -f /dev/shm/$domain /dev/shm/$domain.*' EXIT
trap 'exit 143' TERM
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
