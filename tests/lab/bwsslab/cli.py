# SPDX-License-Identifier: LGPL-2.1-or-later
"""The bwss-lab command.

  bwss-lab list
  bwss-lab up [--no-wait] [--set KEY=VALUE]... [--stats FILE]   bring the topology up, print its addresses
  bwss-lab down [--force]                remove everything the lab made
  bwss-lab run SCENARIO [--no-wait] [--mode MODE]... [--repeat N] [--duration S] [--set KEY=VALUE]...
               [--label TEXT] [--out DIR] [--build-dir DIR]
  bwss-lab report DIR... [--out FILE] [--command TEXT]...
  bwss-lab reanalyse DIR... [--build-dir DIR]   analyse finished runs again (nothing run)
  bwss-lab matrix [--list] [--no-wait] [--quick | --cells PATTERN] [--adopt] [--again] [--out DIR]
                  [--baselines-from DIR]... [--report FILE] [--report-only] [--build-dir DIR]
  bwss-lab lock [--no-wait [--skip]] -- COMMAND...   run COMMAND holding the lab
  bwss-lab owner                         who holds the lab (exit 0: free, 1: held)

run, up, down, matrix and lock take the machine-wide lock of lock.py first: one
topology at a time.  A second caller waits for the owner (naming it), or
exits 2 at once with --no-wait.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys

from . import (analysis, baseline, clients, decisions, host, linkstats, linktrace, lock, matrix, paths, plots, report,
               timeline, topology)
from .proc import STATE_DIR, LabError, program
from .scenario import BWSS_MODES, MODES, SCENARIOS, ScenarioError


def slug(text):
    return re.sub(r"[^A-Za-z0-9_.=,-]+", "_", text).strip("_")


def check_tools(sc, modes, build_dir):
    if "bwss-adopt" in modes and not os.access(program(build_dir, "bwssd"), os.X_OK):
        raise LabError("mode bwss-adopt needs bwssd: build it first (meson compile -C %s)" % build_dir)
    if any(m in BWSS_MODES for m in modes) and not os.access(
            program(build_dir, "bwss-run"), os.X_OK):
        raise LabError("the bwss modes need bwss-run: build it first (meson compile -C %s)" % build_dir)
    if (sc.adaptive or sc.progressive) and not os.access(program(build_dir, "bwss-lab-player"), os.X_OK):
        raise LabError("scenario %s needs bwss-lab-player (built with -Dgst-plugin=enabled)" % sc.name)
    if sc.ping_ms and shutil.which("ping") is None:
        raise LabError("ping is not installed (package iputils-ping)")
    if sc.quic:
        why = clients.check_quic()
        if why:
            raise LabError(why)
    for tool in ["nginx", "iperf3", "curl"] + (["trickle"] if "trickle" in modes else []):
        if shutil.which(tool) is None:
            raise LabError("%s is not installed (tests/bootstrap installs it)" % tool)


# A run the lab could not carry (its summary invalid: a stage late at p99, a
# packet the kernel dropped into the stage, a baseline that did not fill the
# link) says nothing of the product: it is host noise, and the mode is run
# again, at most TRIES times in all.  A mode still invalid then makes
# `run` and `matrix` exit INVALID_EXIT, naming each try's noise.
TRIES = 3
INVALID_EXIT = matrix.INVALID_EXIT   # exit status: a mode stayed invalid in every try (host noise)
FAULT_EXIT = matrix.FAULT_EXIT       # exit status: a valid run failed its progress check (a product fault)


def measure_mode(sc, mode, build_dir, out_dir):
    """One try of one mode: the run, its analysis, the host's noise, the
    plot; returns the summary (written to out_dir/summary.json)."""
    span = host.Span()
    _, took = timeline.run_mode(sc, mode, build_dir, out_dir)
    s, series = analysis.analyse(sc, mode, out_dir, build_dir)
    s["host"] = span.summary()
    s["noise"] = linkstats.noise(out_dir, s["host"])
    s["took_s"] = round(took, 1)
    plots.plot_run(sc, s, series, out_dir)
    return s


def keep_invalid_try(out_dir, k):
    """Moves an invalid try's files aside, to out_dir-invalid-tryK, its
    summary renamed summary-invalid.json (reports and the matrix read only
    summary.json: the try is kept for reading, never counted)."""
    dst = "%s-invalid-try%d" % (out_dir, k)
    shutil.rmtree(dst, ignore_errors=True)
    os.rename(out_dir, dst)
    if os.path.exists(os.path.join(dst, "summary.json")):
        os.rename(os.path.join(dst, "summary.json"), os.path.join(dst, "summary-invalid.json"))


def try_mode(mode, tries, one_try, keep, say, settle=lambda say: None):
    """Runs one mode until a try is valid, at most @tries times: one_try(k)
    returns try k's summary, keep(k) moves an invalid try aside before the
    next, settle(say) waits for the host to be quiet before it (host.wait_quiet),
    say(text) reports.  Returns the last summary with "tries" (each try's
    validity, reasons and noise)."""
    history = []
    for k in range(1, tries + 1):
        s = one_try(k)
        history.append({"try": k, "valid": bool(s.get("valid")),
                        "invalid_reasons": list(s.get("invalid_reasons") or []),
                        "noise": s.get("noise") or {}})
        if s.get("valid"):
            if k > 1:
                say("  mode %s valid on try %d of %d" % (mode, k, tries))
            break
        say("  mode %s try %d of %d INVALID (host noise, not a result: %s; %s)%s"
            % (mode, k, tries, "; ".join(s.get("invalid_reasons") or []),
               linkstats.describe_noise(s.get("noise") or {}), " — trying again" if k < tries else ""))
        if k < tries:
            keep(k)
            settle(say)
    s["tries"] = history
    return s


def verdict(results):
    """The exit status of a run (or a cell) from its modes' final summaries,
    and a message: INVALID_EXIT when a mode stayed invalid in every try
    (naming each try's noise: host noise, not a product fault), FAULT_EXIT
    when a valid run's progress check failed (a product fault), else 0."""
    lines, code = [], 0
    for s in results:
        if not s.get("valid"):
            code = INVALID_EXIT
            tries = s.get("tries") or [{"try": 1, "invalid_reasons": s.get("invalid_reasons") or [],
                                        "noise": s.get("noise") or {}}]
            lines.append("mode %s stayed invalid in %d tr%s — host noise, not a product fault: %s" % (
                s.get("mode"), len(tries), "y" if len(tries) == 1 else "ies", " | ".join(
                    "try %d: %s (%s)" % (t["try"], "; ".join(t["invalid_reasons"]),
                                         linkstats.describe_noise(t.get("noise") or {})) for t in tries)))
    for s in results:
        if s.get("valid") and s.get("faults"):
            code = code or FAULT_EXIT
            lines.append("mode %s: %s in a valid run: %s" % (
                s.get("mode"), "a product fault" if s.get("mode") in BWSS_MODES
                else "a fault without bwss (the baseline's own)", "; ".join(s["faults"])))
    return code, "\n".join(lines)


def run_once(sc, label, modes, build_dir, out_root, tries=TRIES, measure=measure_mode, settle=host.wait_quiet):
    """Runs each mode (retrying an invalid one, try_mode) into
    out_root/<mode>; writes comparison.md; returns (summaries, table).
    measure(sc, mode, build_dir, out_dir) -> summary is one try; settle(say)
    runs before a retry (host.wait_quiet)."""
    results = []
    rev = matrix.commit(build_dir)                   # the programs' tree, recorded in every summary
    bkey = baseline.key(build_dir, paths.SRC_ROOT, sc)   # what made the recording (baseline.py), before it
    for m in modes:
        out_dir = os.path.join(out_root, m)

        def one_try(k):
            os.makedirs(out_dir, exist_ok=True)
            print("- mode %s (%d s)%s" % (m, sc.duration, "" if k == 1 else ", try %d of %d" % (k, tries)),
                  flush=True)
            s = measure(sc, m, build_dir, out_dir)
            s["label"], s["doc"] = label, sc.doc
            return s
        s = try_mode(m, tries, one_try, lambda k: keep_invalid_try(out_dir, k),
                     lambda text: print(text, flush=True), settle)
        s["label"], s["doc"], s["commit"], s["analysed"], s["baseline"] = label, sc.doc, rev, rev, bkey
        with open(os.path.join(out_dir, "summary.json"), "w") as f:
            json.dump(s, f, indent=2)
        results.append(s)
        extra = ""
        if "required_prebuffer_s" in s:
            extra += ", required prebuffer %.2f s" % s["required_prebuffer_s"]
            if s.get("required_prebuffer_at_s") is not None:
                extra += " (set at %.1f s)" % s["required_prebuffer_at_s"]
        if s["queue_delay_ms"].get("median") is not None:
            extra += ", queue %.1f ms" % s["queue_delay_ms"]["median"]
        if "adaptive" in s:
            extra += ", delivered %.0f kbit/s, %s stalls" % (s["adaptive"]["mean_delivered_kbps"],
                                                           s["adaptive"].get("stalls", "?"))
        if not s["valid"]:
            extra += " — INVALID: " + "; ".join(s["invalid_reasons"])
        if s.get("faults"):
            extra += " — FAULT: " + "; ".join(s["faults"])
        print("  aggregate %.0f kbit/s%s (%.0f s, try %d)" % (s["aggregate_kbps"], extra, s.get("took_s", 0),
                                                           len(s["tries"])), flush=True)
        if s.get("detector"):
            print("  " + decisions.line(s["detector"]), flush=True)
    table = report.table(results)
    with open(os.path.join(out_root, "comparison.md"), "w") as f:
        f.write(table + "\n")
    plots.plot_late(label, results, out_root)
    return results, table


def prepare_run(args):
    """Checks run's arguments; returns (scenario, modes, label) or raises
    LabError with code 2.  Runs before anything needs root."""
    if args.scenario not in SCENARIOS:
        raise LabError("unknown scenario '%s' (bwss-lab list)" % args.scenario, 2)
    modes = args.mode or list(MODES)
    for m in modes:
        if m not in MODES:
            raise LabError("unknown mode '%s' (one of %s)" % (m, ", ".join(MODES)), 2)
    sets = list(args.set or [])
    if args.duration is not None:
        if not args.duration > 0:
            raise LabError("--duration must be > 0", 2)
        sets.append("duration=%g" % args.duration)
    if args.repeat < 1 or args.repeat > 100:
        raise LabError("--repeat must be 1..100", 2)
    if args.tries < 1 or args.tries > 10:
        raise LabError("--tries must be 1..10", 2)
    try:
        sc = SCENARIOS[args.scenario].with_sets(sets)
    except ScenarioError as e:
        raise LabError(str(e), 2)
    label = args.label or " ".join([args.scenario] + [s for s in (args.set or [])])
    if not slug(label):
        raise LabError("--label must contain a letter or digit", 2)
    return sc, modes, label


def cmd_run(args, sc, modes, label):
    build_dir = os.path.abspath(args.build_dir)
    check_tools(sc, modes, build_dir)
    base = os.path.join(os.path.abspath(args.out), slug(label))

    def on_signal(sig, frame):
        topology.down(quiet=True)
        lock.release()
        print("bwss-lab: interrupted; lab removed", file=sys.stderr)
        sys.exit(130)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    print("%s: %s" % (label, sc.doc))
    kept = paths.keep_earlier(base)
    if kept:
        print("the earlier runs of this label: %s" % kept)
    runs = []
    code, why = 0, []
    for k in range(args.repeat):
        out_root = base if args.repeat == 1 else os.path.join(base, "run%d" % (k + 1))
        if args.repeat > 1:
            print("run %d of %d" % (k + 1, args.repeat), flush=True)
        results, table = run_once(sc, label, modes, build_dir, out_root, tries=args.tries)
        runs.append(results)
        c, text = verdict(results)
        if c:
            code = code if code == INVALID_EXIT else c
            why.append(("run %d: " % (k + 1) if args.repeat > 1 else "") + text)
        print()
        print(table)
        print()
    if args.repeat > 1:
        meds = [report.median_summary([r[i] for r in runs]) for i in range(len(modes))]
        table = report.table(meds)
        with open(os.path.join(base, "comparison.md"), "w") as f:
            f.write(table + "\n")
        print("medians of %d runs:\n\n%s\n" % (args.repeat, table))
    print("results, CSV series and plots: %s" % base)
    if code:
        print("bwss-lab: %s" % "\n".join(why), file=sys.stderr, flush=True)
    return code


def take(args, kind, pid=None):
    """Takes the lab's lock for this command (LabError 2 with --no-wait
    while another owner holds it)."""
    try:
        lock.take(" ".join(["bwss-lab"] + sys.argv[1:]), kind, wait=not args.no_wait, pid=pid)
    except lock.Busy as e:
        raise LabError("the lab is in use by %s" % lock.describe(e.args[0]), lock.BUSY)


def cmd_lock(args):
    """Runs a command holding the lab (the shell's entry to the lock): the
    namespace tests run themselves under it with --no-wait --skip."""
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        raise LabError("lock: no command (bwss-lab lock [--no-wait] -- COMMAND...)", 2)
    if args.skip and not args.no_wait:
        raise LabError("lock: --skip needs --no-wait", 2)
    try:
        lock.take("bwss-lab lock -- " + " ".join(cmd), "lock", wait=not args.no_wait)
    except lock.Busy as e:
        if args.skip:
            print("1..0 # SKIP the lab is in use by %s" % lock.describe(e.args[0]), flush=True)
            return lock.SKIPPED
        raise LabError("the lab is in use by %s" % lock.describe(e.args[0]), lock.BUSY)
    try:
        child = subprocess.Popen(cmd, env=dict(os.environ, BWSS_LAB_OWNER=str(os.getpid())))
    except OSError as e:
        lock.release()
        raise LabError("lock: cannot run %s: %s" % (cmd[0], e.strerror), 127)

    def forward(sig, frame):
        child.send_signal(sig)
    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    try:
        rc = child.wait()
    finally:
        lock.release()
    return rc if rc >= 0 else 128 - rc


# what analyse() does not make: the run's own record
KEPT = ("label", "doc", "host", "tries", "took_s", "matrix", "commit", "baseline", "reused")


def reanalyse_run(d, build_dir, sc=None):
    """Analyses the finished run in d again from its raw files with this
    tree's analysis and build_dir's bwss-late (its scenario sc, or the one
    its summary recorded), the host's noise again from its files; the
    fields the run itself recorded (KEPT) are kept.  Writes and returns the
    summary, "analysed" the commit of build_dir's tree."""
    import dataclasses
    from .scenario import Scenario
    with open(os.path.join(d, "summary.json")) as f:
        old = json.load(f)
    if sc is None:
        names = {f.name for f in dataclasses.fields(Scenario)}
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in old["parameters"].items()
                  if k in names and k not in ("name", "doc")}
        sc = Scenario(name=old["scenario"], doc=old.get("doc", ""), **params)
    s, series = analysis.analyse(sc, old["mode"], d, build_dir)
    s.update({k: old[k] for k in KEPT if k in old})
    s["noise"] = linkstats.noise(d, s.get("host"))
    s["analysed"] = matrix.commit(build_dir)
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(s, f, indent=2)
    plots.plot_run(sc, s, series, d)
    return s


