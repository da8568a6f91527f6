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


def namespaces():
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return sorted(l.split()[0] for l in r.stdout.splitlines() if l.startswith("bwsslab"))


def lab(*args):
    return subprocess.run([sys.executable, LAB] + list(args), capture_output=True, text=True)


sys.path.insert(0, HERE)
from bwsslab import lock  # noqa: E402
from bwsslab.tap import Tap  # noqa: E402

tap = Tap()
check = tap.check

# the namespaces are compared before and after under the lab's lock, so that
# no lab run of another process makes or removes them in between
held = None
if os.geteuid() == 0:
    rec = lock.try_take("tests/lab/test-cli.py", "lock")
    held = "the lab is in use by %s" % lock.describe(rec) if rec else None
else:
    held = "not root: the lab's lock cannot be taken"
before = namespaces()
BAD_TRACE = tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False)
BAD_TRACE.write("# a trace\n0 960\n10 480\n5 960\n")
BAD_TRACE.close()
WORD_TRACE = tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False)
WORD_TRACE.write("0 960\n10 fast\n")
WORD_TRACE.close()
BAD = [
    (["run", "player-progressive", "--set", "adaptive=1"], "adaptive and progressive"),
    (["run", "player-progressive", "--set", "ping_ms=5"], "ping_ms"),
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
if held is None:
    check(namespaces() == before, "bad input set nothing up, the lab's lock held (namespaces %s)" % namespaces())
    lock.release()
else:
    tap.skip("bad input set nothing up", held)
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
# the player-progressive scenario's viewer: the player's figures and the
# ping's queue from when it first played (the smallest RTT is the path)
from bwsslab.analysis import ping_summary, player_summary  # noqa: E402
with tempfile.TemporaryDirectory() as d:
    psc = SCENARIOS["player-progressive"].with_sets(["duration=10"])
    t0 = 1000.0
    with open(os.path.join(d, "ping.txt"), "w") as f:
        f.write("PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n")
        for k, rtt in enumerate([30.5, 90.0, 31.0, 40.5, 50.5, 60.5]):
            f.write("[%.3f] 64 bytes from 10.0.0.2: icmp_seq=%d ttl=64 time=%.1f ms\n"
                    % (t0 + 1 + k, k + 1, rtt))
        f.write("[%.3f] no answer yet for icmp_seq=7\n" % (t0 + 8))
    with open(os.path.join(d, "player.json"), "w") as f:
        json.dump({"startup_s": 2.5, "stalls": 0, "stall_s": 0.0, "played_s": 7.0, "lag_s": 0.0}, f)
    pg = ping_summary(psc, d, t0, 2.5)
    check(pg["base_ms"] == 30.5 and pg["samples"] == 4 and pg["median_ms"] == 15.0 and pg["p95_ms"] == 30.0, "ping: the queue while it plays, from the smallest RTT: %s" % pg)
    check(os.path.exists(os.path.join(d, "ping.csv")), "ping: the series is written")
    check(player_summary(d) == {"startup_s": 2.5, "stalls": 0, "stall_s": 0.0, "played_s": 7.0, "lag_s": 0.0},
          "player: startup and rebuffering from player.json")
    check("player_error" in player_summary(os.path.join(d, "nosuch")), "player: a missing player.json is said")
# an invalid run is a retried run (cli.run_once, try_mode, verdict), with
# the runs' summaries given: a mode whose summary is invalid is run again,
# at most three times; three invalid tries exit INVALID_EXIT with a message
# naming each try's host noise; a valid run's product fault exits FAULT_EXIT
import contextlib  # noqa: E402
import io  # noqa: E402
from bwsslab import analysis, cli  # noqa: E402
NOISY = {"steal_pct": 8.0, "loadavg_1min": 4.5, "delay_late_p99_us": 2510, "delay_drops": 0,
         "bottleneck_late_p99_us": None, "tun_drops": 1}
QUIET = {"steal_pct": 0.1, "loadavg_1min": 1.0, "delay_late_p99_us": 400, "delay_drops": 0,
         "bottleneck_late_p99_us": None, "tun_drops": 0}


def retried(valid_tries, faults=None):
    """run_once of modes tcp and bwss; tcp valid only on the tries in
    valid_tries, bwss valid at once.  Returns (tries of each mode, results,
    stdout, out_root's listing)."""
    calls = {}

    def measure(sc, mode, build_dir, out_dir):
        calls[mode] = calls.get(mode, 0) + 1
        ok = mode != "tcp" or calls[mode] in valid_tries
        s = summary(mode, ok, 900, 1.0, "delay stage p99 lateness 2510 us")
        s["noise"] = dict(QUIET if ok else NOISY)
        if ok and faults:
            s["faults"] = list(faults)
        with open(os.path.join(out_dir, "summary.json"), "w") as f:
            json.dump(s, f)
        return s
    def settle(say):
        calls["settle"] = calls.get("settle", 0) + 1
        say("  settled")
    with tempfile.TemporaryDirectory() as d, contextlib.redirect_stdout(io.StringIO()) as text:
        results, _ = cli.run_once(SCENARIOS["streaming"], "streaming", ["tcp", "bwss"], "/nonexistent", d,
                                  measure=measure, settle=settle)
        listing = sorted(os.listdir(d))
        kept = sorted(os.listdir(os.path.join(d, "tcp-invalid-try1"))) if "tcp-invalid-try1" in listing else []
    return calls, results, text.getvalue(), listing, kept


calls, res, text, listing, kept = retried({2})
check(calls == {"tcp": 2, "bwss": 1, "settle": 1} and len(res[0]["tries"]) == 2 and res[0]["valid"]
      and [t["valid"] for t in res[0]["tries"]] == [False, True],
      "an invalid run is retried until a try is valid: calls %s" % calls)
check("mode tcp try 1 of 3 INVALID (host noise" in text and "steal 8.0 %" in text and "2510 us" in text
      and "TUN drops 1" in text and "valid on try 2 of 3" in text,
      "stdout names the try and its noise: %s" % " / ".join(l for l in text.splitlines() if "try" in l))
check("tcp-invalid-try1" in listing and kept == ["summary-invalid.json"],
      "the invalid try is kept aside, not as a summary a report reads: %s %s" % (listing, kept))
code, msg = cli.verdict(res)
check(code == 0 and msg == "", "a valid run after a retry: exit 0")
calls, res, text, listing, kept = retried(set())
code, msg = cli.verdict(res)
check(calls["tcp"] == 3 and calls["settle"] == 2 and len(res[0]["tries"]) == 3 and not res[0]["valid"],
      "three invalid tries, each retry after the host settled, then no more: calls %s" % calls)
check(code == cli.INVALID_EXIT and code != 0 and "stayed invalid in 3 tries" in msg and "host noise" in msg
      and "not a product fault" in msg and msg.count("steal 8.0 %") == 3 and "TUN drops 1" in msg,
      "three invalid tries: exit %d, the message names the noise: %s" % (code, msg))
calls, res, text, listing, kept = retried({1}, faults=["bulk1 went 31.0 s without progress"])
code, msg = cli.verdict(res)
check(calls == {"tcp": 1, "bwss": 1} and code == cli.FAULT_EXIT and "mode bwss: a product fault" in msg
      and "mode tcp: a fault without bwss" in msg and "bulk1 went 31.0 s" in msg, "a valid run's fault is the product's: exit %d, %s" % (code, msg.replace("\n", " / ")))
# the wait for a quiet host: a window with steal under the bound ends it;
# a host busy all along is tried anyway after the bound
from bwsslab import host  # noqa: E402


def fake_ticks(steals):
    """ticks() reading @steals % of each 1000-tick window stolen."""
    state = {"n": 0, "steal": 0, "total": 0}
    seq = [p for p in steals for _ in (0, 1)]

    def ticks():
        i = state["n"]
        state["n"] += 1
        if i % 2:
            state["steal"] += int(seq[i] * 10)
            state["total"] += 1000
        return state["steal"], state["total"]
    return ticks


said = []
q = host.wait_quiet(said.append, window_s=5, ticks=fake_ticks([8.0, 6.0, 0.5]), sleep=lambda s: None)
check(q == (True, 15.0, 0.5) and "quiet" in said[-1], "wait_quiet: quiet at the third window: %s %s" % (q, said))
said = []
q = host.wait_quiet(said.append, window_s=5, max_s=10, ticks=fake_ticks([8.0] * 5), sleep=lambda s: None)
check(q == (False, 10.0, 8.0) and "trying anyway" in said[-1], "wait_quiet: bounded on a busy host: %s %s" % (q, said))
r = lab("run", "streaming", "--tries", "0")
check(r.returncode == 2 and "--tries" in r.stderr, "--tries 0 is refused: %s" % r.stderr.strip())
r = lab("matrix", "--modes", "tcp,fast", "--cells", "droptail150-cubic-fixed-960k", "--out", "/nonexistent/x")
check(r.returncode == 2 and "--modes: fast" in r.stderr, "matrix --modes with an unknown mode is refused: %s"
      % r.stderr.strip())
# the progress check: the longest time without progress per flow (the
# second machine's over host2_on), a client's failure, both faults
h2 = SCENARIOS["streaming"].with_sets(["hosts=2", "host2_on=20-60", "duration=90"])
moved = {"video": [k * 0.05 for k in range(1800)],
         "bulk1": [t for t in (k * 0.05 for k in range(1800)) if not 40 <= t < 71],
         "bulk2": [t for t in (k * 0.05 for k in range(1800)) if t >= 29.5],
         "host2-bulk1": [t for t in (k * 0.05 for k in range(1800)) if 20 <= t < 60],
         "host2-bulk2": []}
clients = {"video": {"exit": None, "running_at_end": True}, "bulk1": {"exit": None, "running_at_end": True},
           "bulk2": {"exit": 18, "at_s": 63.0}, "host2-bulk1": {"exit": None, "stopped_at_s": 60.0},
           "host2-bulk2": {"exit": None, "stopped_at_s": 60.0}}
pr, faults = analysis.progress(h2, moved, clients)
st = pr["longest_stall_s"]
check(st["video"] <= 0.06 and abs(st["bulk1"] - 31.0) < 0.06 and abs(st["bulk2"] - 29.5) < 0.06
      and st["host2-bulk1"] <= 0.06 and st["host2-bulk2"] == 40.0,
      "progress: the longest time without progress per flow, the second machine's over host2_on: %s" % st)
check(sorted(faults) == ["bulk1 went 31.0 s without progress", "client bulk2 exited with status 18 at 63.0 s",
                         "host2-bulk2 went 40.0 s without progress"],
      "progress: >= 30 s without progress and a failed client are faults (29.5 s is not): %s" % faults)
check(analysis.progress(SCENARIOS["streaming"], {"video": [0.01 * k for k in range(9000)]},
                        {"video": {"exit": 0, "at_s": 12.0}})[1] == [],
      "progress: a client done (exit 0) is not a stall after it ended")
# the second machine's schedule and its UDP (hosts=2)
BAD_H2 = [(["hosts=2", "host2_on=60-20"], "host2_on"), (["hosts=2", "host2_on=20"], "host2_on"),
          (["hosts=2", "host2_on=20-100"], "host2_on"), (["host2_on=20-60"], "hosts=2"),
          (["hosts=2", "host2=quic"], "host2")]
for sets, word in BAD_H2:
    r = lab("run", "streaming", *sum((["--set", x] for x in sets), []))
    msg = (r.stderr.strip().splitlines() or [""])[-1]
    check(r.returncode == 2 and word in msg, "%s -> exit %d: %s" % (" ".join(sets), r.returncode, msg))
from bwsslab import hosts  # noqa: E402
u = SCENARIOS["streaming"].with_sets(["hosts=2", "host2=udp"])
u3 = SCENARIOS["streaming"].with_sets(["hosts=2", "host2=udp", "host2_udp_kbps=3000", "host2_on=20-60"])
check(hosts.host2_flows(u) == [] and hosts.host2_udp_flow(u)[:2] == ("host2-udp", "10.77.2.41")
      and u.host2_udp() == 2000 and u3.host2_udp() == 3000 and u3.host2_window() == (20.0, 60.0)
      and "2 Mbit/s UDP" in u.with_sets(["duration=90"]).doc and "from 20 s to 60 s" in u3.describe(),
      "host2=udp: no downloads, 2000 kbit/s of UDP by default, host2_on's window: %s" % u3.describe())
# the QUIC download's record (quic-samples.txt: its client's byte counts on
# the recorder's clock) as a flow: kbit/s per second, the instants it moved
with tempfile.TemporaryDirectory() as d:
    qsc = SCENARIOS["streaming"].with_sets(["quic=1", "duration=4", "measure_from=0"])
    with open(os.path.join(d, "quic-samples.txt"), "w") as f:
        for k in range(80):                               # 100.05 .. 104.0 s, 50 ms apart
            t = 100.05 + 0.05 * k
            f.write("%.6f %d\n" % (t, 0 if t < 101 else (12500 if t < 102.5 else 25000)))
    qrate, qmoved = analysis.load_quic(qsc, d, 100.0)
    check([round(x) for x in qrate] == [0, 100, 100, 0] and len(qmoved) == 2
          and analysis.longest_stall(qmoved, 0, 4) > 1.4,
          "quic: its record as kbit/s per second and progress instants: %s %s" % (qrate, qmoved))
# a download stopped within the run (host2_on): its closing socket is
# reported without its inode and must not be counted again
with tempfile.TemporaryDirectory() as d:
    ssc = SCENARIOS["streaming"].with_sets(["duration=4", "measure_from=0", "video=0", "bulk=1"])
    with open(os.path.join(d, "samples.txt"), "w") as f:
        f.write("100.5 10.77.2.11:80 12500 4242 30000\n101.5 10.77.2.11:80 25000 4242 30000\n"
                "102.5 10.77.2.11:80 25100 0 30000\n")
    srate = analysis.load_samples(ssc, d, 100.0)[0]["bulk1"]
    check([round(x) for x in srate] == [100, 100, 0, 0], "a closing socket (inode 0) is not counted again: %s" % srate)
r = lab("run", "streaming", "--set", "quic=2")
check(r.returncode == 2 and "quic" in r.stderr, "quic=2 is refused: %s" % r.stderr.strip())
r = lab("run", "streaming", "--set", "bulk_initrwnd=-1")
check(r.returncode == 2 and "bulk_initrwnd" in r.stderr, "bulk_initrwnd=-1 is refused: %s" % r.stderr.strip())
b2 = SCENARIOS["streaming"].with_sets(["bulk_initrwnd=2"])
check(b2.bulk_initrwnd == 2 and "SYN offering 2 segments" in b2.doc, "bulk_initrwnd=2: %s" % b2.doc)
# a run never writes over an earlier run's files: they move aside first
from bwsslab import paths  # noqa: E402
with tempfile.TemporaryDirectory() as d:
    base = os.path.join(d, "streaming")
    check(paths.keep_earlier(base) is None, "nothing earlier: nothing moved")
    os.makedirs(os.path.join(base, "run1", "bwss"))
    with open(os.path.join(base, "run1", "bwss", "summary.json"), "w") as f:
        f.write("{}")
    os.utime(base, (1764300000, 1764300000))
    first = paths.keep_earlier(base)
    os.makedirs(os.path.join(base, "bwss"))
    os.utime(base, (1764300000, 1764300000))
    second = paths.keep_earlier(base)
    check(first and os.path.isfile(os.path.join(first, "run1", "bwss", "summary.json"))
          and os.path.basename(first).startswith("streaming.2025") and second == first + "-2"
          and os.path.isdir(os.path.join(second, "bwss")) and not os.path.exists(base),
          "an earlier run's files move to <label>.<time>, a second of the same second to -2: %s, %s"
          % (first and os.path.basename(first), second and os.path.basename(second)))
os.unlink(BAD_TRACE.name)
os.unlink(WORD_TRACE.name)
tap.done()
