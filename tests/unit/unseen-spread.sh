#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# unseen-spread.sh BUILD [PHASES] [CELLS] — test-household's cells with the
# video over three connections (CELLS, default "unseen-1 unseen-3": the law
# does not see them; grouped-1, grouped-3: registered as one stream)
# at each controller tick phase 0 .. PHASES-1 ms (default 10;
# BWSS_SIM_TICK_PHASE_MS, tests/unit/sim.h), and per cell and receiver RTT
# the mean over the phases (least and largest in brackets) of this
# machine's total (% of plain TCP's), the video's seconds at 90 % of its
# minimum (%, the least phase in brackets), each download (% of its
# plain-TCP figure, the least of either in brackets), the seconds in
# COMPETE (%), σ (kbit/s) and the queue's target (ms), as a markdown table.
# The subtests' assertions are not what it reads: a failing phase is still
# counted, and its "Bail out" line marked in the last column.
set -u
build=${1:?usage: unseen-spread.sh BUILD [PHASES] [CELLS]} phases=${2:-10} cells=${3:-unseen-1 unseen-3}
exe="$build/tests/unit/test-household"
echo "| cell | rcv_rtt | this machine, % of plain TCP's (least-largest) | video at >= 90 % of its minimum, % of the seconds (least) | downloads, % of TCP's (least) | COMPETE, % of the seconds | σ kbit/s | queue target ms | phases failing |"
echo "|---|---|---|---|---|---|---|---|---|"
for c in $cells; do
  for ((ph = 0; ph < phases; ph++)); do
    BWSS_SIM_TICK_PHASE_MS=$ph "$exe" --verbose -p /household/$c 2>&1 |
      sed -n -E -e 's/^# .*over 3 [a-z]+, rcv_rtt ([^:]*): total ([0-9.]+) % of tcp, video at 90 % of its minimum ([0-9.]+) % .*downloads ([0-9.]+) \/ ([0-9.]+) %.*COMPETE ([0-9]+) of ([0-9]+) s, sigma ([0-9]+) kbit\/s, queue target ([0-9.]+) ms/'"$c"'|\1|\2|\3|\4|\5|\6|\7|\8|\9/p' \
        -e 's/^Bail out.*/'"$c"'|bail/p'
  done
done | awk -F'|' '
  $2 == "bail" { bail[$1]++; next }
  { k = $1 " | " $2
    if (!(k in n)) { order[++m] = k; cell[k] = $1 }
    n[k]++; t[k] += $3; v[k] += $4; d1[k] += $5; d2[k] += $6; cs[k] += $7 / $8; s[k] += $9; q[k] += $10
    dm = $5 < $6 ? $5 : $6
    if (!(k in tl) || $3 < tl[k]) tl[k] = $3
    if (!(k in th) || $3 > th[k]) th[k] = $3
    if (!(k in vl) || $4 < vl[k]) vl[k] = $4
    if (!(k in dl) || dm < dl[k]) dl[k] = dm }
  END { for (i = 1; i <= m; i++) { k = order[i]
          printf "| %s | %.1f (%.1f-%.1f) | %.1f (%.1f) | %.1f / %.1f (%.1f) | %.0f | %.0f | %.1f | %d |\n", k,
                 t[k] / n[k], tl[k], th[k], v[k] / n[k], vl[k], d1[k] / n[k], d2[k] / n[k], dl[k],
                 100 * cs[k] / n[k], s[k] / n[k], q[k] / n[k], bail[cell[k]] + 0 } }'
