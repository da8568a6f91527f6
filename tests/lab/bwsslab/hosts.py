# SPDX-License-Identifier: LGPL-2.1-or-later
"""The home side of the link with a second receiving machine (--set hosts=2):
a second PC on the same home router's LAN.  The router's client-side
interface r-c (where tbf/htb sit) then leads to a switch, a bridge in its own
namespace, with both machines on it: one access-link queue feeds both.

  bwsslab-r r-c ── h-r ┐
                       ├ br0 (bwsslab-h) ┬ h-c  ── c0 10.77.1.2  bwsslab-c  (host 1, the mode's)
                                         └ h-c2 ── c0 10.77.1.3  bwsslab-c2 (host 2)

The second machine has its own downloads (host2_bulk, weight 1 each, from
their own server addresses .31…, RTTs continuing rtt_bulk's list) and its own
recorder; host2=tcp runs them as plain curl, host2=bwss under a bwssd of its
own (its own runtime directory and domain) whose rules adopt them.  The mode
of the run is host 1's: the second machine is the neighbour whose software
the user does not choose.  With hosts=1 the client namespace sits on r-c
directly, as it always did."""
import json
import os
import subprocess
import time

from .proc import die, ns, program, remember, sh, spawn

NS_H, NS_C2 = "bwsslab-h", "bwsslab-c2"
CLIENT2_ADDR = "10.77.1.3"
HOST2_PREFIX = "host2-"         # the second machine's flows: host2-bulk1, …


def host2_addr(j):
    """The server address of the second machine's download j."""
    return "10.77.2.%d" % (31 + j)


UDP_NAME = HOST2_PREFIX + "udp"   # the second machine's inelastic UDP, a flow of the summary
UDP_ADDR = "10.77.2.41"          # ... and its server's address


def host2_flows(sc):
    """The second machine's downloads: [(name, server address, added RTT ms)]."""
    return [("%sbulk%d" % (HOST2_PREFIX, j + 1), host2_addr(j), sc.bulk_rtt(sc.bulk + j))
            for j in range(sc.host2_downloads())]


def host2_udp_flow(sc):
    """The second machine's UDP (name, server address, added RTT ms), None
    without it."""
    if not sc.host2_udp():
        return None
    return (UDP_NAME, UDP_ADDR, sc.bulk_rtt(sc.bulk + sc.host2_downloads()))


def host2_servers(sc):
    """Every server the second machine receives from: its downloads' and its
    UDP's (name, address, RTT)."""
    udp = host2_udp_flow(sc)
    return host2_flows(sc) + ([udp] if udp else [])


def host_of(name):
    """Which machine a flow of the summary is on (1 or 2)."""
    return 2 if name.startswith(HOST2_PREFIX) else 1


def namespaces():
    """The namespaces only hosts=2 makes (down() removes them always)."""
    return (NS_H, NS_C2)


def link_clients(sc, ns_c, ns_r):
    """Connects the client side: c0 in ns_c straight to r-c in ns_r, or with
    hosts=2 both machines through the home switch."""
    if sc.hosts != 2:
        sh("ip", "link", "add", "c0", "netns", ns_c, "type", "veth", "peer", "r-c", "netns", ns_r)
        return
    for n in (NS_H, NS_C2):
        sh("ip", "netns", "add", n)
        ns(n, "ip", "link", "set", "lo", "up")
    sh("ip", "link", "add", "h-r", "netns", NS_H, "type", "veth", "peer", "r-c", "netns", ns_r)
    sh("ip", "link", "add", "c0", "netns", ns_c, "type", "veth", "peer", "h-c", "netns", NS_H)
    sh("ip", "link", "add", "c0", "netns", NS_C2, "type", "veth", "peer", "h-c2", "netns", NS_H)
    ns(NS_H, "ip", "link", "add", "br0", "type", "bridge")
    for port in ("h-r", "h-c", "h-c2"):
        ns(NS_H, "ip", "link", "set", port, "master", "br0")
        ns(NS_H, "ip", "link", "set", port, "up")
    ns(NS_H, "ip", "link", "set", "br0", "up")
    ns(NS_C2, "ip", "addr", "add", CLIENT2_ADDR + "/24", "dev", "c0")
    ns(NS_C2, "ip", "link", "set", "c0", "up")
    ns(NS_C2, "ip", "route", "add", "default", "via", "10.77.1.1")


def check_up(sc, addr):
    """Waits until the second machine reaches addr (nothing with hosts=1)."""
    if sc.hosts != 2:
        return
    for _ in range(50):
        if ns(NS_C2, "ping", "-c1", "-W1", "-q", addr, check=False) == 0:
            return
        time.sleep(0.1)
    die("the second machine does not reach %s (the home switch is broken)" % addr)