def cmd_reanalyse(args):
    """Analyses finished runs again from their raw files (a corrected
    analysis, nothing run): every summary.json under the directories, its
    scenario from its own parameters (reanalyse_run)."""
    done = 0
    for root in args.dirs:
        for d, _, files in sorted(os.walk(root)):
            if "summary.json" not in files or not os.path.exists(os.path.join(d, "run.json")):
                continue
            s = reanalyse_run(d, os.path.abspath(args.build_dir))
            print("%s: aggregate %.0f kbit/s, %s" % (d, s["aggregate_kbps"], "valid" if s["valid"] else
                                                      "INVALID: " + "; ".join(s["invalid_reasons"])))
            done += 1
    if not done:
        raise LabError("no run (summary.json with run.json) under %s" % ", ".join(args.dirs))
    return 0


def cmd_owner():
    rec = lock.current()
    if rec is None:
        print("the lab is free")
        return 0
    print("the lab is in use by %s" % lock.describe(rec))
    return 1


def cmd_report(args):
    if not report.collect(args.dirs):
        raise LabError("no run (summary.json) under %s" % ", ".join(args.dirs))
    path = report.write_results(args.dirs, args.out, args.command or [])
    print("wrote %s" % path)
    return 0


def cmd_matrix(args, argv):
    """bwss-lab matrix (matrix.py): --list and --report-only need no root."""
    chosen = matrix.select(args.cells, args.quick)       # a bad --cells exits 2 first
    if args.list:
        for c in chosen:
            print("%-30s %-5s %s" % (c.name, c.where(), " ".join(c.sets)))
        return 0
    report_path = os.path.abspath(args.report or (
        os.path.join(args.out, "matrix.md") if args.quick or args.cells
        else paths.report_path(paths.REPORT_MATRIX)))
    command = "tests/lab/bwss-lab " + " ".join(shlex.quote(a) for a in argv)
    modes = matrix.MODES + ((matrix.ADOPT_MODE,) if args.adopt else ())
    if args.report_only:
        print("wrote %s" % matrix.write_report(os.path.abspath(args.out), report_path, command, modes,
                                               matrix.commit(os.path.abspath(args.build_dir))))
        return 0
    if os.geteuid() != 0:
        raise LabError("needs root (network namespaces, tc)")
    args.report = report_path
    take(args, "matrix")                   # the whole matrix: no other run between its cells
    try:
        return matrix.run(args, run_once, check_tools, command, reanalyse_run)
    except LabError:
        topology.down(quiet=True)          # still ours: the lock goes after
        raise
    finally:
        lock.release()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bwss-lab", description="the network lab of bwss")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    u = sub.add_parser("up")
    u.add_argument("--no-wait", action="store_true", help="exit 2 at once while the lab is in use")
    u.add_argument("--set", action="append")
    u.add_argument("--build-dir", default=paths.BUILD_DIR)
    u.add_argument("--stats", help="the delay stage writes its statistics (JSON) here when it stops")
    d = sub.add_parser("down")
    d.add_argument("--force", action="store_true", help="also when another (live) owner holds the lab")
    r = sub.add_parser("run")
    r.add_argument("scenario")
    r.add_argument("--no-wait", action="store_true", help="exit 2 at once while the lab is in use")
    r.add_argument("--mode", action="append")
    r.add_argument("--repeat", type=int, default=1)
    r.add_argument("--tries", type=int, default=TRIES,
                   help="runs of a mode whose run is invalid (host noise), in all (default %d)" % TRIES)
    r.add_argument("--duration", type=float)
    r.add_argument("--set", action="append")
    r.add_argument("--label")
    r.add_argument("--out", default=paths.runs_dir())
    r.add_argument("--build-dir", default=paths.BUILD_DIR)
    p = sub.add_parser("report")
    p.add_argument("dirs", nargs="+")
    p.add_argument("--out", default=paths.report_path())
    p.add_argument("--command", action="append", help="a command line to name in the report")
    a = sub.add_parser("reanalyse", help="analyse finished runs again from their raw files")
    a.add_argument("dirs", nargs="+")
    a.add_argument("--build-dir", default=paths.BUILD_DIR)
    k = sub.add_parser("lock")
    k.add_argument("--no-wait", action="store_true", help="exit 2 at once while the lab is in use")
    k.add_argument("--skip", action="store_true",
                   help="with --no-wait: print a TAP skip plan and exit 0 instead (test scripts)")
    k.add_argument("command", nargs=argparse.REMAINDER)
    sub.add_parser("owner")
    x = sub.add_parser("matrix", help="the bottleneck matrix (docs/lab.md)")
    x.add_argument("--list", action="store_true", help="print the cells and exit")
    x.add_argument("--no-wait", action="store_true", help="exit 2 at once while the lab is in use")
    x.add_argument("--quick", action="store_true", help="only the %d cells of the suite" % len(matrix.QUICK))
    x.add_argument("--cells", help="only the cells matching these comma-separated shell patterns")
    x.add_argument("--adopt", action="store_true", help="also mode bwss-adopt")
    x.add_argument("--again", action="store_true", help="run cells again that have a valid summary")
    x.add_argument("--modes", help="only these comma-separated modes of each cell (tcp,ideal: the baseline "
                   "runs a later commit reuses, docs/lab.md)")
    x.add_argument("--baselines-from", action="append", default=[], metavar="DIR",
                   help="another matrix's --out: its tcp and ideal runs count here where their baseline key "
                   "is this build's (docs/lab.md); repeatable")
    x.add_argument("--tries", type=int, default=TRIES,
                   help="runs of a mode whose run is invalid (host noise), in all (default %d)" % TRIES)
    x.add_argument("--out", default=os.path.join(os.getcwd(), "results", "matrix"))
    x.add_argument("--report", help="the report (default docs/results/matrix.md; with --quick or "
                   "--cells OUT/matrix.md)")
    x.add_argument("--report-only", action="store_true", help="write the report from the summaries "
                   "under --out, run nothing")
    x.add_argument("--build-dir", default=paths.BUILD_DIR)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "list":
            for name, s in SCENARIOS.items():
                print("%-15s %s" % (name, s.doc))
            return 0
        if args.cmd == "report":
            return cmd_report(args)
        if args.cmd == "reanalyse":
            return cmd_reanalyse(args)
        if args.cmd == "matrix":
            if args.quick and args.cells:
                raise LabError("--quick and --cells: one or the other", 2)
            if args.tries < 1 or args.tries > 10:
                raise LabError("--tries must be 1..10", 2)
            matrix.parse_modes(args.modes)
            return cmd_matrix(args, argv)
        if args.cmd == "run":
            prepared = prepare_run(args)
        if os.geteuid() != 0:
            raise LabError("needs root (network namespaces, tc)")
        if args.cmd == "owner":
            return cmd_owner()
        if args.cmd == "lock":
            return cmd_lock(args)
        if args.cmd == "down":
            ok, rec = lock.may_tear_down(args.force)
            if not ok:
                raise LabError("the lab is in use by %s: not removed (--force removes it anyway)"
                               % lock.describe(rec), lock.BUSY)
            topology.down()
            return 0
        if args.cmd == "up":
            try:
                sc = SCENARIOS["streaming"].with_sets(args.set)
            except ScenarioError as e:
                raise LabError(str(e), 2)
            owner = lock.owner_of_up()
            take(args, "up", pid=owner)
            try:
                trace = None
                pts = linktrace.points(sc)
                if pts:
                    os.makedirs(STATE_DIR, exist_ok=True)
                    trace = os.path.join(STATE_DIR, "link-trace.txt")
                    linktrace.write(pts, trace)
                proc = topology.up(sc, os.path.abspath(args.build_dir), trace_file=trace,
                                   stats_file=os.path.abspath(args.stats) if args.stats else None)
            except LabError:
                lock.release(owner)
                raise
            topology.start_trace(proc)
            return 0
        take(args, "run")
        try:
            return cmd_run(args, *prepared)
        except LabError:
            topology.down(quiet=True)          # still ours: the lock goes after
            raise
        finally:
            lock.release()
    except LabError as e:
        print("bwss-lab: %s" % e, file=sys.stderr)
        return e.code
