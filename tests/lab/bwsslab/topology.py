# SPDX-License-Identifier: LGPL-2.1-or-later
"""The emulated access link: three namespaces, the delay stage between two
TUN devices on the router, and the bottleneck: the tbf/htb qdisc on the
router's client-side interface, or, with an AQM or a link trace
(Scenario.stage_bottleneck), the delay stage itself in the server → client
direction.

  bwsslab-c  c0 10.77.1.2 ── r-c 10.77.1.1  bwsslab-r  r-s 10.77.2.1 ── s0 10.77.2.x  bwsslab-s
  (client: the receiver)      tbf/htb on r-c egress      (servers: video .10, bulk .11…,
                              dly-c ⇄ bwss-delay ⇄ dly-s   cross traffic .50)

With hosts=2 a home switch sits between r-c and two client machines
(hosts.py).
"""
import json
import os
import signal
import subprocess
import time

from . import hosts
from .proc import STATE_DIR, die, ns, program, remember, sh, spawn

NS_C, NS_R, NS_S = "bwsslab-c", "bwsslab-r", "bwsslab-s"
CLIENT_ADDR = "10.77.1.2"
VIDEO_ADDR = "10.77.2.10"
CROSS_ADDR = "10.77.2.50"
QUIC_ADDR = "10.77.2.21"       # the QUIC download's server (quic=1)
QUIC_PORT = 4433
VIDEO_PORT = 8000
MAX_BULK = 16
TUN_RING = 20000               # packets the kernel may hand the stage at once


def bulk_addr(i):
    return "10.77.2.%d" % (11 + i)


def quic_rtt(sc):
    """The QUIC download's added RTT, ms: the next of rtt_bulk's list after
    this machine's downloads (the last value repeats)."""
    return sc.bulk_rtt(sc.bulk)


def down(quiet=False):
    """Removes everything the lab made; safe to call any time."""
    pidfile = os.path.join(STATE_DIR, "pids")
    if os.path.exists(pidfile):
        for line in open(pidfile):
            try:
                os.killpg(int(line), signal.SIGKILL)
            except (ProcessLookupError, ValueError, PermissionError):
                pass
        os.unlink(pidfile)
    for n in (NS_C, NS_R, NS_S) + hosts.namespaces():
        r = subprocess.run(["ip", "netns", "pids", n], capture_output=True, text=True)
        for pid in r.stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        sh("ip", "netns", "del", n, check=False)
    if not quiet:
        print("lab down")


def bottleneck_tbf(sc):
    """tbf at the link rate with a buffer of queue_ms (modes tcp, bwss*, trickle)."""
    link = sc.link_kbps
    burst = max(3000, int(link * 1000 / 8 / 100))       # 10 ms of the link, at least 2 MTU
    ns(NS_R, "tc", "qdisc", "replace", "dev", "r-c", "root", "tbf", "rate", "%dkbit" % link,
       "burst", str(burst), "latency", "%dms" % sc.queue_ms)


def ideal_video_class_kbps(sc):
    """The rate the ideal router guarantees the video's class, kbit/s: its
    minimum and 10 % for TCP/IP headers, at most the link."""
    return min(sc.video_min_kbps * 1.1, sc.link_kbps)


def bottleneck_ideal(sc):
    """HTB: the video's class is served first (prio 0) with its minimum
    guaranteed; everything else shares what is left.  The router knows the
    true capacity: the physical limit of what a receiver could hope for."""
    link = sc.link_kbps
    vid = ideal_video_class_kbps(sc)
    qbytes = max(3000, int(link * 1000 / 8 * sc.queue_ms / 1000))
    r = ["ip", "netns", "exec", NS_R, "tc"]
    sh(*r, "qdisc", "del", "dev", "r-c", "root", check=False)
    sh(*r, "qdisc", "add", "dev", "r-c", "root", "handle", "1:", "htb", "default", "20")
    sh(*r, "class", "add", "dev", "r-c", "parent", "1:", "classid", "1:1", "htb",
       "rate", "%dkbit" % link, "ceil", "%dkbit" % link)
    sh(*r, "class", "add", "dev", "r-c", "parent", "1:1", "classid", "1:10", "htb",
       "rate", "%dkbit" % int(vid), "ceil", "%dkbit" % link, "prio", "0")
    sh(*r, "class", "add", "dev", "r-c", "parent", "1:1", "classid", "1:20", "htb",
       "rate", "%dkbit" % max(8, int(link - vid)), "ceil", "%dkbit" % link, "prio", "1")
    for c in ("10", "20"):
        sh(*r, "qdisc", "add", "dev", "r-c", "parent", "1:" + c, "bfifo", "limit", str(qbytes))
    sh(*r, "filter", "add", "dev", "r-c", "parent", "1:", "protocol", "ip", "prio", "1", "u32",
       "match", "ip", "src", VIDEO_ADDR + "/32", "flowid", "1:10")


