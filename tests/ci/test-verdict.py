#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""CI's verdict (.ci/verdict) on synthetic meson logs: each way a leg can
test less than it says fails the verdict and is named in its output, and a
leg that ran everything passes.

The verdict is what stands between "meson test exited 0" and "CI is green":
meson counts a skipped test as a pass, so if the verdict missed a fault CI
would be green having tested less.  Each case here writes a testlog.json (one
JSON object per test run, as meson 1.0 writes it: name "project:suite+suite /
test", result, returncode, stdout, duration) and, where it matters, an
introspection list of the registered tests (`meson introspect --tests`), runs
the verdict as CI does and checks

  - its exit status (1 on a fault, 0 otherwise);
  - that every planted fault is named: the test or suite, and why (the
    skip's reason, the skipped subtest's line);
  - that nothing else is named (a leg with one fault names one).

usage: test-verdict.py VERDICT   (TAP on stdout)
"""
import json
import os
import subprocess
import sys
import tempfile

VERDICT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", ".ci", "verdict")


def run(name, suites, result="OK", stdout=None, returncode=None):
    """One test's record in meson's testlog.json."""
    if stdout is None:
        stdout = "ok 1 - it works\n1..1\n"
    if returncode is None:
        returncode = 1 if result == "FAIL" else 0
    return {"name": "bwss:%s / %s" % ("+".join(suites), name), "result": result,
            "returncode": returncode, "stdout": stdout, "duration": 1.5,
            "starttime": 0.0, "command": ["/bin/true"], "env": {}}


def registered(name, suites):
    """One test's record in `meson introspect --tests`."""
    return {"name": name, "suite": ["bwss:" + s for s in suites], "protocol": "tap"}


# a leg that ran every test of its suites, none skipped
GREEN = [run("allocation", ["unit", "quick"]),
         run("capacity", ["unit", "quick"], stdout="ok 1 - a\nok 2 - b\n1..2\n"),
         run("domain", ["socket", "quick"]),
         run("bwsshttpsrc", ["gst"]),
         run("hostile", ["hostile"])]
GREEN_REG = [registered("allocation", ["unit", "quick"]), registered("capacity", ["unit", "quick"]),
             registered("domain", ["socket", "quick"]), registered("bwsshttpsrc", ["gst"]),
             registered("hostile", ["hostile"])]
SUITES = "unit,socket,gst,hostile"

CASES = [
    # (description, runs, registered or None, --suites, exit status, words each fault line must hold)
    ("a leg that ran everything passes", GREEN, GREEN_REG, SUITES, 0, []),
    ("a skipped test (TAP skip plan) fails, named with its reason",
     GREEN + [run("netns-weights", ["socket"], "SKIP", "1..0 # SKIP needs root and unshare\n")],
     GREEN_REG + [registered("netns-weights", ["socket"])], SUITES, 1,
     [["netns-weights", "socket", "SKIPPED", "needs root and unshare"]]),
    ("a skipped test (exit 77) fails, named with its exit status",
     GREEN + [run("late", ["unit", "quick"], "SKIP", "# no clock\n", returncode=77)], None, SUITES, 1,
     [["late", "unit+quick", "SKIPPED", "exit status 77", "no clock"]]),
    ("a skipped subtest (a SKIP directive on ok 3) fails, named with its line",
     GREEN + [run("debs", ["debian"], stdout="ok 1 - built\nok 2 - bookworm\n"
                  "ok 3 # SKIP trixie: mmdebstrap not installed\n1..3\n")],
     None, SUITES + ",debian", 1,
     [["debs", "debian", "subtest SKIPPED", "ok 3 # SKIP trixie: mmdebstrap not installed"]]),
    ("a subtest skip is found whatever its case (a lower-case skip directive)",
     GREEN + [run("tools", ["socket"], stdout="ok 1 - a\nok 2 - strace kill # skip no strace\n1..2\n")],
     None, SUITES, 1, [["tools", "socket", "subtest SKIPPED", "no strace"]]),
    ("a must-run suite that ran no test fails, named",
     [r for r in GREEN if "gst" not in r["name"]], None, SUITES, 1,
     [["suite gst ran no test"]]),
    ("a registered test of a must-run suite that did not run fails, named",
     GREEN, GREEN_REG + [registered("nosoup", ["gst"])], SUITES, 1,
     [["nosoup", "gst", "registered but did not run"]]),
    ("a missing test log fails, named",
     None, None, SUITES, 1, [["no test log"]] + [["suite %s ran no test" % s] for s in SUITES.split(",")]),
    ("a skip outside the must-run suites is not a fault",
     GREEN + [run("wakeups", ["bench"], "SKIP", "1..0 # SKIP needs perf\n")], None, SUITES, 0, []),
    ("a subtest that merely mentions skip is not a skip",
     GREEN + [run("layers", ["unit", "quick"],
                  stdout="# skip-list: none\nok 1 - the skip list parses\n1..1\n")], None, SUITES, 0, []),
    ("a failed test is counted, and left to meson's exit status",
     GREEN + [run("player", ["unit", "quick"], "FAIL", "not ok 1 - stalls\n1..1\n")], None, SUITES, 0, []),
]


def main():
    n = failed = 0
    with tempfile.TemporaryDirectory(prefix="bwss-verdict-") as tmp:
        for i, (what, runs, reg, suites, want_rc, want_faults) in enumerate(CASES):
            log = os.path.join(tmp, "testlog-%d.json" % i)
            if runs is not None:
                with open(log, "w", encoding="utf-8") as f:
                    for r in runs:
                        f.write(json.dumps(r) + "\n")
            argv = [sys.executable, VERDICT, "--leg", "Leg %d" % i, "--suites", suites]
            if reg is not None:
                path = os.path.join(tmp, "intro-%d.json" % i)
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(reg, f)
                argv += ["--registered", path]
            p = subprocess.run(argv + [log], capture_output=True, text=True, timeout=60)
            out = p.stdout + p.stderr
            # fault lines: "CI: Leg N: ..." except the closing count line
            faults = [l for l in p.stdout.splitlines()
                      if l.startswith("CI: ") and "did not run in full" not in l]
            why = []
            if p.returncode != want_rc:
                why.append("exit status %d, want %d" % (p.returncode, want_rc))
            if len(faults) != len(want_faults):
                why.append("%d fault lines, want %d" % (len(faults), len(want_faults)))
            for words in want_faults:
                if not any(all(w in l for w in words) for l in faults):
                    why.append("no fault line names %s" % " + ".join(repr(w) for w in words))
            if runs is not None and not any(l.startswith("Leg %d: %d tests run" % (i, len(runs)))
                                            for l in p.stdout.splitlines()):
                why.append("no summary line counting %d tests" % len(runs))
            if want_rc and "a skip is not a pass under CI" not in p.stdout:
                why.append("no closing line")
            n += 1
            if why:
                failed += 1
                print("not ok %d - %s: %s" % (n, what, "; ".join(why)))
                for l in out.splitlines():
                    print("# " + l)
            else:
                # a '#' in a test line is a TAP directive: the fault lines go below it
                print("ok %d - %s (exit %d)" % (n, what, p.returncode))
                for l in faults:
                    print("# " + l)
        # the table docs/results/ci.md is made of: one row per suite, the counts right
        log = os.path.join(tmp, "testlog-md.json")
        with open(log, "w", encoding="utf-8") as f:
            for r in GREEN:
                f.write(json.dumps(r) + "\n")
        p = subprocess.run([sys.executable, VERDICT, "--markdown", "--leg", "md", "--suites", SUITES, log],
                           capture_output=True, text=True, timeout=60)
        rows = [l for l in p.stdout.splitlines() if l.startswith("| ") and not l.startswith("| suite")]
        want = {"unit": "| unit | 2 | 2 OK |", "quick": "| quick | 3 | 3 OK |",
                "gst": "| gst | 1 | 1 OK |", "hostile": "| hostile | 1 | 1 OK |",
                "socket": "| socket | 1 | 1 OK |"}
        bad = [s for s, row in want.items() if not any(r.startswith(row) for r in rows)]
        n += 1
        if p.returncode != 0 or bad or len(rows) != len(want):
            failed += 1
            print("not ok %d - --markdown: one row per suite with its count (exit %d; wrong or missing: %s)"
                  % (n, p.returncode, ", ".join(bad) or "%d rows" % len(rows)))
            for l in p.stdout.splitlines():
                print("# " + l)
        else:
            print("ok %d - --markdown: one row per suite with its count (%d rows)" % (n, len(rows)))
        # --print-failed: the end of a failed test's output, nothing of a passed one's
        log = os.path.join(tmp, "testlog-failed.json")
        lines = "".join("# try %d: stage late\n" % k for k in range(1, 101)) + "not ok 1 - weights 1:2\n1..1\n"
        with open(log, "w", encoding="utf-8") as f:
            for r in GREEN + [run("netns-weights", ["socket"], "ERROR", lines, returncode=1)]:
                f.write(json.dumps(r) + "\n")
        p = subprocess.run([sys.executable, VERDICT, "--print-failed", log],
                           capture_output=True, text=True, timeout=60)
        out = p.stdout.splitlines()
        why = []
        if p.returncode != 0:
            why.append("exit status %d" % p.returncode)
        if not any("netns-weights" in l and "ERROR" in l for l in out):
            why.append("no header naming the failed test and its result")
        if not any("not ok 1 - weights 1:2" in l for l in out):
            why.append("its verdict line not printed")
        if any("try 1:" in l for l in out) or not any("try 100:" in l for l in out):
            why.append("not the output's last lines")
        if any("it works" in l for l in out):
            why.append("a passed test's output printed")
        n += 1
        if why:
            failed += 1
            print("not ok %d - --print-failed: %s" % (n, "; ".join(why)))
            for l in out:
                print("# " + l)
        else:
            print("ok %d - --print-failed prints the last lines of the failed test only (%d lines)" % (n, len(out)))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
