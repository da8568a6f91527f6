#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sim-verbose.sh BUILD OUT [PHASES] — every subtest of the sim-based unit
# tests (capacity, controller, rtt-mix, player, household), one by one, with
# --verbose, at each controller tick phase 0 .. PHASES-1 ms (default 10;
# BWSS_SIM_TICK_PHASE_MS, tests/unit/sim.h), each run's output (GLib's
# "random seed" line dropped: it changes each run) in OUT/TEST.SUBTEST.PHASE.
# Two builds' OUT directories compared (diff -r, or cmp file by file) tell
# where a law change moves the model's output; grep -l 'Bail out' counts the
# failing runs.  A tool to judge a law change against, not a test.
set -u
build=${1:?usage: sim-verbose.sh BUILD OUT [PHASES]} out=${2:?usage: sim-verbose.sh BUILD OUT [PHASES]}
phases=${3:-10}
tests=${SIM_SPREAD_TESTS:-capacity controller rtt-mix player household}
mkdir -p "$out"
for t in $tests; do
  exe="$build/tests/unit/test-$t"
  for p in $("$exe" -l | grep '^/'); do
    for ((ph = 0; ph < phases; ph++)); do
      BWSS_SIM_TICK_PHASE_MS=$ph "$exe" --verbose -p "$p" 2>&1 | grep -v 'random seed' \
        >"$out/$t.$(echo "${p#/}" | tr / _).$ph"
    done
  done
done