CC_AVAILABLE = "/proc/sys/net/ipv4/tcp_available_congestion_control"
CC_ALLOWED = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"


def set_sender_cc(cc):
    """Sets the servers' congestion control.  A namespace other than the
    host's may only pick one of the host's allowed list, so cc is added to
    that list first if it is missing (a host setting, left in place: it only
    permits a choice)."""
    try:
        available = open(CC_AVAILABLE).read().split()
        allowed = open(CC_ALLOWED).read().split()
    except OSError as e:
        die("cannot read the congestion controls: %s" % e)
    if cc not in available:
        down(quiet=True)
        die("the kernel has no congestion control '%s' (it has: %s)" % (cc, " ".join(available)), 2)
    if cc not in allowed:
        # only the host's own network namespace can write the list (elsewhere
        # the write fails, and sysctl(8) still exits 0): read it back
        sh("sysctl", "-qw", "net.ipv4.tcp_allowed_congestion_control=" + " ".join(allowed + [cc]))
        if cc not in open(CC_ALLOWED).read().split():
            down(quiet=True)
            die("cannot allow the servers' congestion control '%s': the host's list is '%s', and only "
                "the host's network namespace can add to it (from there: sysctl -w "
                "net.ipv4.tcp_allowed_congestion_control='%s')" % (cc, " ".join(allowed), " ".join(allowed + [cc])))
    ns(NS_S, "sysctl", "-qw", "net.ipv4.tcp_congestion_control=" + cc)


def stage_args(sc, mode, trace_file):
    """The delay stage's options that make it the bottleneck (none when the
    kernel's tbf/htb is)."""
    if not sc.stage_bottleneck():
        return []
    args = ["--bottleneck", sc.bottleneck, "--rate-kbps", "%g" % sc.link_kbps,
            "--queue-ms", "%g" % sc.queue_ms]
    if trace_file:
        args += ["--trace", trace_file]
    if mode == "ideal" and sc.video:
        args += ["--priority", VIDEO_ADDR]        # strict priority, the same queue in each class
    return args


def start_trace(proc):
    """Starts the stage's trace clock (SIGUSR1): the run's t0."""
    if proc is not None and proc.poll() is None:
        os.kill(proc.pid, signal.SIGUSR1)


def tun_drops():
    """Packets the kernel dropped on the way into the stage, per TUN device:
    its tx_dropped (the driver's: a full ring, no reader attached, a
    segmentation or checksum the kernel could not do) and its qdisc's
    drops (a full qdisc), kept apart to tell where a drop happened; None
    where they could not be read."""
    out = {}
    for dev in ("dly-c", "dly-s"):
        r = subprocess.run(["ip", "-n", NS_R, "-s", "-j", "link", "show", dev],
                           capture_output=True, text=True)
        q = subprocess.run(["tc", "-n", NS_R, "-s", "-j", "qdisc", "show", "dev", dev],
                           capture_output=True, text=True)
        try:
            out[dev] = {"tx_dropped": json.loads(r.stdout)[0]["stats64"]["tx"]["dropped"],
                        "qdisc_drops": sum(x.get("drops", 0) for x in json.loads(q.stdout))}
        except (ValueError, LookupError, TypeError):
            out[dev] = None
    return out


def tun_drops_since(setup):
    """tun_drops() less the counts @setup (taken once the path answered):
    the drops of the run, per device, and "setup" the counts before it."""
    now = tun_drops()
    out = {}
    for dev, counts in now.items():
        base = (setup or {}).get(dev)
        out[dev] = None if counts is None or base is None else {k: counts[k] - base[k] for k in counts}
    out["setup"] = setup
    return out


