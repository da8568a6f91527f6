#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The packet-level model cells, one row each: runs each subtest of
test-capacity (the fq_packets_cell() cells and matrix-codel-lab) with
--verbose at the tick phases asked and sums the runs' own lines: the video's
short seconds a run (below 90 % of its minimum: mean and largest), the
downloads' use of what the video leaves (range and median run) and, where
the cell prints it, the required prebuffer.  Under 6.16+ the three shifts of
one phase may repeat another phase's runs: each run counts as printed.  A
failed assertion ends a subtest early: its row then says how many runs were
summed.  A tool to set builds beside each other, not a test.

Usage: packet-cells.py TEST PHASES SUBTEST...
  e.g. packet-cells.py build/tests/unit/test-capacity 10 \\
         /capacity/trace/matrix-codel-960k-packets /capacity/trace/matrix-codel-lab
"""
import os
import re
import statistics
import subprocess
import sys

# fq_packets_cell(): "..., rcv_rtt 6.16+, ticks +3 ms: the video at >= 90 % of its
# minimum 52 of 55 s; ...; the downloads' use 72.9 %; ...; required prebuffer 1.23 s"
PACKETS = re.compile(r"rcv_rtt (6\.16\+|before 6\.16), ticks \+\d+ ms: the video at >= 90 % of its "
                     r"minimum (\d+) of (\d+) s;.*?the downloads' use ([\d.]+) %;.*?"
                     r"required prebuffer ([\d.]+) s")
# matrix-codel-lab: "ticks +0 ms, 6.16+: the lab's receivers: ... downloads' use 67.4 %,
# the video at >= 90 % of its minimum 53 of 55 s"
CODEL_LAB = re.compile(r"ticks \+\d+ ms, (6\.16\+|before 6\.16): the lab's receivers: .*?"
                       r"downloads' use ([\d.]+) %, the video at >= 90 % of its minimum "
                       r"(\d+) of (\d+) s")


def runs(test, subtest, phase):
    """[(kernel, short seconds, use %, prebuffer s or None)] of one phase."""
    env = dict(os.environ, BWSS_SIM_TICK_PHASE_MS=str(phase))
    out = subprocess.run([test, "--verbose", "-p", subtest], env=env, capture_output=True,
                         text=True)
    text = out.stdout + out.stderr
    found = [(m[1], int(m[3]) - int(m[2]), float(m[4]), float(m[5]))
             for m in PACKETS.finditer(text)]
    found += [(m[1], int(m[4]) - int(m[3]), float(m[2]), None) for m in CODEL_LAB.finditer(text)]
    return found


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    test, phases, subtests = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    print("| cell | kernel | runs | video short s a run, mean (max) | downloads' use %, runs "
          "(median) | required prebuffer s, median (range) |")
    print("|---|---|---|---|---|---|")
    for subtest in subtests:
        got = [r for ph in range(phases) for r in runs(test, subtest, ph)]
        for kernel in ("6.16+", "before 6.16"):
            rs = [r for r in got if r[0] == kernel]
            if not rs:
                continue
            short = [r[1] for r in rs]
            use = [r[2] for r in rs]
            pre = [r[3] for r in rs if r[3] is not None]
            print("| %s | %s | %d | %.1f (%d) | %.1f-%.1f (%.1f) | %s |" % (
                subtest.rsplit("/", 1)[-1], kernel, len(rs), statistics.mean(short), max(short),
                min(use), max(use), statistics.median(use),
                "%.2f (%.2f-%.2f)" % (statistics.median(pre), min(pre), max(pre)) if pre else "-"))


if __name__ == "__main__":
    main()
