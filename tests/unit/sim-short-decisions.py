#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The lab's classes of the video's short seconds (tests/lab/short-decisions.py)
for a model cell's runs: runs the subtest with --verbose and
$BWSS_SIM_DECISIONS at each tick phase asked, splits the decision lines and
the "video short at" lines by run (a run's decisions start again from 0 s;
its short seconds come before its "ticks +K ms" summary line), writes each
run as the lab's reader wants it (summary.json, run.json, series.csv,
decisions.txt) and classes its short seconds with the lab's own rules.  A
tool to set the model beside the lab, not a test.

Usage: sim-short-decisions.py TEST SUBTEST VIDEO_MIN_KBPS CROSS_START_S PHASE...
  e.g. sim-short-decisions.py build/tests/unit/test-capacity \\
         /capacity/trace/matrix-fq-960k-packets 432 20 0 1 2
"""
import collections
import csv
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location(
    'short_decisions', os.path.join(HERE, '..', 'lab', 'short-decisions.py'))
short_decisions = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(short_decisions)

SHORT = re.compile(r'video short at (\d+) s: (\d+)')
RUN_END = re.compile(r'rcv_rtt (6\.16\+|before 6\.16), ticks \+(\d+) ms: (the )?video at')


def runs_of(test, subtest, phase, tmp):
    """[(label, decision lines, {second: video kbit/s})] of one phase's runs."""
    path = os.path.join(tmp, 'decisions-%s.txt' % phase)
    env = dict(os.environ, BWSS_SIM_DECISIONS=path, BWSS_SIM_TICK_PHASE_MS=str(phase))
    out = subprocess.run([test, '--verbose', '-p', subtest], env=env, capture_output=True,
                         text=True).stdout
    shorts, runs = {}, []
    for line in out.splitlines():
        m = SHORT.search(line)
        if m:
            shorts[int(m.group(1))] = float(m.group(2))
        m = RUN_END.search(line)
        if m:
            runs.append(('phase %s, %s, +%s ms' % (phase, m.group(1), m.group(2)), shorts))
            shorts = {}
    blocks, last = [], None
    with open(path) as f:
        for line in f:
            t = float(line.split()[0])
            if last is None or t < last:
                blocks.append([])
            blocks[-1].append(line)
            last = t
    if len(blocks) != len(runs):
        sys.exit('%s at phase %s: %d runs of decisions, %d run summaries'
                 % (subtest, phase, len(blocks), len(runs)))
    return [(label, block, shorts) for (label, shorts), block in zip(runs, blocks)]


def main(argv):
    if len(argv) < 6:
        sys.exit(__doc__.strip().splitlines()[-3])
    test, subtest, vmin, onset = argv[1], argv[2], float(argv[3]), int(argv[4])
    counts = collections.Counter()
    print('| run | second | video kbit/s | class | raises | σ kbit/s, first → last | U kbit/s | '
          'deficit at s | video RTT at it, ms |')
    print('|---|---|---|---|---|---|---|---|---|')
    with tempfile.TemporaryDirectory() as tmp:
        for phase in argv[5:]:
            for label, block, shorts in runs_of(test, subtest, phase, tmp):
                run = tempfile.mkdtemp(dir=tmp)
                with open(os.path.join(run, 'decisions.txt'), 'w') as f:
                    f.writelines(block)
                json.dump({'t0_monotonic': 0.0}, open(os.path.join(run, 'run.json'), 'w'))
                json.dump({'parameters': {'video_min_kbps': vmin, 'cross_start': onset,
                                          'cross_kbps': 1}, 'measure_from_s': 5},
                          open(os.path.join(run, 'summary.json'), 'w'))
                with open(os.path.join(run, 'series.csv'), 'w', newline='') as f:
                    w = csv.writer(f)
                    w.writerow(['t', 'video_kbps'])
                    for sec in sorted(shorts):
                        w.writerow([sec, shorts[sec]])
                for s in short_decisions.explain(run):
                    counts[(label.split(', ')[1], s['why'])] += 1
                    sig = '%.0f → %.0f' % s['sigma'] if s['sigma'] else '-'
                    u = '%.0f–%.0f' % s['u'] if s['u'] else '-'
                    at = '%.2f' % s['deficit_at'] if s['deficit_at'] is not None else '-'
                    rtt = '%.0f' % s['video_rtt_ms'] if s['video_rtt_ms'] is not None else '-'
                    print(f"| {label} | {s['second']} | {s['video']:.0f} | {s['why']} | "
                          f"{s['raises']} | {sig} | {u} | {at} | {rtt} |")
    for (kernel, why), n in sorted(counts.items()):
        print('%s: %s %d' % (kernel, why, n))


if __name__ == '__main__':
    main(sys.argv)
