#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bwssd's rules file in every odd shape (issue 22), each refused at once
# with one short message naming the file (and the line), never read whole,
# never waited for:
#   - a FIFO as the user's rules file: bwssd starts, `--check` answers at
#     once, a FIFO put in place of --rules and SIGHUP does not stop the main
#     loop (SIGTERM still ends it at once);
#   - a symbolic link to /dev/zero: refused (not followed), memory bounded;
#   - a file over 1 MiB; a 500-kB line: the message quotes 80 bytes of it;
#   - a NUL byte: refused with its line (it was dropped with what followed);
#   - a rule with a non-ASCII name ([vidéo]): `--check` and the daemon
#     agree (the flow is adopted with origin "rule vid?o");
#   - an ::ffff:-mapped address rule matches a flow to that IPv4 address.
# (TAP.)  $1 bwssd, $2 bwss-top
set -u
bwssd=$1 top=$2
. "$(dirname "$0")/bwssd-common.sh" rules

# runs bwssd --check --rules $1 with a bound on time and memory (but under
# AddressSanitizer, which reserves terabytes of address space); sets rc, ms
check_file () {
  local t0
  t0=$(now_ms)
  ( [ -n "${ASAN_OPTIONS:-}" ] || ulimit -v 1000000; timeout 10 "$bwssd" --check --rules "$1" ) >"$tmp/out" 2>"$tmp/err"
  rc=$?
  ms=$(($(now_ms) - t0))
}
# the first line of the message, cut for the test's own name
said () { head -c 160 "$tmp/err" | head -1; }

# ---- a FIFO ----
mkdir -p "$tmp/cfg/bwss"
mkfifo "$tmp/cfg/bwss/rules.conf"
check_file "$tmp/cfg/bwss/rules.conf"
# (a bwssd that opened the FIFO would wait for a writer: timeout's 124, not 2)
check "--check on a FIFO -> exit 2 in $ms ms: $(said)" \
  '[ $rc -eq 2 ] && grep -q "rules.conf: a FIFO, not a regular file" "$tmp/err"'
XDG_CONFIG_HOME="$tmp/cfg" "$bwssd" --foreground 2>"$tmp/fifo.log" &
d=$!; pids="$pids $d"
started=no
for _ in $(seq 60); do "$top" --domain "$domain" --once --json 2>/dev/null | grep -q '"bwssd_pid":[0-9]' && { started=yes; break; }; sleep 0.05; done
check "bwssd with a FIFO as the user's rules file starts (built-in rules): $(grep -m1 FIFO "$tmp/fifo.log")" \
  '[ $started = yes ] && grep -q "a FIFO, not a regular file (built-in rules until it is fixed)" "$tmp/fifo.log"'
t0=$(now_ms)
kill -TERM $d 2>/dev/null
for _ in $(seq 40); do kill -0 $d 2>/dev/null || break; sleep 0.05; done
gone=$(kill -0 $d 2>/dev/null && echo no || echo yes)
check "... and SIGTERM ends it in $(($(now_ms) - t0)) ms" '[ $gone = yes ]'
kill -9 $d 2>/dev/null; wait $d 2>/dev/null

printf '[default]\nweight=1\n' >"$tmp/live.conf"
"$bwssd" --foreground --rules "$tmp/live.conf" 2>"$tmp/live.log" &
d=$!; pids="$pids $d"
for _ in $(seq 60); do "$top" --domain "$domain" --once --json 2>/dev/null | grep -q '"bwssd_pid":[0-9]' && break; sleep 0.05; done
rm "$tmp/live.conf"; mkfifo "$tmp/live.conf"
kill -HUP $d
sleep 0.5
t0=$(now_ms)
kill -TERM $d 2>/dev/null
for _ in $(seq 40); do kill -0 $d 2>/dev/null || break; sleep 0.05; done
gone=$(kill -0 $d 2>/dev/null && echo no || echo yes)
check "a FIFO put in place of --rules, SIGHUP: refused ($(grep -m1 FIFO "$tmp/live.log")), SIGTERM still ends it in $(($(now_ms) - t0)) ms" \
  '[ $gone = yes ] && grep -q "live.conf: a FIFO, not a regular file (the rules in force stay)" "$tmp/live.log"'
kill -9 $d 2>/dev/null; wait $d 2>/dev/null

