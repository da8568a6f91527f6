# SPDX-License-Identifier: LGPL-2.1-or-later
"""The machine a run ran on: its kernel, and the CPU time its hypervisor took
away while the run went (steal time, /proc/stat), recorded in each run's
summary because a stage's lateness depends on both."""
import os
import time


def cpu_ticks():
    """(steal, total) clock ticks of all CPUs since boot (/proc/stat's "cpu"
    line: user nice system idle iowait irq softirq steal ...; guest time is
    already counted in user and nice)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    v = [int(x) for x in fields[1:9]]
    return v[7], sum(v)


class Span:
    """A stretch of wall time and what the host did meanwhile."""
    def __init__(self):
        self.start = time.time()
        self.ticks = cpu_ticks()

    def summary(self):
        """The fields summary.json gets: kernel, the span's wall times, its
        steal time as a percentage of all CPU time and the load average at
        its end (the other work the stages competed with)."""
        steal, total = cpu_ticks()
        d_steal, d_total = steal - self.ticks[0], total - self.ticks[1]
        return {"kernel": os.uname().release,
                "cpus": os.cpu_count(),
                "started_unix": round(self.start, 3),
                "ended_unix": round(time.time(), 3),
                "steal_pct": round(100.0 * d_steal / d_total, 2) if d_total > 0 else None,
                "loadavg_1min": round(os.getloadavg()[0], 2)}


# Before a try that replaces an invalid one, the lab waits for the host to be
# quiet: steal comes in bursts (another guest of the hypervisor busy for a
# minute), and a try started inside the burst that spoiled the last one is
# likely spoiled too.  Quiet: a window of QUIET_WINDOW_S with less than
# QUIET_STEAL_PCT of the CPU time stolen (the runs this machine carried
# had 0.0-2 %; the ones it could not, 8 %).  The wait is bounded: after
# QUIET_WAIT_MAX_S the try runs anyway and its own validity judges it.
QUIET_WINDOW_S = 5.0
QUIET_STEAL_PCT = 2.0
QUIET_WAIT_MAX_S = 60.0


def wait_quiet(say, window_s=QUIET_WINDOW_S, steal_pct=QUIET_STEAL_PCT, max_s=QUIET_WAIT_MAX_S,
               ticks=cpu_ticks, sleep=time.sleep):
    """Waits until a window of @window_s seconds has less than @steal_pct of
    its CPU time stolen, at most @max_s; say(text) reports.  Returns (quiet,
    seconds waited, the last window's steal %)."""
    waited, last = 0.0, None
    while True:
        s0, t0 = ticks()
        sleep(window_s)
        waited += window_s
        s1, t1 = ticks()
        last = 100.0 * (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0
        if last < steal_pct:
            say("  the host is quiet (steal %.1f %% over %.0f s, waited %.0f s)" % (last, window_s, waited))
            return True, waited, last
        if waited >= max_s:
            say("  the host is still busy after %.0f s (steal %.1f %%): trying anyway" % (waited, last))
            return False, waited, last
