#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-domain-ab — two bwssd builds compared on bench-domain, alternated run
# by run (A, B, A, B, ...) so that the machine's other work falls on both:
# RUNS runs of each a set, SETS sets, at idle priority (chrt -i 0, nice 19).
# A benchmark, not a test.
#
#   bench-domain-ab.sh [--video] BENCH NAME_A=BWSSD_A NAME_B=BWSSD_B [FLOWS] [SETS] [RUNS]
#                      (defaults: 1000 flows, 2 sets, 3 runs)
#
# --video passes on to bench-domain (one of the flows has a minimum).
# BENCH is a bench-domain binary (one for both: the client side is not what
# is compared); each NAME labels its bwssd in the table.  Prints a Markdown
# table, one row per set and build: the median over the set's runs of each
# figure bench-domain prints (bwssd's CPU µs per 10 ms of wall time: median,
# p99, worst; its share of one core), each run's in parentheses; and a last
# row per build over every run.  The date, the machine and the load before
# and after each set go above and below it.
set -u
opts=()
[ "${1:-}" = --video ] && { opts=(--video); shift; }
bench=$1 a=$2 b=$3 flows=${4:-1000} sets=${5:-2} runs=${6:-3}
names=("${a%%=*}" "${b%%=*}") bins=("${a#*=}" "${b#*=}")
ulimit -n $((flows + 256)) 2>/dev/null || { echo "bench-domain-ab: an fd limit of $((flows + 256)) is needed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median of the numbers given
median () { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench-domain ${opts[*]}${opts:+ }$flows, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), Linux $(uname -r)"
echo
echo "| set | bwssd | median | p99 | worst | one core |"
echo "|---|---|---|---|---|---|"
for ((s = 1; s <= sets; s++)); do
  load0=$(cut -d' ' -f1 /proc/loadavg)
  for ((r = 1; r <= runs; r++)); do
    for k in 0 1; do
      row=$(BWSS_BWSSD=${bins[$k]} chrt -i 0 nice -n 19 "$bench" "${opts[@]}" "$flows" | grep "^| $flows |" | tail -1)
      # | flows | in the domain | windows | Mbit/s | median | p99 | worst | core % |
      echo "$row" | awk -F'|' '{ gsub(/[ %]/, "", $9); print $6 + 0, $7 + 0, $8 + 0, $9 + 0 }' >>"$tmp/$s.$k"
      echo "$row" | awk -F'|' '{ gsub(/[ %]/, "", $9); print $6 + 0, $7 + 0, $8 + 0, $9 + 0 }' >>"$tmp/all.$k"
    done
  done
  load1=$(cut -d' ' -f1 /proc/loadavg)
  for k in 0 1; do
    cells=
    for col in 1 2 3 4; do
      mapfile -t v < <(awk -v c=$col '{ print $c }' "$tmp/$s.$k")
      m=$(median "${v[@]}")
      [ $col = 4 ] && cells="$cells | $m % ($(IFS=/; echo "${v[*]}" | sed 's#/# / #g'))" \
                   || cells="$cells | $m ($(IFS=/; echo "${v[*]}" | sed 's#/# / #g'))"
    done
    echo "| $s (load $load0 → $load1) | ${names[$k]}$cells |"
  done
done
for k in 0 1; do
  cells=
  for col in 1 2 3 4; do
    mapfile -t v < <(awk -v c=$col '{ print $c }' "$tmp/all.$k")
    m=$(median "${v[@]}")
    [ $col = 4 ] && cells="$cells | **$m %**" || cells="$cells | **$m**"
  done
  echo "| all $((sets * runs)) runs | ${names[$k]}$cells |"
done
