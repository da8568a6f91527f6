#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The lab's command line and tables, without a network: bad input exits 2
with a message naming it before anything is set up (no namespace appears),
and `report` turns run summaries into tables whose medians leave out the runs
in which the lab did not carry its link.  (TAP output.)"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(HERE, "bwss-lab")
n = 0
good = True


def check(cond, msg):
    global n, good
    n += 1
    good &= bool(cond)
    print(("ok %d - " if cond else "not ok %d - ") % n + msg)


def namespaces():
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return sorted(l.split()[0] for l in r.stdout.splitlines() if l.startswith("bwsslab"))


def lab(*args):
    return subprocess.run([sys.executable, LAB] + list(args), capture_output=True, text=True)


before = namespaces()
BAD_TRACE = tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False)
BAD_TRACE.write("# a trace\n0 960\n10 480\n5 960\n")
BAD_TRACE.close()
WORD_TRACE = tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False)
WORD_TRACE.write("0 960\n10 fast\n")
WORD_TRACE.close()
BAD = [
    (["run", "streaming", "--set", "bottleneck=red"], "bottleneck"),
    (["run", "streaming", "--set", "link_trace=nosuch"], "not a built-in trace"),
    (["run", "streaming", "--set", "link_trace=" + BAD_TRACE.name], BAD_TRACE.name + ":4"),
    (["run", "streaming", "--set", "link_trace=" + WORD_TRACE.name], WORD_TRACE.name + ":2"),
    (["run", "streaming", "--set", "stage_realtime=200"], "stage_realtime"),
    (["run", "streaming", "--set", "queue_ms=0"], "queue_ms"),
    (["run", "nosuch"], "unknown scenario"),
    (["run", "streaming", "--mode", "fastest"], "unknown mode"),
    (["run", "streaming", "--set", "link_kbps=fast"], "link_kbps"),
    (["run", "streaming", "--set", "link_kbps=-3"], "link_kbps"),
    (["run", "streaming", "--set", "link_kbps=nan"], "link_kbps"),
    (["run", "streaming", "--set", "rtt_bulk=20,inf"], "rtt_bulk"),
    (["run", "streaming", "--set", "nosuch=1"], "unknown parameter"),
    (["run", "streaming", "--set", "weights"], "KEY=VALUE"),
    (["run", "streaming", "--set", "weights=1,x"], "weights"),
    (["run", "streaming", "--set", "video_client=vlc"], "video_client"),
    (["run", "adaptive", "--set", "player=vlc"], "player"),
    (["run", "streaming", "--set", "sender_cc=cu bic"], "sender_cc"),
    (["run", "streaming", "--set", "bwss_on_at=100"], "bwss_on_at"),
    (["run", "streaming", "--set", "measure_from=90"], "measure_from"),
    (["run", "streaming", "--duration", "0"], "--duration"),
    (["run", "streaming", "--duration", "nan"], "--duration"),
    (["run", "streaming", "--repeat", "0"], "--repeat"),
    (["run", "streaming", "--label", "///"], "--label"),
]
for args, word in BAD:
    r = lab(*args)
    msg = (r.stderr.strip().splitlines() or [""])[-1]
    check(r.returncode == 2 and word in msg, "%s -> exit %d: %s" % (" ".join(args), r.returncode, msg))
check(namespaces() == before, "bad input set nothing up (namespaces %s)" % namespaces())
r = lab("list")
check(r.returncode == 0 and all(s in r.stdout for s in ("streaming", "adaptive3", "adaptive-hd")),
      "list names the scenarios")


def summary(mode, valid, agg, prebuffer, reason=None):
    return {"scenario": "streaming", "label": "streaming", "mode": mode, "doc": "d", "duration_s": 90,
            "link_kbps": 960, "aggregate_kbps": agg,
            "flows": [{"name": "bulk1", "mean_kbps": agg / 2}, {"name": "video", "mean_kbps": agg / 2}],
            "queue_delay_ms": {"median": 10.0, "p95": 20.0}, "video_at_min": 0.99,
            "required_prebuffer_s": prebuffer, "late_fraction": {k: 0.0 for k in ("0.5", "1", "2", "4", "8")},
            "valid": valid, "invalid_reasons": [] if valid else [reason]}