def adopt_rules(sc):
    """The second machine's bwssd rules: each of its downloads by its
    server's address, weight 1."""
    lines = ["# bwss-lab: the second machine (host2=bwss)"]
    for name, addr, _ in host2_flows(sc):
        lines += ["", "[%s]" % name, "remote-address=%s" % addr, "weight=1"]
    return "\n".join(lines) + "\n"


def host2_env(base_env, work):
    """The second machine's environment: its own runtime directory (a
    directory of root's closed to others, as the session's tmpfs would be)
    and its own domain."""
    run = os.path.join(work, "host2-runtime")
    os.makedirs(run, mode=0o700, exist_ok=True)
    os.chmod(run, 0o700)
    return dict(base_env, XDG_RUNTIME_DIR=run, BWSS_DOMAIN="bwsslab-host2-%d" % os.getpid())


def start_before(sc, build_dir, work, out_dir, base_env, start_bwssd):
    """What the second machine runs before t0: its recorder (samples-host2.txt),
    with UDP its receiver (iperf3, one test, per-second report as JSON:
    host2-udp.json) and with host2=bwss its bwssd (start_bwssd:
    clients.start_bwssd).  Returns (processes, its environment)."""
    if sc.hosts != 2:
        return [], None
    env = host2_env(base_env, work)
    if "BWSS_DECISIONS" in env:
        # its bwssd's decisions, apart from this machine's
        env["BWSS_DECISIONS"] = os.path.join(out_dir, "decisions-host2.txt")
        if os.path.exists(env["BWSS_DECISIONS"]):
            os.unlink(env["BWSS_DECISIONS"])
    rec = spawn(NS_C2, [program(build_dir, "bwss-lab-sample"), "--period", "50"],
                out=os.path.join(out_dir, "samples-host2.txt"), env=env)
    remember(rec.pid)
    procs = [rec]
    if sc.host2_udp():
        rx = spawn(NS_C2, ["iperf3", "-s", "-1", "-J", "-B", CLIENT2_ADDR],
                   out=os.path.join(out_dir, "host2-udp.json"))
        remember(rx.pid)
        procs.append(rx)
    if sc.host2 == "bwss":
        procs.append(start_bwssd(sc, work, build_dir, env, out_dir, ns_name=NS_C2,
                                 rules_text=adopt_rules(sc), tag="host2"))
    return procs, env


def start_clients(sc, work, env, bulk_cmd, ns_s):
    """The second machine's traffic, at host2_on's start: its downloads
    (bulk_cmd: clients.bulk_download) and its UDP, sent from the server
    namespace ns_s until host2_on's end.  Returns ([(name, client
    process)], [the UDP sender, if any])."""
    out = []
    for name, addr, _ in host2_flows(sc):
        p = spawn(NS_C2, bulk_cmd(sc, addr), env=env, out=os.path.join(work, name + ".out"))
        remember(p.pid)
        out.append((name, p))
    senders = []
    if sc.host2_udp():
        a, b = sc.host2_window()
        p = spawn(ns_s, ["iperf3", "-c", CLIENT2_ADDR, "-u", "-b", "%dk" % sc.host2_udp(), "-t",
                         str(max(1, int(round(b - a)))), "-l", "1000", "-B", UDP_ADDR],
                  out=os.path.join(work, "host2-udp-sender.out"))
        remember(p.pid)
        senders.append(p)
    return out, senders


def load_udp(sc, out_dir):
    """The second machine's UDP per second of the run, kbit/s of payload
    (host2-udp.json, the receiver's report from host2_on's start), None
    without it."""
    if not sc.host2_udp():
        return None
    dur = int(sc.duration)
    rate = [0.0] * dur
    try:
        report = json.load(open(os.path.join(out_dir, "host2-udp.json")))
    except (OSError, ValueError):
        return rate
    start = sc.host2_window()[0]
    for iv in report.get("intervals", []):
        s = iv.get("sum", {})
        sec = int(start + s.get("start", 0.0))
        if 0 <= sec < dur:
            rate[sec] += s.get("bits_per_second", 0.0) / 1000.0 * (s.get("end", 1) - s.get("start", 0))
    return rate


def snapshot(sc, build_dir, env, out_dir):
    """With host2=bwss, its domain as bwss-top sees it (bwss-top-host2.json):
    that its flows were adopted."""
    if sc.hosts != 2 or sc.host2 != "bwss":
        return
    top = subprocess.run(["ip", "netns", "exec", NS_C2, program(build_dir, "bwss-top"), "--once",
                          "--json"], capture_output=True, text=True, env=env)
    with open(os.path.join(out_dir, "bwss-top-host2.json"), "w") as f:
        f.write(top.stdout or top.stderr)
