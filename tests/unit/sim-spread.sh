#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sim-spread.sh BUILD [PHASES] — the fluid model's own spread: every subtest
# of the sim-based unit tests (capacity, controller, rtt-mix, player), one by
# one, at each controller tick phase 0 .. PHASES-1 ms (default 10;
# BWSS_SIM_TICK_PHASE_MS, tests/unit/sim.h).  Prints, per phase, the
# subtests that fail, then each failing subtest with the number of phases it
# fails in.  A tool to judge a law change against (run it before and after),
# not a test.  SIM_SPREAD_TESTS names other test programs (e.g. household);
# other variables of the environment pass through.
set -u
build=${1:?usage: sim-spread.sh BUILD [PHASES]} phases=${2:-10}
tests=${SIM_SPREAD_TESTS:-capacity controller rtt-mix player}
declare -A count
for ((ph = 0; ph < phases; ph++)); do
  fails=
  for t in $tests; do
    exe="$build/tests/unit/test-$t"
    for p in $("$exe" -l | grep '^/'); do
      # in the background: a subtest that aborts is counted, not reported by bash
      BWSS_SIM_TICK_PHASE_MS=$ph "$exe" -p "$p" >/dev/null 2>&1 &
      if ! wait $!; then
        fails="$fails ${p#/}"
        count[${p#/}]=$(( ${count[${p#/}]:-0} + 1 ))
      fi
    done
  done
  echo "phase $ph ms:${fails:- none fails}"
done
total=0
for k in "${!count[@]}"; do
  echo "${count[$k]} $k"
  total=$((total + count[$k]))
done | sort -rn
for k in "${!count[@]}"; do total=$((total + count[$k])); done
echo "failing runs: $total of $((phases * $(for t in $tests; do "$build/tests/unit/test-$t" -l | grep -c '^/'; done | paste -sd+ | bc)))"
