#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the delay loop did before each of the video's short seconds, from a
bwss run's own records: its per-second timeline (series.csv), its summary
(summary.json: the minimum, where the count starts, the cross traffic) and
bwssd's decision lines (decisions.txt, $BWSS_DECISIONS; run.json gives the
clock they share).

A second from measure_from on is short when the video got less than AT_MIN
of its minimum (the lab's video_at_min).  For each, the decisions of the
WINDOW_S before the loop's answer to it (the first rule "deficit" from the
second before to its end; else the second's end): how many raised σ, σ from the first to the last,
the range of U (what the flows moved), and the video's receiver RTT at the
deficit (its own queue under FQ: the AQM drops from it).  Its class, the
first that holds:

  udp-onset   the cross traffic started within EDGE_S before it;
  raised      σ rose by RAISED or more in those decisions while U's largest
              stayed below the last σ: σ above what the link gave, which
              under FQ comes out of the video's queue;
  other       neither.

Usage: short-decisions.py RUN_DIR... (a mode's directory: .../bwss)
"""
import csv
import json
import os
import sys

AT_MIN = 0.9      # the lab's video_at_min: at least 90 % of the minimum
WINDOW_S = 2.0    # the decisions looked at before a short second's end
EDGE_S = 1        # a cross traffic onset this close before counts
RAISED = 0.05     # σ's rise that counts as a ramp (α, a decision's step)


def decisions(path, t0):
    """The decision lines as [(t, fields, [flow fields])], t from the run's start."""
    out = []
    with open(path) as f:
        for line in f:
            words = line.split()
            if len(words) < 2:
                continue
            if words[1].startswith('phase='):
                fields = dict(w.split('=', 1) for w in words[1:] if '=' in w)
                out.append((float(words[0]) - t0, fields, []))
            elif words[1] == 'flow' and out:
                out[-1][2].append(dict(w.split('=', 1) for w in words[2:] if '=' in w))
    return out


def explain(run):
    """Yields one dict per short second of the run in directory @run."""
    summary = json.load(open(os.path.join(run, 'summary.json')))
    params = summary['parameters']
    vmin = float(params['video_min_kbps'])
    onset = params.get('cross_start') if params.get('cross_kbps') else None
    t0 = json.load(open(os.path.join(run, 'run.json')))['t0_monotonic']
    lines = decisions(os.path.join(run, 'decisions.txt'), t0)
    with open(os.path.join(run, 'series.csv')) as f:
        series = list(csv.DictReader(f))
    for row in series:
        sec = int(float(row['t']))
        video = float(row['video_kbps'])
        if sec < summary['measure_from_s'] or video >= AT_MIN * vmin:
            continue
        deficit = next((d for d in lines
                        if sec - 1 <= d[0] < sec + 1 and d[1].get('rule') == 'deficit'), None)
        end = deficit[0] if deficit else sec + 1
        before = [d for d in lines if end - WINDOW_S <= d[0] < end]
        sigma = [float(d[1]['sigma']) / 1e3 for d in before]
        u = [float(d[1]['u']) / 1e3 for d in before]
        raises = sum(1 for d in before if d[1].get('rule') == 'raise')
        rtt = None
        if deficit:
            mins = [fl for fl in deficit[2] if fl.get('min', '0') != '0']
            if mins:
                rtt = int(mins[0]['rtt']) / 1e3
        if onset is not None and 0 <= sec - onset <= EDGE_S:
            why = 'udp-onset'
        elif sigma and sigma[-1] >= (1 + RAISED) * sigma[0] and max(u) < sigma[-1]:
            why = 'raised'
        else:
            why = 'other'
        yield {'second': sec, 'video': video, 'why': why, 'raises': raises,
               'sigma': (sigma[0], sigma[-1]) if sigma else None,
               'u': (min(u), max(u)) if u else None,
               'deficit_at': deficit[0] if deficit else None, 'video_rtt_ms': rtt}


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    print('| run | second | video kbit/s | class | raises | σ kbit/s, first → last | U kbit/s | '
          'deficit at s | video RTT at it, ms |')
    print('|---|---|---|---|---|---|---|---|---|')
    for run in argv[1:]:
        missing = [f for f in ('summary.json', 'run.json', 'series.csv', 'decisions.txt')
                   if not os.path.exists(os.path.join(run, f))]
        if missing:
            sys.exit('%s: not a bwss run with decision lines (no %s)' % (run, ', '.join(missing)))
    for run in argv[1:]:
        name = os.path.relpath(run)
        for s in explain(run):
            sig = '%.0f → %.0f' % s['sigma'] if s['sigma'] else '-'
            u = '%.0f–%.0f' % s['u'] if s['u'] else '-'
            at = '%.2f' % s['deficit_at'] if s['deficit_at'] is not None else '-'
            rtt = '%.0f' % s['video_rtt_ms'] if s['video_rtt_ms'] is not None else '-'
            print(f"| {name} | {s['second']} | {s['video']:.0f} | {s['why']} | {s['raises']} | "
                  f"{sig} | {u} | {at} | {rtt} |")


if __name__ == '__main__':
    main(sys.argv)
