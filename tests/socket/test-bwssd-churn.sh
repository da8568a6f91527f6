#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bwssd under churn (issue 12): 1000 short downloads on loopback, opened at
# 100 a second for 60 s (6000, each 512 kB over 0.8 s), adopted and
# given back as they come and go.  Afterwards no slot of the domain, no fd
# and no memory of bwssd is left over (counted), and during the run every
# flow listed in two snapshots taken 0.25 s apart (adopted at least one
# scan earlier) had a target.  (TAP.)
# $1 bwssd, $2 bwss-top, $3 churn.py; CHURN_SECONDS (default 60).
set -u
bwssd=$1 top=$2 churn=$3
seconds=${CHURN_SECONDS:-60}
. "$(dirname "$0")/bwssd-common.sh" churn
# bwssd's fds: the fewest of ten looks 50 ms apart (a scan's sock_diag socket
# and pidfds live for a moment: a leaked fd shows in every look)
fds () {
  local least=1000000 c
  for _ in $(seq 10); do
    c=$(ls /proc/$1/fd | wc -l)
    [ "$c" -lt "$least" ] && least=$c
    sleep 0.05
  done
  echo $least
}
rss_kb () { awk '/^VmRSS/ {print $2}' /proc/$1/status; }

printf '[default]\nweight=1\n' >"$tmp/rules.conf"
"$bwssd" --foreground --rules "$tmp/rules.conf" 2>"$tmp/bwssd.log" &
d=$!; pids="$pids $d"
for _ in $(seq 100); do "$top" --domain "$domain" --once --json 2>/dev/null | grep -q '"bwssd_pid":[0-9]' && break; sleep 0.05; done
sleep 0.5
fd0=$(fds $d)

"$churn" "$seconds" 100 >"$tmp/churn.out" 2>&1 &
c=$!; pids="$pids $c"
# four snapshots a second (a flow lives 0.8 s)
i=0 rss10= t0=$SECONDS
while kill -0 $c 2>/dev/null; do
  "$top" --once --json >"$tmp/snap.$i.json" 2>/dev/null
  i=$((i + 1))
  [ -z "$rss10" ] && [ $((SECONDS - t0)) -ge 10 ] && rss10=$(rss_kb $d)
  sleep 0.25
done
wait $c; crc=$?
check "churn: $(cat "$tmp/churn.out")" '[ $crc -eq 0 ]'
python3 - "$tmp" $i >"$tmp/verdict" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
snaps = []
for i in range(n):
    try:
        snaps.append(json.load(open("%s/snap.%d.json" % (d, i))))
    except (OSError, ValueError):
        snaps.append(None)
seen, bad, checked = set(), [], 0
prev = set()
for s in snaps:
    if s is None:
        prev = set()
        continue
    now = set()
    for f in s["flows"]:
        key = (f["pid"], f["local"])
        now.add(key)
        seen.add(key)
        if key in prev:
            checked += 1
            if not f["controlled"] or f["target_bps"] is None:
                bad.append(key)
    prev = now
print(len(seen), checked, len(bad))
PY
read seen checked bad <"$tmp/verdict"
check "bwssd adopted $seen distinct flows over the run (>= 500 of the downloads)" '[ "$seen" -ge 500 ]'
check "every flow listed in the snapshot before too had a target: $checked checked, $bad without" \
  '[ "$checked" -gt 0 ] && [ "$bad" -eq 0 ]'
sleep 2
left=$("$top" --once --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["flows"]))')
check "no slot left once the downloads ended ($left flows)" '[ "$left" -eq 0 ]'
fd1=$(fds $d)
check "no fd left in bwssd ($fd0 before, $fd1 after)" '[ "$fd1" -eq "$fd0" ]'
rss1=$(rss_kb $d)
check "no memory growth after warm-up (VmRSS $rss10 kB at 10 s, $rss1 kB at the end; <= +1024)" \
  '[ -n "$rss10" ] && [ $((rss1 - rss10)) -le 1024 ]'
kill -TERM $d; wait $d; rc=$?
check "bwssd exits 0 on SIGTERM" '[ $rc -eq 0 ]'
echo "1..$n"
[ $failed -eq 0 ]
