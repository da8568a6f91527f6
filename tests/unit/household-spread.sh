#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# household-spread.sh BUILD [PHASES] — the CUBIC household cells of
# test-household (cubic-1, cubic-3, cubic-early, cubic-quic) at each
# controller tick phase 0 .. PHASES-1 ms (default 10; BWSS_SIM_TICK_PHASE_MS,
# tests/unit/sim.h), and per cell and receiver RTT the mean over the phases
# of this machine's total (% of plain TCP's), the video's seconds at 90 % of
# its minimum (%, the least phase in brackets) and the worst download (% of
# its plain-TCP figure), as a markdown table.  A tool to judge a law change
# against (run it before and after), not a test: a cell whose bar fails
# still prints its figures.
set -u
build=${1:?usage: household-spread.sh BUILD [PHASES]} phases=${2:-10}
exe="$build/tests/unit/test-household"
echo "| cell | rcv_rtt | this machine, % of plain TCP's | video at >= 90 % of its minimum, % of the seconds (least phase) | worst download, % of TCP's |"
echo "|---|---|---|---|---|"
for c in cubic-1 cubic-3 cubic-early cubic-quic; do
  for ((ph = 0; ph < phases; ph++)); do
    BWSS_SIM_TICK_PHASE_MS=$ph "$exe" -p "/household/$c" --verbose 2>&1 |
      sed -nE 's/.*rcv_rtt (before 6\.16|6\.16\+): total ([0-9.]+) % of tcp.* at 90 % of it ([0-9.]+) %.*each download >= ([0-9]+) %.*/\1|\2|\3|\4/p'
  done | awk -F'|' -v c="$c" '
    { n[$1]++; t[$1] += $2; v[$1] += $3; d[$1] += $4; if (!($1 in m) || $3 < m[$1]) m[$1] = $3 }
    END { for (k in n) printf "| %s | %s | %.1f | %.1f (%.1f) | %.0f |\n", c, k, t[k] / n[k], v[k] / n[k], m[k], d[k] / n[k] }'
done
