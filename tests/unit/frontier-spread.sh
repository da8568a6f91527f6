#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# frontier-spread.sh BUILD [PHASES] [PATTERN] — test-household --frontier at
# each controller tick phase 0 .. PHASES-1 ms (default 10;
# BWSS_SIM_TICK_PHASE_MS, tests/unit/sim.h), and per cell, receiver RTT and
# policy whose label matches the extended regex PATTERN (default: plain TCP
# and the law, over 1, 2 and 3 connections) the mean over the phases of
# this machine's total (% of plain TCP's), the video's seconds at 90 % of
# its minimum (%, the least phase in brackets), the video's and the
# neighbour's kbit/s and each download (% of its plain-TCP figure), as a
# markdown table.  One phase is one timing of the law's ticks against the
# senders'; the fixed policies move little with it, the law more.
set -u
build=${1:?usage: frontier-spread.sh BUILD [PHASES] [PATTERN]} phases=${2:-10}
pattern=${3:-'plain TCP|COMPETE'}
exe="$build/tests/unit/test-household"
echo "| cell | rcv_rtt | policy | this machine, % of plain TCP's | video at >= 90 % of its minimum, % of the seconds (least phase) | video kbit/s | neighbour kbit/s | download 1, % of TCP's | download 2, % of TCP's |"
echo "|---|---|---|---|---|---|---|---|---|"
for ((ph = 0; ph < phases; ph++)); do
  BWSS_SIM_TICK_PHASE_MS=$ph "$exe" --frontier | grep -E "^\| cubic-[0-9] \|.*($pattern)"
done | awk -F' *\\| *' '
  { k = $2 " | " $3 " | " $4
    if (!(k in n)) order[++m] = k
    n[k]++; t[k] += $5; v[k] += $6; vk[k] += $8; nb[k] += $9; d1[k] += $10; d2[k] += $11
    if (!(k in lo) || $6 < lo[k]) lo[k] = $6 }
  END { for (i = 1; i <= m; i++) { k = order[i]
          printf "| %s | %.1f | %.1f (%.1f) | %.0f | %.0f | %.0f | %.0f |\n", k, t[k] / n[k],
                 v[k] / n[k], lo[k], vk[k] / n[k], nb[k] / n[k], d1[k] / n[k], d2[k] / n[k] } }'
