# SPDX-License-Identifier: LGPL-2.1-or-later
"""Where the lab reads and writes, in one place: the source tree, the
build it runs, its raw runs, and the generated reports.

The generated reports live in docs/results/, apart from the design docs
(docs/*.md, written by hand); each report names its date, commit and
commands at its top.  A new report is a name here (report_path(NAME)) and
a row of docs/results/README.md."""
import os

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


def report_path(name=REPORT_MODES):
    """The path of the generated report @name (docs/results/NAME)."""
    return os.path.join(RESULTS_DIR, name)
