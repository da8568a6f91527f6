# SPDX-License-Identifier: LGPL-2.1-or-later
"""One run of one mode: the topology, the servers, the recorder, the clients
at t0, the cross traffic and BWSS's switch-on at their times, then a clean
stop.  What it leaves in out_dir: samples.txt (the recorder), domain.txt
(modes bwss*: the controller's σ, queue and phase, bwss-lab-domain), cross.json
(the UDP the link carried), delay.json (the delay stage's precision, and
as the bottleneck its own), link-trace.txt (with a link trace), tun.json
(what the kernel dropped on the way into the stage),
samples-host2.txt, host2-udp.json (its UDP) and, with host2=bwss, bwssd-host2.log and
bwss-top-host2.json (hosts=2), video-client.log, bwss-top.json and decisions.txt (modes bwss*: the
delay loop's decisions, bwssd's $BWSS_DECISIONS), access.log, player.json
(adaptive, progressive), ping.txt (ping_ms), run.json (when t0 was)."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from . import clients, hosts, linktrace, topology
from .proc import die, ns, program, remember, spawn, stop
from .scenario import BWSS_MODES
from .topology import NS_C, NS_S


def run_mode(sc, mode, build_dir, out_dir):
    """Runs scenario sc in mode; returns (t0 monotonic, seconds it took)."""
    t_setup = time.monotonic()
    wall_minus_mono = time.time() - time.monotonic()
    delay_stats = os.path.join(out_dir, "delay.json")
    if os.path.exists(delay_stats):
        os.unlink(delay_stats)
    trace_file = None
    pts = linktrace.points(sc)
    if pts:
        trace_file = os.path.join(out_dir, "link-trace.txt")
        linktrace.write(pts, trace_file)
    delay = topology.up(sc, build_dir, stats_file=delay_stats, quiet=True, mode=mode,
                        trace_file=trace_file)
    tun_setup = topology.tun_drops()     # what the set-up left in the counters: not the run's
    if mode == "ideal" and not sc.stage_bottleneck():
        topology.bottleneck_ideal(sc)
    work = tempfile.mkdtemp(prefix="bwss-lab-")
    os.chmod(work, 0o755)              # nginx's workers run as www-data
    domain = "bwsslab-%d" % os.getpid()
    decisions = os.path.join(out_dir, "decisions.txt")
    if os.path.exists(decisions):
        os.unlink(decisions)             # bwssd appends: an earlier try's are not this run's
    env = dict(os.environ, BWSS_DOMAIN=domain, BWSS_BWSSD=program(build_dir, "bwssd"),
               GST_PLUGIN_PATH=os.path.join(build_dir, "gst-plugin"), BWSS_DECISIONS=decisions)
    files = clients.domain_paths(build_dir, env)
    leftovers = (files["socket"], files["bwssd-lock"])
    for leftover in leftovers:
        if os.path.exists(leftover):
            os.unlink(leftover)
    procs, running = [], []              # running: [(client's name, process)]
    ended = {}                           # client's name -> how it ended before the run did
    try:
        t0 = time.monotonic() + 1.0
        procs = clients.start_servers(sc, work, t0, build_dir)
        sampler = spawn(NS_C, [program(build_dir, "bwss-lab-sample"), "--period", "50"],
                        out=os.path.join(out_dir, "samples.txt"), env=env)
        remember(sampler.pid)
        procs.append(sampler)
        if mode in BWSS_MODES:
            # the controller's σ, queue and phase (the baseline modes run no controller)
            reader = spawn(NS_C, [program(build_dir, "bwss-lab-domain"), "--period", "50", "--domain", domain],
                           out=os.path.join(out_dir, "domain.txt"), env=env)
            remember(reader.pid)
            procs.append(reader)
        cross_rx = clients.start_cross_receiver(sc, out_dir)
        if cross_rx:
            procs.append(cross_rx)
        if mode == "bwss-adopt":
            procs.append(clients.start_bwssd(sc, work, build_dir, env, out_dir))
        host2_procs, host2_env = hosts.start_before(sc, build_dir, work, out_dir, env, clients.start_bwssd)
        procs += host2_procs
        while time.monotonic() < t0:
            time.sleep(min(0.01, max(0.0, t0 - time.monotonic())))
        topology.start_trace(delay)                     # the stage's clock: t0
        if sc.ping_ms:
            # the queue a call would see: an echo every ping_ms to the video's
            # server, wall-clock stamped (-D), a missing answer said (-O)
            procs.append(spawn(NS_C, ["ping", "-D", "-O", "-n", "-i", "%g" % (sc.ping_ms / 1000.0),
                                      clients.VIDEO_ADDR], out=os.path.join(out_dir, "ping.txt")))
            remember(procs[-1].pid)
        if sc.video:
            running.append(("video", spawn(NS_C, clients.client_cmd(sc, mode, build_dir, "video", out_dir=out_dir),
                                           env=clients.client_env(sc, mode, env, "video"),
                                           out=os.path.join(out_dir, "video-client.log"))))
        for i in range(sc.bulk):
            running.append(("bulk%d" % (i + 1), spawn(NS_C, clients.client_cmd(sc, mode, build_dir, "bulk", i),
                                                      env=clients.client_env(sc, mode, env, "bulk"),
                                                      out=os.path.join(work, "bulk%d.out" % (i + 1)))))
        if sc.quic:
            time.sleep(0.3)           # the HTTP/3 server (Python) binds after the TCP ones
            running.append(("quic", spawn(NS_C, clients.quic_client_cmd(out_dir),
                                          out=os.path.join(work, "quic.out"))))
        for _, c in running:
            remember(c.pid)
        h2_from, h2_to = sc.host2_window()
        host2_on = host2_off = sc.hosts != 2
        host2_running = []
        bwss_top = program(build_dir, "bwss-top")
        switched_on = not (mode in BWSS_MODES and sc.bwss_on_at > 0)
        if not switched_on:
            suspend_when_there(bwss_top, domain)
        cross = None
        next_progress = 10
        while True:
            t = time.monotonic() - t0
            if t >= sc.duration:
                break
            if not host2_on and t >= h2_from:
                # the second machine's traffic: from host2_on's start
                host2_running, senders = hosts.start_clients(sc, work, host2_env, clients.bulk_download, NS_S)
                running += host2_running
                procs += senders
                host2_on = True
            if host2_on and not host2_off and t >= h2_to:
                # ... to its end: its downloads stopped as a user stops them
                for name, c in host2_running:
                    if c.poll() is None:
                        stop(c, signal.SIGINT)
                        ended[name] = {"exit": None, "stopped_at_s": round(t, 2)}
                host2_off = True
            if not switched_on and t >= sc.bwss_on_at:
                ns(NS_C, "env", "BWSS_DOMAIN=" + domain, bwss_top, "--resume")
                switched_on = True
            if sc.cross_kbps and cross is None and t >= sc.cross_start:
                cross = clients.start_cross_sender(sc, work)
                procs.append(cross)
            if t >= next_progress:
                print("  [%s/%s] %3d/%d s" % (sc.name, mode, t, sc.duration), flush=True)
                next_progress += 10
            for name, c in running:
                if name not in ended and c.poll() is not None:
                    # a client that ends on its own: its status is a result
                    # (a download bwss made fail is the worst outcome), the
                    # run goes on
                    ended[name] = {"exit": c.returncode, "at_s": round(t, 2)}
                    if c.returncode != 0:
                        print("  [%s/%s] client %s exited with status %d at %.1f s"
                              % (sc.name, mode, name, c.returncode, t), flush=True)
            time.sleep(0.2)
        if mode in BWSS_MODES:
            top = subprocess.run(["ip", "netns", "exec", NS_C, bwss_top, "--once", "--json"],
                                 capture_output=True, text=True, env=env)
            with open(os.path.join(out_dir, "bwss-top.json"), "w") as f:
                f.write(top.stdout or top.stderr)
        hosts.snapshot(sc, build_dir, host2_env, out_dir)
    finally:
        for _, c in running:
            stop(c, signal.SIGINT)
        for pr in procs:
            stop(pr)
        with open(os.path.join(out_dir, "tun.json"), "w") as f:
            json.dump(topology.tun_drops_since(tun_setup), f)
        topology.stop_delay_stage(delay)
        for name in ended:
            log = os.path.join(work, name + ".out")
            if ended[name].get("exit") not in (0, None) and os.path.exists(log):
                shutil.copy(log, os.path.join(out_dir, "client-%s.log" % name))
        for kept, name in (("access.log", "access.log"), ("video-server.out", "video-server.log")):
            if os.path.exists(os.path.join(work, kept)):
                shutil.copy(os.path.join(work, kept), os.path.join(out_dir, name))
        topology.down(quiet=True)
        for leftover in leftovers:
            if os.path.exists(leftover):
                os.unlink(leftover)
        if os.environ.get("BWSS_LAB_KEEP"):
            print("  (kept %s)" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(out_dir, "run.json"), "w") as f:
        # every client: how it ended before the run did (exit status and
        # when, or stopped by host2_on's schedule), or running at the end
        json.dump({"t0_wall": t0 + wall_minus_mono, "t0_monotonic": t0,
                   "clients": {name: ended.get(name, {"exit": None, "running_at_end": True})
                               for name, _ in running}}, f)
    return t0, time.monotonic() - t_setup


def suspend_when_there(bwss_top, domain):
    """Sharing off until bwss_on_at: the clients create the domain as they
    connect; suspend it as soon as it exists (the controller's release
    phase lasts longer than this takes)."""
    for _ in range(100):
        if ns(NS_C, "env", "BWSS_DOMAIN=" + domain, bwss_top, "--suspend", check=False) == 0:
            return
        time.sleep(0.05)
    die("could not suspend the domain (bwss-top --suspend)")
