# SPDX-License-Identifier: LGPL-2.1-or-later
"""The lab's Python tests speak TAP: each check an "ok N" or "not ok N"
line in order, the plan ("1..N") at the end, and the exit status the
verdict (meson reads protocol 'tap')."""
import sys


class Tap:
    def __init__(self, first=0):
        self.n = first           # checks printed so far (a caller may continue a shell's count)
        self.good = True

    def check(self, cond, msg):
        """Prints the next check's line; a false @cond fails the test."""
        self.n += 1
        self.good &= bool(cond)
        print(("ok %d - " if cond else "not ok %d - ") % self.n + msg)

    def skip(self, msg, why):
        """Prints the next check as skipped, saying @why (meson counts it)."""
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, msg, why))

    def done(self):
        """Prints the plan and exits: 0 if every check passed."""
        print("1..%d" % self.n)
        sys.exit(0 if self.good else 1)
