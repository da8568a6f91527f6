# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the bwssd tests with a name, after setting $top (bwss-top): a
# domain of their own ($domain, exported as BWSS_DOMAIN), where its files
# are ($rundir, the user's runtime directory: bwss-top --paths), a scratch
# directory ($tmp), the processes to kill at exit ($pids), and the TAP
# helpers of tap.sh.
# $$ alone is not unique: under isolated.sh every test is pid 2 or 3 of a PID
# namespace of its own, while the runtime directory, where a domain's socket
# and lock are, is the machine's; two runs of one test side by side would
# share a domain (one bwssd refused, the other's flows read as its own).  The
# namespace's inode tells them apart.
domain="bwss-test-$1-$$-$(stat -L -c %i /proc/self/ns/pid)"
export BWSS_DOMAIN=$domain
rundir=$("$top" --paths | awk '$1 == "runtime-dir" { print $2 }')
[ -d "$rundir" ] || { echo "Bail out! bwss-top --paths: no runtime directory"; exit 1; }
tmp=$(mktemp -d)
pids=
trap 'kill -9 $pids 2>/dev/null; rm -rf "$tmp"; rm -f "$rundir/$domain" "$rundir/$domain".*' EXIT
trap 'exit 143' TERM
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
. "$(dirname "${BASH_SOURCE[0]}")/flow-watch.sh"

# the flow of @1 (pid): flow_line's fields, or nothing
flow_of () { "$top" --once --json 2>/dev/null | flow_line "$1"; }

# Serves $tmp over HTTP on loopback until the test exits, a 4-GiB sparse
# big.bin in it: sets $port and $url (big.bin's), the server in $pids, once
# it answers (at most $patience_ms).
serve_big () {
  [ -e "$tmp/big.bin" ] || truncate -s 4G "$tmp/big.bin"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  python3 -m http.server "$port" --bind 127.0.0.1 --directory "$tmp" >/dev/null 2>&1 &
  pids="$pids $!"
  for _ in $(seq $((patience_ms / 100))); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
  url="http://127.0.0.1:$port/big.bin"
}