def wait_attached(proc):
    """Waits until the stage has attached both TUNs (their carrier is on):
    until then the kernel drops whatever is routed to them — the path's
    first ping would be lost and counted in the TUN's tx_dropped, a drop
    on the way into the stage (docs/lab.md, "The TUN drop, found")."""
    for _ in range(1000):
        r = subprocess.run(["ip", "-n", NS_R, "-j", "link", "show"], capture_output=True, text=True)
        try:
            up = {d["ifname"]: "LOWER_UP" in d.get("flags", []) for d in json.loads(r.stdout)}
        except (ValueError, LookupError, TypeError):
            up = {}
        if up.get("dly-c") and up.get("dly-s"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.01)
    log = open(os.path.join(STATE_DIR, "bwss-delay.log")).read().strip()
    down(quiet=True)
    die("the delay stage did not attach its TUN devices%s" % (": " + log if log else ""))


def up(sc, build_dir, stats_file=None, quiet=False, mode=None, trace_file=None):
    """Builds the topology for scenario sc in mode; the delay stage writes
    its statistics to stats_file when it stops and follows trace_file (a
    link trace written by linktrace.write) once start_trace() is called."""
    if os.geteuid() != 0:
        die("needs root (network namespaces)")
    delay = program(build_dir, "bwss-delay")
    if not os.access(delay, os.X_OK):
        die("%s not built (meson compile -C %s)" % (delay, build_dir))
    if sc.bulk > MAX_BULK:
        die("at most %d bulk flows" % MAX_BULK, 2)
    down(quiet=True)
    for n in (NS_C, NS_R, NS_S):
        sh("ip", "netns", "add", n)
        ns(n, "ip", "link", "set", "lo", "up")
    hosts.link_clients(sc, NS_C, NS_R)                  # c0 -- r-c, or the home switch (hosts=2)
    sh("ip", "link", "add", "s0", "netns", NS_S, "type", "veth", "peer", "r-s", "netns", NS_R)
    ns(NS_C, "ip", "addr", "add", CLIENT_ADDR + "/24", "dev", "c0")
    ns(NS_C, "ip", "link", "set", "c0", "up")
    ns(NS_C, "ip", "route", "add", "default", "via", "10.77.1.1")
    if sc.bulk_initrwnd:
        # the first window a bulk server may send: its route's initrwnd bounds
        # the window the SYN offers, and the scale stays the kernel's
        for i in range(sc.bulk):
            ns(NS_C, "ip", "route", "add", bulk_addr(i) + "/32", "via", "10.77.1.1",
               "initrwnd", str(sc.bulk_initrwnd))
    ns(NS_S, "ip", "addr", "add", "10.77.2.2/24", "dev", "s0")
    for a in ([VIDEO_ADDR, CROSS_ADDR, QUIC_ADDR] + [bulk_addr(i) for i in range(max(8, sc.bulk))]
              + [a for _, a, _ in hosts.host2_servers(sc)]):
        ns(NS_S, "ip", "addr", "add", a + "/32", "dev", "s0")
    ns(NS_S, "ip", "link", "set", "s0", "up")
    ns(NS_S, "ip", "route", "add", "default", "via", "10.77.2.1")
    set_sender_cc(sc.sender_cc)
    # the router: both veths, two TUNs, policy routing through the delay stage
    ns(NS_R, "ip", "addr", "add", "10.77.1.1/24", "dev", "r-c")
    ns(NS_R, "ip", "addr", "add", "10.77.2.1/24", "dev", "r-s")
    for d in ("r-c", "r-s"):
        ns(NS_R, "ip", "link", "set", d, "up")
    for t in ("dly-c", "dly-s"):
        ns(NS_R, "ip", "tuntap", "add", "dev", t, "mode", "tun", "vnet_hdr")
        ns(NS_R, "ip", "link", "set", t, "up")
        if sc.stage_bottleneck():
            # MTU packets, not super-packets, as the bottleneck: a sender's
            # burst must fit the TUN's ring until the stage reads it
            ns(NS_R, "ip", "link", "set", t, "txqueuelen", str(TUN_RING))
    ns(NS_R, "sysctl", "-qw", "net.ipv4.ip_forward=1")
    for key in ("all", "default", "r-c", "r-s", "dly-c", "dly-s"):
        ns(NS_R, "sysctl", "-qw", "net.ipv4.conf.%s.rp_filter=0" % key)
    ns(NS_R, "ip", "rule", "add", "iif", "r-c", "lookup", "100")
    ns(NS_R, "ip", "route", "add", "default", "dev", "dly-c", "table", "100")
    ns(NS_R, "ip", "rule", "add", "iif", "r-s", "lookup", "101")
    ns(NS_R, "ip", "route", "add", "default", "dev", "dly-s", "table", "101")
    args = [delay, "--client-tun", "dly-c", "--server-tun", "dly-s", "--default-ms", "0",
            "--delay", "%s=%g" % (VIDEO_ADDR, sc.rtt_video / 2.0),
            "--delay", "%s=%g" % (CROSS_ADDR, sc.rtt_cross / 2.0),
            "--delay", "%s=%g" % (QUIC_ADDR, quic_rtt(sc) / 2.0)]
    for i in range(sc.bulk):
        args += ["--delay", "%s=%g" % (bulk_addr(i), sc.bulk_rtt(i) / 2.0)]
    for _, addr, rtt in hosts.host2_servers(sc):
        args += ["--delay", "%s=%g" % (addr, rtt / 2.0)]
    if stats_file:
        args += ["--stats", stats_file]
    args += stage_args(sc, mode, trace_file)
    if sc.stage_realtime:
        # the delay stage is a link too (its delays are the paths' RTTs):
        # under SCHED_OTHER on a loaded machine its releases came 4 ms late
        args += ["--realtime", str(sc.stage_realtime)]
    os.makedirs(STATE_DIR, exist_ok=True)
    proc = spawn(NS_R, args, out=os.path.join(STATE_DIR, "bwss-delay.log"))
    remember(proc.pid)
    wait_attached(proc)
    if not sc.stage_bottleneck():
        bottleneck_tbf(sc)
    for _ in range(50):
        if ns(NS_C, "ping", "-c1", "-W1", "-q", VIDEO_ADDR, check=False) == 0:
            break
        time.sleep(0.1)
    else:
        log = open(os.path.join(STATE_DIR, "bwss-delay.log")).read().strip()
        down(quiet=True)
        die("the lab path does not answer (delay stage or routing broken)%s" % (": " + log if log else ""))
    hosts.check_up(sc, VIDEO_ADDR)
    if not quiet:
        print("CLIENT_NS=%s\nROUTER_NS=%s\nSERVER_NS=%s" % (NS_C, NS_R, NS_S))
        print("CLIENT_ADDR=%s\nSERVER_ADDR_VIDEO=%s\nSERVER_ADDR_CROSS=%s" % (CLIENT_ADDR, VIDEO_ADDR, CROSS_ADDR))
        for i in range(sc.bulk):
            print("SERVER_ADDR_BULK%d=%s" % (i + 1, bulk_addr(i)))
        if sc.hosts == 2:
            print("CLIENT2_NS=%s\nCLIENT2_ADDR=%s\nHOME_NS=%s" % (hosts.NS_C2, hosts.CLIENT2_ADDR, hosts.NS_H))
            for j, (_, addr, _) in enumerate(hosts.host2_flows(sc)):
                print("SERVER_ADDR_HOST2_BULK%d=%s" % (j + 1, addr))
        if sc.stage_bottleneck():
            print("BOTTLENECK=%s:bwss-delay(%s%s) LINK_KBPS=%d QUEUE_MS=%d" % (
                NS_R, sc.bottleneck, ", trace " + sc.link_trace if sc.link_trace else "",
                sc.link_kbps, sc.queue_ms))
        else:
            print("BOTTLENECK=%s:r-c LINK_KBPS=%d QUEUE_MS=%d" % (NS_R, sc.link_kbps, sc.queue_ms))
    return proc


def stop_delay_stage(proc):
    """Stops the delay stage so it writes its statistics."""
    if proc is not None and proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