# ---- links, size, long lines, NUL ----
ln -s /dev/zero "$tmp/zero.conf"
check_file "$tmp/zero.conf"
check "--check on a link to /dev/zero -> exit 2 in $ms ms: $(said)" \
  '[ $rc -eq 2 ] && grep -q "zero.conf: a symbolic link (not followed)" "$tmp/err"'
{ printf '[x]\nexe=curl\n'; head -c 2000000 /dev/zero | tr '\0' '#'; echo; } >"$tmp/big.conf"
check_file "$tmp/big.conf"
check "--check on a 2-MB file -> exit 2: $(said)" '[ $rc -eq 2 ] && grep -q "big.conf: larger than 1 MiB" "$tmp/err"'
{ printf '[x]\nexe=curl\n'; head -c 500000 /dev/zero | tr '\0' 'a'; echo; } >"$tmp/long.conf"
check_file "$tmp/long.conf"
check "--check on a 500-kB line -> exit 2, a message of $(wc -c <"$tmp/err") bytes naming line 3" \
  '[ $rc -eq 2 ] && [ "$(wc -c <"$tmp/err")" -lt 300 ] && grep -q "long.conf:3: .aaaa*\.\.\.. is neither" "$tmp/err"'
{ printf '[x]\nexe=curl\nweight=2'; printf '\0'; printf 'junk\nweight=-1\n'; } >"$tmp/nul.conf"
check_file "$tmp/nul.conf"
check "--check on a NUL byte -> exit 2 naming its line: $(said)" \
  '[ $rc -eq 2 ] && grep -q "nul.conf:3: a NUL byte" "$tmp/err"'

printf '[x]\nexe=curl\nshare=thread\n' >"$tmp/share.conf"
check_file "$tmp/share.conf"
check "--check on share=thread -> exit 2 naming line 3 and the key: $(said)" \
  '[ $rc -eq 2 ] && grep -q "share.conf:3: \[x\] share: .thread. is neither process, unit nor flow" "$tmp/err"'
printf '[x]\nexe=curl\nspeed=2\n' >"$tmp/key.conf"
check_file "$tmp/key.conf"
check "--check on an unknown key -> exit 2 listing every key, share and adopt included: $(said)" \
  '[ $rc -eq 2 ] && grep -q "key.conf:3: .*speed.*unknown key (match: exe, unit, remote-port, remote-address; action: priority, min-rate, weight, share, adopt)" "$tmp/err"'

# ---- names and addresses: --check and the daemon agree ----
serve_big
port2=$port
serve_big
cat >"$tmp/names.conf" <<RULES
[vidéo]
exe=curl
remote-port=$port
weight=2
share=flow

[mapped]
remote-address=::ffff:127.0.0.1
weight=3
RULES
check_file "$tmp/names.conf"
check "--check on [vidéo] and ::ffff:127.0.0.1 -> exit 0: $(cat "$tmp/out")" '[ $rc -eq 0 ] && grep -q "2 rules and \[default\]: good" "$tmp/out"'
"$bwssd" --foreground --rules "$tmp/names.conf" 2>"$tmp/names.log" &
d=$!; pids="$pids $d"
for _ in $(seq 60); do "$top" --domain "$domain" --once --json 2>/dev/null | grep -q '"bwssd_pid":[0-9]' && break; sleep 0.05; done
curl -s --limit-rate 1M -o /dev/null "http://127.0.0.1:$port/big.bin" &
c1=$!; pids="$pids $c1"
curl -s --limit-rate 1M -o /dev/null "http://127.0.0.1:$port2/big.bin" &
c2=$!; pids="$pids $c2"
# origin and weight of flow $1 in bwss-top --json, or what bwssd said of it
look () { "$top" --once --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
for f in d["flows"]:
    if f["pid"] == int(sys.argv[1]):
        print(f["origin"].replace(" ", "_"), f["weight"], f["share"])
for r in d["not_adopted"]:
    if r["pid"] == int(sys.argv[1]):
        print("refused:", r["reason"])' "$1"; }
for _ in $(seq 60); do
  a=$(look $c1) b=$(look $c2)
  [ -n "$a" ] && [ -n "$b" ] && break
  sleep 0.05
done
check "the daemon adopts the [vidéo] flow as 'rule vid?o', weight 2, share=flow: alone ($a)" '[ "$a" = "rule_vid?o 2 flow" ]'
check "the ::ffff:127.0.0.1 rule matches a flow to 127.0.0.1, weight 3, in its process's group by default ($b)" '[ "$b" = "rule_mapped 3 process" ]'
kill -TERM $d; wait $d
kill $c1 $c2 2>/dev/null

echo "1..$n"
[ $failed -eq 0 ]
