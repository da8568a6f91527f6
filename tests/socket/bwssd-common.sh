# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the bwssd tests with a name, after setting $top (bwss-top): a
# domain of their own ($domain, exported as BWSS_DOMAIN), where its files
# are ($rundir, the user's runtime directory: bwss-top --paths), a scratch
# directory ($tmp), the processes to kill at exit ($pids), and the TAP
# helpers of tap.sh.
domain="bwss-test-$1-$$"
export BWSS_DOMAIN=$domain
rundir=$("$top" --paths | awk '$1 == "runtime-dir" { print $2 }')
[ -d "$rundir" ] || { echo "Bail out! bwss-top --paths: no runtime directory"; exit 1; }
tmp=$(mktemp -d)
pids=
trap 'kill -9 $pids 2>/dev/null; rm -rf "$tmp"; rm -f "$rundir/$domain" "$rundir/$domain".*' EXIT
trap 'exit 143' TERM
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
. "$(dirname "${BASH_SOURCE[0]}")/flow-watch.sh"
