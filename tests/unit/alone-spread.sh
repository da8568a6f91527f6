#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# alone-spread.sh BUILD [PHASES] — the model's cells with nobody else on the
# link where the delay loop has entered COMPETE (adaptive3 and -latch:
# its player's four views, first-second-join; fig7-udp: twenty runs) at
# each controller tick phase 0 .. PHASES-1 ms (default 10;
# BWSS_SIM_TICK_PHASE_MS, tests/unit/sim.h), and per cell and phase the
# seconds in COMPETE (adaptive3: of each view, in test-player's order —
# the minimum and the weight always, the element, the tracer before, the
# tracer; a build whose test does not print them, and first-second-join:
# of each run that entered, sim_free's line, joined by "+"),
# as a markdown table; fig7-udp runs its ten phases itself, under both
# receiver RTTs: its row gives the seconds of each of its runs that
# entered.  Every such second is a false entry.  A tool to judge a
# detector change against (run it before and after), not a test: a phase
# whose assertions fail is marked "F".
set -u
build=${1:?usage: alone-spread.sh BUILD [PHASES]} phases=${2:-10}
dir="$build/tests/unit"
echo "| cell | phase: seconds in COMPETE of each run that entered (F: a failing assertion) |"
echo "|---|---|"
row () {
  local exe=$1 path=$2 cells="" ph out
  for ((ph = 0; ph < phases; ph++)); do
    out=$(BWSS_SIM_TICK_PHASE_MS=$ph "$dir/$exe" -p "$path" --verbose 2>&1)
    local secs
    secs=$(printf '%s\n' "$out" | sed -nE 's/.*slow\), COMPETE ([0-9]+) s.*/\1/p' | paste -sd/ -)
    [ -n "$secs" ] ||
      secs=$(printf '%s\n' "$out" | sed -nE 's/.*COMPETE in ([0-9]+) of [0-9]+ s.*/\1/p' | paste -sd+ -)
    local cell=${secs:--}
    printf '%s\n' "$out" | grep -q 'Bail out' && cell="${secs:-}F"
    cells="$cells $ph:$cell"
  done
  echo "| ${path##*/} |$cells |"
}
row test-player /player/trace/adaptive3
row test-player /player/trace/adaptive3-latch
row test-capacity /capacity/trace/first-second-join
out=$("$dir/test-capacity" -p /capacity/compete/fig7-udp --verbose 2>&1)
runs=$(printf '%s\n' "$out" | sed -nE 's/.*ticks \+([0-9]+) ms: COMPETE ([1-9][0-9]*) s;.*/+\1 ms: \2 s/p' | paste -sd' ' -)
printf '%s\n' "$out" | grep -q 'Bail out' && runs="${runs} F"
echo "| fig7-udp (20 runs) | ${runs:--} |"