with tempfile.TemporaryDirectory() as d:
    runs = [("tcp", True, 900, 10.0), ("tcp", True, 910, 12.0), ("tcp", False, 5, 99.0),
            ("ideal", False, 100, 50.0)]
    for k, (mode, valid, agg, pre) in enumerate(runs):
        os.makedirs(os.path.join(d, "run%d" % k, mode))
        with open(os.path.join(d, "run%d" % k, mode, "summary.json"), "w") as f:
            json.dump(summary(mode, valid, agg, pre, "delay stage p99 lateness 9000 us"), f)
    out = os.path.join(d, "results.md")
    r = lab("report", d, "--out", out, "--command", "bwss-lab run streaming --repeat 3")
    text = open(out).read() if r.returncode == 0 else ""
    rows = {l.split("|")[1].strip(): l for l in text.splitlines() if l.startswith("| tcp") or l.startswith("| ideal")}
    check(r.returncode == 0 and "bwss-lab run streaming --repeat 3" in text, "report writes the command")
    check("| 2/3 | 905 |" in rows.get("tcp", ""), "medians over the valid runs only: %s" % rows.get("tcp"))
    check("11.00" in rows.get("tcp", "") and "99.00" not in text,
          "the invalid run's prebuffer is left out")
    check("0/1" not in rows.get("ideal", "") and "invalid" in rows.get("ideal", "") and "100" not in rows.get("ideal", ""),
          "a mode without a valid run reports no figure: %s" % rows.get("ideal"))
    check("delay stage p99 lateness 9000 us" in text, "the reason is named")
    r = lab("report", os.path.join(d, "nosuch"), "--out", os.path.join(d, "x.md"))
    check(r.returncode != 0 and not os.path.exists(os.path.join(d, "x.md")),
          "report of a directory without runs fails and writes nothing (exit %d)" % r.returncode)
# the bulk flows' shares against their weights (capacity-drop: 1:2, cross
# traffic 40-80 s): exact before, 1:1 during, back to 1:2 three seconds
# after it stopped
sys.path.insert(0, HERE)
from bwsslab.analysis import share_summary  # noqa: E402
params = {"weights": [1.0, 2.0], "measure_from": 5, "cross_kbps": 320, "cross_start": 40, "cross_end": 80}
b1 = [100.0] * 40 + [150.0] * 40 + [150.0] * 3 + [100.0] * 37
b2 = [200.0] * 40 + [150.0] * 40 + [150.0] * 3 + [200.0] * 37
sh = share_summary(params, [b1, b2])
check(sh["error_before"] == 0.0 and abs(sh["error_during"] - 0.5) < 1e-9 and sh["shares_back_s"] == 3,
      "shares: errors per phase and the time back within 10 %%: %s" % sh)
check(share_summary(params, [b1, b1]) is not None and share_summary(params, [b1, b1])["shares_back_s"] is None,
      "shares that never come back are said so")
check(share_summary(dict(params, weights=[1.0, 1.0]), [b1, b2]) is None,
      "equal weights: no share figure")
# the link traces: built-in ones seeded and reproducible, within their
# bounds; a file's points; the capacity per second; the figures over it
from bwsslab import linkstats, linktrace  # noqa: E402
from bwsslab.scenario import SCENARIOS  # noqa: E402
# the description follows the --sets (issue 25): the base's text only without any
base = SCENARIOS["streaming"]
d = base.with_sets(["link_kbps=20000", "bottleneck=fq_codel", "duration=30", "cross_start=10",
                    "cross_end=20"]).doc
check(base.with_sets([]).doc == base.doc and "Fig. 7" not in d and "20 Mbit/s link, FQ-CoDel" in d
      and "320k UDP from 10 s to 20 s" in d and d.endswith("30 s")
      and "link_kbps=20000" in d, "the description follows the --sets: %s" % d)
