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
