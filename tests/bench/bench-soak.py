#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench-soak.py — a soak of the control plane: a long run of churn on
loopback with real parts, and bwssd's memory and files watched through it.
A benchmark, not a test.

  bench-soak.py BUILD [--duration S] [--report FILE] [--seed N]

BUILD is a build directory of this tree (its bwssd, bwss-run, bwss-top, the
chaos suite's reader and the GStreamer plugin).  For --duration seconds
(default 3600):

  - bwssd runs as the user's service would (--foreground, no --rules: the
    rules file in $XDG_CONFIG_HOME/bwss, a directory of this run's, adopts
    only this run's ports, `[default] adopt=false`), killed with -9
    at random (a third of the times with its watchdog), then, as its unit
    does, `bwssd --restore` and a start again RestartSec later, which takes
    the domain from a bwssd a client started in that second (--autostart)
    if one did; a start the domain's lock refuses all the same fails the
    run (and, for the rest of the run, every client is stopped for a
    moment, that bwssd sent SIGTERM and the service started);
  - clients come and go, each killed at random (-9 or SIGTERM of its
    process group) or ending by itself: curl under bwss-run (handed over by
    the shim), plain curl (adopted by bwssd), short wget downloads under
    bwss-run, and players (gst-launch-1.0 bwsshttpsrc ! wavparse ! fakesink
    sync=true, real time); the HTTP server is tests/gst/range-server.py;
  - four readers of the chaos suite (tests/chaos/chaos-reader: they publish
    the clamp their socket had at connect and at each read), two under
    bwss-run and two plain, download 4 MB again and again from a paced
    server, and are themselves killed now and then and started again;
  - the rules file is edited (in place, or replaced as an editor saves it;
    one edit in eight is a bad file the daemon must refuse, put right a few
    seconds later); a start while the file is bad runs on the built-in
    rules until it is put right (they adopt every flow of the user that
    bwssd sees: run as root, the host's too, for those seconds).

Every SAMPLE_S bwssd's RSS and fd count are read for every bwssd of this
run's domain (the service, and one a client autostarted while the service
was dead), the fds as the least of three looks (a scan's sock_diag socket
lives for a moment; a leak shows in every look).

At the end the churn stops (the clients of the moment go on) and the
checks of the chaos suite are made on the readers: with bwssd and every bwss-run stopped (SIGSTOP) the shim's
readers are back at the window their socket had at connect within
BOUND_S; then with bwssd killed (-9) its watchdog gives the adopted readers
theirs back within BOUND_S; the ledger keeps no record, and with every
client gone the domain lists no flow.  RSS and fds are judged flat if
their per-minute medians after the warm-up (WARMUP_S, and from bwssd
processes at least INSTANCE_WARMUP_S old) stay within FLAT_SPREAD of each
other.  Exit status 0 if every check held, 1 if one did not, 2 on a usage
or setup error.

Isolation: a runtime directory and HOME of its own (under /dev/shm, mode
700), a domain of its own, loopback only, and only the processes it
started (each client in a process group of its own) are ever signalled.
Run it at idle priority beside other work: `chrt -i 0 nice -n 19`.
"""
import argparse
import datetime
import json
import os
import platform
import random
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

SAMPLE_S = 5            # s: how often bwssd and the readers are sampled
BOUND_S = 4.0           # s: the chaos suite's bound on a flow left clamped (the promise 2 s)
FLAT_SPREAD = 0.10      # (max - min) / min of the per-minute medians: the 10 %
INSTANCE_WARMUP_S = 60  # s: a bwssd younger than this is still growing its tables
RESTART_S = 1.0         # s: bwssd.service's RestartSec
READY_S = 5.0           # s: how long a bwssd may take to leave, or to listen
FEED_CHUNK = 131072     # bytes the readers' server sends at a time...
FEED_GAP_S = 0.125      # ...this often (1 Mbyte/s a reader)...
FEED_CHUNKS = 32        # ...this many times, then it closes (4 MB)
REFUSED = "bwssd starts refused: a client's autostarted bwssd held the domain"
# chaos.h's ChaosStatus: pid, port, last_read_us, bytes, downloads, orig_clamp, clamp
STATUS = struct.Struct("=iIQQQII")
STATUS_RECORDS = 16     # chaos.h's CHAOS_MAX_PARTICIPANTS
# how many clients of each kind run at once at most
MAX_RUNNING = {"run-curl": 3, "curl": 2, "player": 2, "run-wget": 1}

FEED_SERVER = r"""
import asyncio, sys
chunk, gap, chunks = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
async def serve(reader, writer):
    try:
        for _ in range(chunks):
            writer.write(b"\0" * chunk)
            await writer.drain()
            await asyncio.sleep(gap)
    except OSError:
        pass
    finally:
        writer.close()
async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()
asyncio.run(main())
"""


def now():
    return time.monotonic()


class Soak:
    def __init__(self, args):
        self.args = args
        self.rand = random.Random(args.seed)
        b = os.path.abspath(args.build)
        self.bwssd = os.path.join(b, "libbwss/programs/bwssd/bwssd")
        self.run = os.path.join(b, "libbwss/programs/tools/bwss-run")
        self.top = os.path.join(b, "libbwss/programs/tools/bwss-top")
        self.reader = os.path.join(b, "tests/chaos/chaos-reader")
        self.plugin = os.path.join(b, "gst-plugin")
        self.src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        for p in (self.bwssd, self.run, self.top, self.reader):
            if not os.access(p, os.X_OK):
                sys.exit("bench-soak: %s: not built" % p)
        for tool in ("curl", "wget", "gst-launch-1.0"):
            if shutil.which(tool) is None:
                sys.exit("bench-soak: %s not found" % tool)
        self.tmp = tempfile.mkdtemp(prefix="bwss-soak.", dir="/dev/shm")
        os.chmod(self.tmp, 0o700)
        self.rundir = os.path.join(self.tmp, "run")
        self.home = os.path.join(self.tmp, "home")
        self.www = os.path.join(self.tmp, "www")
        for d in (self.rundir, self.home, self.www):
            os.mkdir(d, 0o700)
        self.domain = "bwss-soak-%d" % os.getpid()
        env = {k: v for k, v in os.environ.items()
               if k not in ("LD_PRELOAD", "NOTIFY_SOCKET", "DBUS_SESSION_BUS_ADDRESS",
                            "XDG_CONFIG_HOME", "BWSS_DOMAIN")}
        env.update(XDG_RUNTIME_DIR=self.rundir, HOME=self.home, BWSS_DOMAIN=self.domain,
                   BWSS_BWSSD=self.bwssd, GST_PLUGIN_PATH=self.plugin,
                   GST_REGISTRY=os.path.join(self.tmp, "registry.bin"))
        self.env = env
        config = os.path.join(self.tmp, "config")
        os.makedirs(os.path.join(config, "bwss"), 0o700)
        self.env["XDG_CONFIG_HOME"] = config
        self.rules = os.path.join(config, "bwss", "rules.conf")   # where the service looks
        self.status_path = os.path.join(self.tmp, "status")
        with open(self.status_path, "wb") as f:
            f.write(b"\0" * STATUS.size * STATUS_RECORDS)
        self.log = open(os.path.join(self.tmp, "bwssd.log"), "ab")
        self.procs = []          # every Popen this run started
        self.clients = []        # (kind, Popen, end time)
        self.witnesses = {}      # index -> (kind, Popen)
        self.service = None
        self.service_down_since = None
        self.next_start = 0.0
        self.counts = {}
        self.samples = []        # dicts, one per sample
        self.minutes = {}
        self.first_seen = {}     # bwssd pid -> monotonic time first seen
        self.teeth = 0           # reader samples clamped below connect's window by a live bwssd
        self.verdicts = []       # (ok, text)

    def count(self, what, n=1):
        self.counts[what] = self.counts.get(what, 0) + n

    # ---- processes: each in a group of its own, only ours signalled ----
    def spawn(self, argv, **kw):
        p = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL,
                             stdout=kw.pop("stdout", subprocess.DEVNULL),
                             stderr=kw.pop("stderr", subprocess.DEVNULL),
                             start_new_session=True, **kw)
        self.procs.append(p)
        return p

    @staticmethod
    def signal_group(p, sig):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass

    def reap(self):
        for p in self.procs:
            p.poll()
        self.procs = [p for p in self.procs if p.returncode is None]

    # ---- servers and files ----
    def setup(self):
        with open(os.path.join(self.www, "big.bin"), "wb") as f:
            f.truncate(8 << 30)
        with open(os.path.join(self.www, "small.bin"), "wb") as f:
            f.truncate(4 << 20)
        # a WAV of silence, 16 kHz mono S16LE (256 kbit/s), 30 minutes
        rate, seconds = 16000, 1800
        data = rate * 2 * seconds
        with open(os.path.join(self.www, "audio.wav"), "wb") as f:
            f.write(b"RIFF" + struct.pack("<I", 36 + data) + b"WAVEfmt " +
                    struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16) +
                    b"data" + struct.pack("<I", data))
            f.truncate(44 + data)
        http = self.spawn([os.path.join(self.src, "tests/gst/range-server.py"), self.www],
                          stdout=subprocess.PIPE)
        self.http_port = int(http.stdout.readline())
        feed = self.spawn([sys.executable, "-c", FEED_SERVER, str(FEED_CHUNK), str(FEED_GAP_S),
                           str(FEED_CHUNKS)], stdout=subprocess.PIPE)
        self.feed_port = int(feed.stdout.readline())
        self.url = "http://127.0.0.1:%d" % self.http_port
        self.write_rules(good=True, replace=False)

    # ---- the rules file ----
    def write_rules(self, good, replace):
        r = self.rand
        text = ("# the soak's rules: only its own ports are adopted\n"
                "[readers]\nremote-port=%d\nweight=%s\npriority=%d\n\n"
                "[web]\nremote-port=%d\nweight=%s\nmin-rate=%s\n\n"
                "[default]\nadopt=false\n" %
                (self.feed_port, r.choice(["0.5", "1", "2", "4"]), r.randint(-10, 10),
                 self.http_port, r.choice(["1", "1.5", "3"]) if good else "-3",
                 r.choice(["0", "200k", "1M"])))
        if replace:
            with open(self.rules + ".new", "w") as f:
                f.write(text)
            os.replace(self.rules + ".new", self.rules)
        else:
            with open(self.rules, "w") as f:
                f.write(text)

    def edit_rules(self):
        """Returns the seconds to the next edit: a bad file is put right
        soon after, as its author would on reading bwssd's message (a start
        meanwhile runs on the built-in rules until then)."""
        good = self.rand.random() >= 1 / 8
        self.write_rules(good, replace=self.rand.random() < 0.5)
        self.count("rules edits" if good else "rules edits refused (bad file)")
        return self.rand.uniform(20, 60) if good else self.rand.uniform(2, 8)

    # ---- bwssd, as its unit runs it ----
    def start_service(self):
        self.service = subprocess.Popen([self.bwssd, "--foreground", "--domain", self.domain],
                                        env=self.env,
                                        stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                        start_new_session=True)
        self.procs.append(self.service)
        self.count("bwssd starts")

    def service_alive(self):
        return self.service is not None and self.service.poll() is None

    def restore(self):
        subprocess.run([self.bwssd, "--restore"], env=self.env, stdin=subprocess.DEVNULL,
                       stdout=self.log, stderr=self.log)

    def watchdog_of(self, pid):
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            return None
        return kids[0] if kids else None

    def kill_service(self):
        if not self.service_alive():
            return
        both = self.rand.random() < 1 / 3
        w = self.watchdog_of(self.service.pid) if both else None
        os.kill(self.service.pid, signal.SIGKILL)
        if w:
            try:
                os.kill(w, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.service.wait()
        self.count("bwssd kill -9 with its watchdog" if w else "bwssd kill -9")

    def tend_service(self, t):
        if self.service_alive():
            return
        if self.service is not None and self.service_down_since is None:
            rc = self.service.returncode
            if rc == 1 and t - self.service_up_at < 2:
                # the domain's lock refused it: a client's autostarted bwssd
                # holds it, and keeps it while any client lives
                self.count(REFUSED)
                self.take_domain_back()
                return
            else:
                if rc != -signal.SIGKILL:
                    self.count("bwssd exits by itself (status %d)" % rc)
                self.restore()         # the unit's ExecStopPost
                self.next_start = t + RESTART_S
            self.service_down_since = t
        if t >= self.next_start:
            self.start_service()
            self.service_up_at = t
            self.service_down_since = None

    # ---- clients ----
    def take_domain_back(self):
        """The service's start was refused: a client started a bwssd in the
        one second the domain had none.  With every client stopped (one
        would start another the moment that one leaves), it is sent SIGTERM
        (it gives its flows back and leaves), the service starts and listens,
        and the clients go on."""
        groups = [p for _, p, _ in self.clients] + [p for _, p in self.witnesses.values()]
        for p in groups:
            self.signal_group(p, signal.SIGSTOP)
        others = self.bwssd_pids()
        for p in others:
            try:
                os.kill(p, signal.SIGTERM)
            except ProcessLookupError:
                pass
        def running(pid):
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    return f.read() != b""      # a zombie's is empty
            except OSError:
                return False
        t = now()
        while now() - t < READY_S and any(running(p) for p in others):
            time.sleep(0.02)
        self.start_service()
        self.service_up_at = now()
        self.service_down_since = None
        sock = os.path.join(self.runtime_dir(), self.domain + ".sock")
        t = now()
        while now() - t < READY_S and self.service.poll() is None and not os.path.exists(sock):
            time.sleep(0.02)
        time.sleep(0.2)
        for p in groups:
            self.signal_group(p, signal.SIGCONT)
        self.count("the domain taken back from a client's bwssd")

    def runtime_dir(self):
        paths = subprocess.run([self.top, "--paths"], env=self.env, stdout=subprocess.PIPE, text=True).stdout
        runtime = [line.split(None, 1)[1] for line in paths.splitlines() if line.startswith("runtime-dir ")]
        return runtime[0] if runtime else self.rundir

    def start_client(self, kind, t):
        r = self.rand
        if kind == "run-curl":
            argv = [self.run, "--", "curl", "-s", "--limit-rate", "1M", "-o", "/dev/null",
                    self.url + "/big.bin"]
            life = r.uniform(5, 60)
        elif kind == "curl":
            argv = ["curl", "-s", "--limit-rate", "1M", "-o", "/dev/null", self.url + "/big.bin"]
            life = r.uniform(5, 60)
        elif kind == "run-wget":
            argv = [self.run, "--", "wget", "-q", "--limit-rate=2m", "-O", "/dev/null",
                    self.url + "/small.bin"]
            life = 60                  # ends by itself in about 2 s
        else:
            argv = ["gst-launch-1.0", "-q", "bwsshttpsrc", "location=%s/audio.wav" % self.url,
                    "!", "wavparse", "!", "fakesink", "sync=true"]
            life = r.uniform(10, 120)
        self.clients.append((kind, self.spawn(argv), t + life))
        self.count("clients started: " + kind)

    def start_witness(self, index):
        argv = [self.reader, str(self.feed_port), self.status_path, str(index)]
        kind = "shim reader" if index < 2 else "adopted reader"
        if index < 2:
            argv = [self.run, "--"] + argv
        self.witnesses[index] = (kind, self.spawn(argv))

    def tend_clients(self, t):
        keep = []
        for kind, p, end in self.clients:
            if p.poll() is not None:
                self.count("clients ended by themselves: " + kind)
            elif t >= end:
                sig = signal.SIGKILL if self.rand.random() < 0.5 else signal.SIGTERM
                self.signal_group(p, sig)
                self.count("clients killed (%s): %s" % (signal.Signals(sig).name, kind))
            else:
                keep.append((kind, p, end))
        self.clients = keep
        for kind, most in MAX_RUNNING.items():
            running = sum(1 for k, _, _ in self.clients if k == kind)
            if running < most and self.rand.random() < 0.5:
                self.start_client(kind, t)
        for i, (kind, p) in list(self.witnesses.items()):
            if p.poll() is not None:
                self.start_witness(i)
            elif self.rand.random() < 1 / 120:    # about every 2 minutes each
                self.signal_group(p, signal.SIGKILL)
                p.wait()
                self.count("readers killed -9: " + kind)
                self.start_witness(i)

    # ---- samples ----
    def bwssd_pids(self):
        """Every bwssd of this run's domain (not the watchdogs): the
        service, or one a client started."""
        out = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv[0] == self.bwssd.encode() and self.domain.encode() in argv:
                out.append(int(d))
        return out

    @staticmethod
    def rss_kb(pid):
        """VmRSS and RssAnon, kB: all its resident memory, and the part that
        is its own heap and stacks (not the pages of the libraries it
        touched, which vary from one process to the next)."""
        got = {}
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "RssAnon:")):
                    got[line.split(":")[0]] = int(line.split()[1])
        return got.get("VmRSS", 0), got.get("RssAnon", 0)

    @staticmethod
    def fds(pid):
        least = None
        for i in range(3):
            n = len(os.listdir("/proc/%d/fd" % pid))
            least = n if least is None else min(least, n)
            if i < 2:
                time.sleep(0.05)
        return least

    def readers(self):
        with open(self.status_path, "rb") as f:
            data = f.read()
        out = {}
        for i in self.witnesses:
            pid, port, _, nbytes, downloads, orig, clamp = STATUS.unpack_from(data, i * STATUS.size)
            out[i] = dict(pid=pid, port=port, bytes=nbytes, downloads=downloads, orig=orig, clamp=clamp)
        return out

    def listed_flows(self):
        r = subprocess.run([self.top, "--once", "--json"], env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=10)
        try:
            return len(json.loads(r.stdout)["flows"])
        except (ValueError, KeyError):
            return None

    def sample(self, t, t0):
        rss = anon = fds = 0
        pids, own = [], {}
        young = False
        for pid in self.bwssd_pids():
            try:
                (r, a), f = self.rss_kb(pid), self.fds(pid)
            except (OSError, ValueError):
                continue
            if r == 0:                  # exiting: its memory already gone
                continue
            rss += r
            anon += a
            fds += f
            own[pid] = (r, a, f)
            pids.append(pid)
            self.first_seen.setdefault(pid, t)
            young = young or t - self.first_seen[pid] < INSTANCE_WARMUP_S
        live = self.service_alive() or len(pids) > 0
        for r in self.readers().values():
            if r["port"] and r["clamp"] < r["orig"] and live:
                self.teeth += 1
        s = dict(t=t - t0, pids=pids, rss=rss, anon=anon, fds=fds, own=own, young=young, flows=self.listed_flows(),
                 service=self.service.pid if self.service_alive() else None)
        self.samples.append(s)
        print("sample t=%.0f s bwssd %s rss %d kB anon %d kB fds %d flows %s" %
              (s["t"], ",".join(map(str, pids)) or "-", rss, anon, fds, s["flows"]), flush=True)

    # ---- the run ----
    def churn(self):
        a = self.args
        t0 = now()
        end = t0 + a.duration
        kill_mean = max(60.0, a.duration / 8)
        next_kill = t0 + self.rand.uniform(0.5, 1.5) * kill_mean
        next_edit = t0 + self.rand.uniform(20, 60)
        next_sample = t0
        self.start_service()
        self.service_up_at = t0
        time.sleep(1)
        for i in range(4):
            self.start_witness(i)
        while True:
            t = now()
            if t >= end:
                break
            self.tend_service(t)
            self.tend_clients(t)
            if t >= next_kill:
                self.kill_service()
                next_kill = t + self.rand.uniform(0.5, 1.5) * kill_mean
            if t >= next_edit:
                next_edit = t + self.edit_rules()
            if t >= next_sample:
                self.sample(t, t0)
                next_sample += SAMPLE_S
            self.reap()
            time.sleep(0.5)
        return t0

    def within(self, cond, bound=BOUND_S):
        t = now()
        while True:
            ok, what = cond()
            if ok or now() - t > bound:
                return ok, now() - t, what

    def readers_back(self, which):
        def cond():
            rs = self.readers()
            bad = ["reader %d (pid %d) clamped at %d (its connect's %d)" % (i, r["pid"], r["clamp"], r["orig"])
                   for i, r in rs.items() if i in which and r["port"] and r["clamp"] < r["orig"]]
            return not bad, "; ".join(bad)
        return cond

    def settle_service(self):
        """Until the service has run 5 s alone in the domain (60 s at most)."""
        self.write_rules(good=True, replace=False)
        deadline = now() + 60
        while now() < deadline:
            others = [p for p in self.bwssd_pids() if not (self.service_alive() and p == self.service.pid)]
            if not others and self.service_alive() and now() - self.service_up_at >= 5:
                return True
            if others or not self.service_alive():
                if self.service_alive():
                    self.service.send_signal(signal.SIGTERM)
                    self.service.wait()
                self.take_domain_back()
            time.sleep(0.5)
        return False

    def finish(self):
        # the service up (a client's bwssd, which would hold the domain,
        # sent away), the readers adopted or handed over again
        if not self.settle_service():
            self.verdicts.append((False, "the end: bwssd.service could not get the domain back in 60 s"))
            return 0
        time.sleep(3)
        before = self.readers()
        # 1. the chaos suite's last check: bwssd and every other client
        # stopped (of the shim's readers, their bwss-run)
        daemon = self.service.pid
        runs = [p for i, (_, p) in self.witnesses.items() if i < 2]
        for p in runs:
            os.kill(p.pid, signal.SIGSTOP)
        for _, p, _ in self.clients:
            self.signal_group(p, signal.SIGSTOP)
        os.kill(daemon, signal.SIGSTOP)
        ok, took, what = self.within(self.readers_back({0, 1}))
        self.verdicts.append((ok, "bwssd and the bwss-run of the shim's readers stopped: both readers back at "
                              "their connect's window within %.0f s (%.2f s%s)" % (BOUND_S, took,
                                                                                   "; " + what if what else "")))
        # 2. bwssd killed: its watchdog gives the adopted readers theirs back
        os.kill(daemon, signal.SIGKILL)
        os.kill(daemon, signal.SIGCONT)
        self.service.wait()
        ok, took, what = self.within(self.readers_back({2, 3}))
        self.verdicts.append((ok, "bwssd killed (-9): both adopted readers back at their connect's window "
                              "within %.0f s (%.2f s%s)" % (BOUND_S, took, "; " + what if what else "")))
        for p in runs:
            os.kill(p.pid, signal.SIGCONT)
        low = sum(1 for r in before.values() if r["port"] and r["clamp"] < r["orig"])
        # 3. the ledger: nothing left adopted once the watchdog is done
        ledger = os.path.join(self.runtime_dir(), "adopted")

        def ledger_empty():
            left = [n for n in (os.listdir(ledger) if os.path.isdir(ledger) else []) if n.isdigit()]
            return not left, "%d records left" % len(left)
        ok, took, what = self.within(ledger_empty)
        self.verdicts.append((ok, "the ledger keeps no record after the watchdog (%s, %.2f s)" %
                              (what, took)))
        # 4. every client gone: a bwssd started again lists no flow
        for _, p, _ in self.clients:
            self.signal_group(p, signal.SIGKILL)
            self.signal_group(p, signal.SIGCONT)
            p.wait()
        self.clients = []
        for _, p in self.witnesses.values():
            self.signal_group(p, signal.SIGKILL)
            p.wait()
        self.start_service()
        time.sleep(2)

        def no_flows():
            n = self.listed_flows()
            return n == 0, "%s flows listed" % n
        ok, took, what = self.within(no_flows)
        self.verdicts.append((ok, "every client gone: the domain lists no flow (%s)" % what))
        self.service.send_signal(signal.SIGTERM)
        rc = self.service.wait()
        self.verdicts.append((rc == 0, "bwssd's SIGTERM: exit %d" % rc))
        # the service takes the domain from a client's autostarted bwssd
        # (what its log says each time); a start refused is a defect
        self.log.flush()
        with open(self.log.name, "rb") as f:
            log = f.read()
        took = log.count(b"autostarted bwssd (pid ")
        if took:
            self.count("bwssd starts that took the domain from a client's bwssd", took)
        refused = self.counts.get(REFUSED, 0)
        self.verdicts.append((refused == 0, "every start of the service got the domain: %d of %d refused, "
                              "%d took it from a client's bwssd" % (refused, self.counts.get("bwssd starts", 0), took)))
        # a bad rules file at a start: the built-in rules until it is put
        # right, never a service that exits (the unit would restart it into
        # the same file until systemd's start limit gives up)
        exits = sum(n for k, n in self.counts.items() if k.startswith("bwssd exits by itself"))
        on_bad = log.count(b"(built-in rules until it is fixed)")
        self.verdicts.append((exits == 0, "the service never exited by itself: %d exits; %d starts found the "
                              "rules file bad and ran on the built-in rules" % (exits, on_bad)))
        return low

    def judge(self, t0):
        warm = self.args.warmup
        by_minute = {}
        for s in self.samples:
            by_minute.setdefault(int(s["t"] // 60), []).append(s)
        rows = []
        med = {"rss": [], "anon": [], "fds": []}
        for m in sorted(by_minute):
            ss = [s for s in by_minute[m] if s["pids"]]
            judged = [s for s in ss if not s["young"] and s["t"] >= warm]
            flows = [s["flows"] for s in by_minute[m] if s["flows"] is not None]
            pids = sorted({p for s in by_minute[m] for p in s["pids"]})
            if judged:
                for k in med:
                    med[k].append(statistics.median(s[k] for s in judged))
            rows.append(dict(m=m, pids=pids, n=len(by_minute[m]), nb=len(ss),
                             rss=statistics.median(s["rss"] for s in ss) if ss else None,
                             anon=statistics.median(s["anon"] for s in ss) if ss else None,
                             fds=statistics.median(s["fds"] for s in ss) if ss else None,
                             flows=statistics.median(flows) if flows else None, judged=bool(judged)))

        def spread(v):
            return (max(v) - min(v)) / min(v) if v and min(v) > 0 else None

        def verdict(what, v, over):
            sp = spread(v)
            return (sp is not None and sp <= FLAT_SPREAD,
                    "%s: %s-%s over %s, spread %s (bound %.0f %%)" %
                    (what, "%.0f" % min(v) if v else "-", "%.0f" % max(v) if v else "-", over,
                     "%.1f %%" % (100 * sp) if sp is not None else "-", 100 * FLAT_SPREAD))
        flat = [verdict("bwssd's RSS (kB) flat after the warm-up, per-minute medians", med["rss"],
                        "%d minutes" % len(med["rss"])),
                verdict("bwssd's fd count flat after the warm-up, per-minute medians", med["fds"],
                        "%d minutes" % len(med["fds"])),
                verdict("bwssd's anonymous RSS (kB, its heap and stacks) after the warm-up, per-minute medians",
                        med["anon"], "%d minutes" % len(med["anon"]))]
        # each bwssd against itself: its samples once it was INSTANCE_WARMUP_S old
        per = {}
        for s in self.samples:
            for pid, (r, a, f) in s["own"].items():
                if s["t"] >= warm and s["t"] + t0 - self.first_seen.get(pid, s["t"] + t0) >= INSTANCE_WARMUP_S:
                    per.setdefault(pid, []).append((r, a, f))
        for i, name in ((0, "RSS"), (1, "anonymous RSS")):
            worst = None
            for pid, v in per.items():
                if len(v) >= 2 * 60 // SAMPLE_S:          # two minutes of its life at least
                    sp = spread([x[i] for x in v])
                    if sp is not None and (worst is None or sp > worst[0]):
                        worst = (sp, pid, min(x[i] for x in v), max(x[i] for x in v), len(v))
            flat.append((worst is not None and worst[0] <= FLAT_SPREAD,
                         "each bwssd's own %s after its first %d s (%d processes of 2 minutes or more): the "
                         "largest spread %s" % (name, INSTANCE_WARMUP_S,
                                                sum(1 for v in per.values() if len(v) >= 2 * 60 // SAMPLE_S),
                                                "%.1f %% (pid %d, %d-%d over %d samples)" % (100 * worst[0], *worst[1:])
                                                if worst else "-")))
        self.verdicts[:0] = flat
        return rows

    def report(self, t0, rows, low):
        a = self.args
        try:
            commit = subprocess.run(["git", "-C", self.src, "describe", "--always", "--dirty"],
                                    stdout=subprocess.PIPE, text=True).stdout.strip()
        except OSError:
            commit = "?"
        cpu = "?"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // 1024
        L = []
        L.append("# Soak: %d minutes of churn on the control plane (generated by tests/bench/bench-soak.py)\n"
                 % round(a.duration / 60))
        L.append("- date: %s UTC (start)" % datetime.datetime.utcfromtimestamp(self.started_wall)
                 .strftime("%Y-%m-%d %H:%M"))
        L.append("- commit: %s" % commit)
        L.append("- machine: %s, %d cores (%s), %d MiB, kernel %s" %
                 (platform.node(), os.cpu_count(), cpu, mem, platform.release()))
        L.append("- command: `%s`" % " ".join(self.argv))
        L.append("- duration %d s, seed %d, a sample every %d s; warm-up %d s (and %d s of each bwssd's "
                 "life); bwssd killed about every %.0f s" %
                 (a.duration, a.seed, SAMPLE_S, a.warmup, INSTANCE_WARMUP_S, max(60.0, a.duration / 8)))
        L.append("")
        L.append("## Verdicts\n")
        for ok, text in self.verdicts:
            L.append("- %s %s" % ("**ok**" if ok else "**NOT OK**", text))
        L.append("- reader samples clamped below their connect's window by a live bwssd (the checks' teeth): "
                 "%d; readers clamped just before the end: %d" % (self.teeth, low))
        L.append("")
        L.append("## What happened\n")
        for k in sorted(self.counts):
            L.append("- %s: %d" % (k, self.counts[k]))
        L.append("")
        L.append("## Per minute\n")
        L.append("RSS (VmRSS), its anonymous part (RssAnon) and fds: bwssd's main process (summed over the "
                 "run's bwssd processes at a sample), median of the minute's samples; *judged*: the minute "
                 "counts in the per-minute verdicts (after the warm-up, from a bwssd at least %d s old).\n"
                 % INSTANCE_WARMUP_S)
        L.append("| minute | bwssd pids | samples (with a bwssd) | RSS kB | anon kB | fds | flows listed | judged |")
        L.append("|---|---|---|---|---|---|---|---|")

        def f(x):
            return "%.0f" % x if x is not None else "-"
        for r in rows:
            L.append("| %d | %s | %d (%d) | %s | %s | %s | %s | %s |" %
                     (r["m"], " ".join(map(str, r["pids"])) or "-", r["n"], r["nb"], f(r["rss"]), f(r["anon"]),
                      f(r["fds"]), f(r["flows"]), "yes" if r["judged"] else "no"))
        text = "\n".join(L) + "\n"
        if a.report:
            with open(a.report, "w") as f:
                f.write(text)
        sys.stdout.write(text)

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                self.signal_group(p, signal.SIGCONT)
                self.signal_group(p, signal.SIGKILL)
                p.wait()
        for pid in self.bwssd_pids():           # a client's bwssd (detached): ours by its domain
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        time.sleep(1)
        subprocess.run([self.bwssd, "--restore"], env=self.env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--duration", type=int, default=3600, help="seconds of churn (3600)")
    ap.add_argument("--warmup", type=int, default=None,
                    help="seconds left out of the verdict (default 300, 60 for runs under 10 minutes)")
    ap.add_argument("--report", help="write the Markdown report here too")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.warmup is None:
        a.warmup = 300 if a.duration >= 600 else 60
    s = Soak(a)
    s.argv = [os.path.relpath(sys.argv[0])] + sys.argv[1:]
    s.started_wall = time.time()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        s.setup()
        t0 = s.churn()
        low = s.finish()
        rows = s.judge(t0)
        s.report(t0, rows, low)
    finally:
        s.cleanup()
    return 0 if all(ok for ok, _ in s.verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
