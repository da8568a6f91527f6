# SPDX-License-Identifier: LGPL-2.1-or-later
"""Where the lab reads and writes, in one place: the source tree, the
build it runs, its raw runs, and the generated reports.

The generated reports live in docs/results/, apart from the design docs
(docs/*.md, written by hand); each report names its date, commit and
commands at its top.  A new report is a name here (report_path(NAME)) and
a row of docs/results/README.md."""
import os
import time

SRC_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD_DIR = os.path.join(SRC_ROOT, "build")     # what `bwss-lab up|run` runs by default
RESULTS_DIR = os.path.join(SRC_ROOT, "docs", "results")

# the reports `bwss-lab report` writes (--out): every scenario and mode
REPORT_MODES = "modes.md"
# the bottleneck matrix `bwss-lab matrix` writes (--report)
REPORT_MATRIX = "matrix.md"
# an application is one download (issue 29): bwss-lab report --out docs/results/groups.md
REPORT_GROUPS = "groups.md"


def runs_dir():
    """Where `bwss-lab run` puts its runs by default: ./results."""
    return os.path.join(os.getcwd(), "results")


def keep_earlier(base):
    """Moves the runs an earlier `bwss-lab run` of the same label left in
    base aside, to base.<its time: YYYYmmdd-HHMMSS>, so that a run never
    writes over another's files.  Returns where they went (None if base held
    nothing)."""
    if not os.path.isdir(base) or not os.listdir(base):
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(os.path.getmtime(base)))
    dest, k = "%s.%s" % (base, stamp), 1
    while os.path.exists(dest):
        k += 1
        dest = "%s.%s-%d" % (base, stamp, k)
    os.rename(base, dest)
    return dest


def report_path(name=REPORT_MODES):
    """The path of the generated report @name (docs/results/NAME)."""
    return os.path.join(RESULTS_DIR, name)