# the lab's lock, in its own records (no namespace): a free lab is taken, a
# live owner's is not, a dead owner's is
from bwsslab import lock  # noqa: E402
with tempfile.TemporaryDirectory() as d:
    lock.LOCK_FILE, lock.OWNER_FILE = os.path.join(d, "lock"), os.path.join(d, "owner")
    sleeper = subprocess.Popen(["sleep", "30"])
    check(lock.try_take("test", "run", pid=sleeper.pid) is None and lock.current()["pid"] == sleeper.pid,
          "lock: a free lab is taken, the owner recorded")
    other = subprocess.Popen(["sleep", "30"])
    held = lock.try_take("test 2", "run", pid=other.pid)
    check(held is not None and held["pid"] == sleeper.pid, "lock: a live owner's lab is not taken")
    ok, rec = lock.may_tear_down()
    check(not ok and rec["pid"] == sleeper.pid and lock.current() is not None,
          "lock: down refuses a live owner's topology")
    sleeper.kill()
    sleeper.wait()
    check(lock.current() is None and lock.try_take("test 2", "run", pid=other.pid) is None
          and lock.current()["pid"] == other.pid, "lock: a dead owner's lab is free")
    lock.release(other.pid)
    check(lock.current() is None and not os.path.exists(lock.OWNER_FILE), "lock: released by its owner")
    other.kill()
    other.wait()
sc = SCENARIOS["streaming"].with_sets(["link_trace=wifi"])
w1, w2 = linktrace.points(sc), linktrace.points(sc)
w3 = linktrace.points(SCENARIOS["streaming"].with_sets(["link_trace=wifi", "trace_seed=2"]))
gaps = [b[0] - a[0] for a, b in zip(w1, w1[1:])]
check(w1 == w2 and w1 != w3, "wifi: the same seed gives the same trace, another seed another")
check(all(480 <= k <= 1440 for _, k in w1) and min(gaps) >= 0.099 and max(gaps) <= 0.501
      and w1[-1][0] >= sc.duration, "wifi: rates within ±50 %% of 960, a change every 0.1-0.5 s (%d points)" % len(w1))
lte = linktrace.points(SCENARIOS["streaming"].with_sets(["link_trace=lte"]))
fade = linktrace.per_second(lte, 90, 960)
check(min(k for _, k in lte) == 0.2 * 960 and sum(1 for c in fade if c <= 0.2 * 960 + 1e-6) >= 3,
      "lte: whole seconds at 20 %% (%d of 90)" % sum(1 for c in fade if c <= 192.001))
st = linktrace.per_second(linktrace.points(SCENARIOS["streaming"].with_sets(["link_trace=step"])), 90, 960)
check(st[29] == 960 and st[30] == 384 and st[59] == 384 and st[60] == 960, "step: full, 40 %, full")
check(linktrace.per_second([(0, 1000), (0.25, 2000)], 2, 1) == [1750.0, 2000.0],
      "capacity per second integrates the steps")
check(linktrace.per_second(None, 3, 960) == [960.0] * 3, "no trace: the link rate")
fig = linkstats.use_of_capacity(SCENARIOS["streaming"].with_sets(["duration=10", "measure_from=0"]),
                                [1000.0] * 5 + [500.0] * 5,
                                {"video": [496.0] * 5 + [400.0] * 5, "bulk1": [200.0] * 10,
                                 "bulk2": [200.0] * 10}, [0.0] * 10, 0, 1.0, 1.0, 0.9)
check(fig["capable_seconds"] == 5 and fig["video_at_min_capable"] == 1.0
      and abs(fig["bulk_use_of_left"] - 4000 / (5 * 504 + 5 * 100)) < 1e-3,
      "capable seconds, video at min over them, bulk use of what is left: %s" % fig)
os.unlink(BAD_TRACE.name)
os.unlink(WORD_TRACE.name)
print("1..%d" % n)
sys.exit(0 if good else 1)
