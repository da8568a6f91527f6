#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# moving-spread.sh BUILD [PHASES] — test-capacity's moving links with
# nobody else on them (/capacity/compete/moving-alone: the wifi and lte
# traces, a link that falls to 10-20 % of its rate for 20 s) at each
# controller tick phase 0 .. PHASES-1 ms (default 10; BWSS_SIM_TICK_PHASE_MS,
# tests/unit/sim.h), and per cell and receiver RTT over the phases: the
# seconds the detector's last verdict read "foreign" (mean, largest), of
# them by a queue beside a small share alone (largest), the seconds in
# COMPETE (mean, largest) and the video's seconds at 90 % of its minimum
# (least, of those counted), as a markdown table.  Every queue there is
# ours: each such second is a wrong one.  The subtest's assertions are not
# what it reads: a failing phase still prints its figures, and is counted
# in the last column.
set -u
build=${1:?usage: moving-spread.sh BUILD [PHASES]} phases=${2:-10}
exe="$build/tests/unit/test-capacity"
echo "| cell | rcv_rtt | foreign, s (largest) | beside a small share, s (largest) | COMPETE, s (largest) | video at >= 90 % of its minimum, s (least of) | phases failing |"
echo "|---|---|---|---|---|---|---|"
for ((ph = 0; ph < phases; ph++)); do
  BWSS_SIM_TICK_PHASE_MS=$ph "$exe" --verbose -p /capacity/compete/moving-alone 2>&1 |
    sed -n -E -e 's/^# moving alone: (.*), rcv_rtt ([^:]*): foreign ([0-9.]+) s \(beside a small share ([0-9.]+) s\), COMPETE ([0-9]+) s, video at 90 % of its minimum ([0-9]+) of ([0-9]+) s/\1|\2|\3|\4|\5|\6|\7/p' \
      -e 's/^Bail out.*/bail|/p'
done | awk -F'|' '
  $1 == "bail" { bail++; next }
  { k = $1 " | " $2
    if (!(k in n)) order[++m] = k
    n[k]++; f[k] += $3; c[k] += $5
    if ($3 > fm[k]) fm[k] = $3
    if ($4 > bm[k]) bm[k] = $4
    if ($5 > cm[k]) cm[k] = $5
    if (!(k in vl) || $6 < vl[k]) { vl[k] = $6; vc[k] = $7 } }
  END { for (i = 1; i <= m; i++) { k = order[i]
          printf "| %s | %.1f (%.1f) | %.1f | %.1f (%d) | %d of %d | %d |\n", k, f[k] / n[k], fm[k],
                 bm[k], c[k] / n[k], cm[k], vl[k], vc[k], bail + 0 } }'
