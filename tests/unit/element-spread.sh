#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# element-spread.sh BUILD [PHASES] — test-household's cells with the video
# read by the element (/household/element-*: its regime, stripes.c, picks
# one registered connection or three unseen ones) at each controller tick
# phase 0 .. PHASES-1 ms (default 10; BWSS_SIM_TICK_PHASE_MS,
# tests/unit/sim.h), and per cell and receiver RTT over the phases: this
# machine's total (% of plain TCP's, least-largest), the video's seconds at
# 90 % of its minimum (%, least), each download (% of its plain-TCP figure,
# least), the seconds in COMPETE and those the detector was right (% of
# those counted and judged, least), the seconds over n connections (%,
# largest), the queue's median while the traffic beside us ran and after
# it (ms, largest), and the latest return to DELAY after it (s; 0: none in
# some phase), as a markdown table.  The subtests' assertions are not what
# it reads: a failing phase is counted in the last column.
set -u
build=${1:?usage: element-spread.sh BUILD [PHASES]} phases=${2:-10}
exe="$build/tests/unit/test-household"
echo "| cell | rcv_rtt | this machine, % of plain TCP's (least-largest) | video at >= 90 % of its minimum, % (least) | each download, % of TCP's (least) | COMPETE, % of the seconds (least) | detector right, % (least) | over n connections, % of the seconds (largest) | queue median ms, on (after), largest | back to DELAY at, s (latest) | phases failing |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for c in $("$exe" -l | grep '^/household/element-'); do
  for ((ph = 0; ph < phases; ph++)); do
    BWSS_SIM_TICK_PHASE_MS=$ph "$exe" --verbose -p "$c" 2>&1 |
      perl -ne 'if (/^# element: (.*), the element, rcv_rtt (before 6\.16|6\.16\+): total ([0-9.]+) % of tcp, video at 90 % of its minimum ([0-9.]+) % .*each download >= ([0-9.]+) % .*COMPETE ([0-9]+) of ([0-9]+) s, detector right ([0-9]+) of ([0-9]+) s, over n connections ([0-9]+) s .*queue ([0-9.-]+) ms \(after ([0-9.-]+) ms\), back to DELAY at ([0-9]+) s/) { print join ("|", "'"$c"'", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13), "\n" } elsif (/^Bail out/) { print "bail|'"$c"'\n" }'
  done
done | awk -F'|' '
  $1 == "bail" { bail[$2]++; next }
  { path = $1; $0 = substr ($0, length ($1) + 2)
    k = $1 " | " $2
    if (!(k in n)) { order[++m] = k; sub_[k] = path }
    n[k]++; t[k] += $3
    if (!(k in tl) || $3 < tl[k]) tl[k] = $3
    if (!(k in th) || $3 > th[k]) th[k] = $3
    if (!(k in vl) || $4 < vl[k]) vl[k] = $4
    if (!(k in dl) || $5 < dl[k]) dl[k] = $5
    cs = 100 * $6 / $7; if (!(k in cl) || cs < cl[k]) cl[k] = cs
    rs = 100 * $8 / $9; if (!(k in rl) || rs < rl[k]) rl[k] = rs
    ms = 100 * $10 / $7; if (ms > mh[k]) mh[k] = ms
    if (!(k in qo) || $11 > qo[k]) qo[k] = $11
    if (!(k in qa) || $12 > qa[k]) qa[k] = $12
    if (!(k in ba)) ba[k] = $13
    if ($13 == 0 || ba[k] == 0) ba[k] = 0; else if ($13 > ba[k]) ba[k] = $13 }
  END { for (i = 1; i <= m; i++) { k = order[i]
          printf "| %s | %.1f (%.1f-%.1f) | %.1f | %.1f | %.1f | %.1f | %.0f | %.1f (%.1f) | %d | %d |\n", k,
                 t[k] / n[k], tl[k], th[k], vl[k], dl[k], cl[k], rl[k], mh[k], qo[k], qa[k], ba[k], bail[sub_[k]] + 0 } }'
