# SPDX-License-Identifier: LGPL-2.1-or-later
"""The servers of a run (nginx, the paced video source, iperf3) and the
command line and environment of every client in every mode."""
import os
import re
import shutil
import subprocess
import time

from .proc import die, ns, program, remember, spawn
from .scenario import BWSS_MODES
from .topology import (CLIENT_ADDR, CROSS_ADDR, NS_C, NS_S, QUIC_ADDR, QUIC_PORT, VIDEO_ADDR, VIDEO_PORT,
                       bulk_addr)

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BULK_FILE_BYTES = 8 << 30       # the sparse file every download fetches
# The Python that has aioquic (quic=1): a virtual environment, aioquic is not
# a Debian package (tests/deps/quic-venv.sh makes it)
QUIC_PYTHON = os.environ.get("BWSS_LAB_QUIC_PYTHON", "/opt/bwss-lab-quic/bin/python")
QUIC_TOOL = os.path.join(HERE, "quic-download.py")


def check_quic():
    """Whether the QUIC download can run: None, or why not."""
    if not os.access(QUIC_PYTHON, os.X_OK):
        return "quic=1 needs %s with aioquic (tests/deps/quic-venv.sh, or BWSS_LAB_QUIC_PYTHON)" % QUIC_PYTHON
    r = subprocess.run([QUIC_PYTHON, "-c", "import aioquic"], capture_output=True, text=True)
    if r.returncode != 0:
        return "quic=1: %s cannot import aioquic (tests/deps/quic-venv.sh)" % QUIC_PYTHON
    if shutil.which("openssl") is None:
        return "quic=1 needs openssl (its server's certificate)"
    return None


def start_quic_server(sc, work):
    """The HTTP/3 server of the QUIC download (a self-signed certificate made
    for the run: the client does not verify it)."""
    key, cert = os.path.join(work, "quic-key.pem"), os.path.join(work, "quic-cert.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=bwss-lab"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        die("cannot make the QUIC server's certificate: " + r.stderr.strip())
    p = spawn(NS_S, [QUIC_PYTHON, QUIC_TOOL, "serve", "--bind", QUIC_ADDR, "--port", str(QUIC_PORT),
                     "--cert", cert, "--key", key, "--cc", sc.quic_cc], out=os.path.join(work, "quic-server.out"))
    remember(p.pid)
    return p


def quic_client_cmd(out_dir):
    """The QUIC download's client: it records its body's bytes every 50 ms
    (quic-samples.txt; the recorder sees TCP sockets only)."""
    return [QUIC_PYTHON, QUIC_TOOL, "get", "--url", "https://%s:%d/bulk" % (QUIC_ADDR, QUIC_PORT),
            "--samples", os.path.join(out_dir, "quic-samples.txt")]


def start_servers(sc, work, t0, build_dir):
    """Starts nginx (bulk files, HLS content), the video source and the
    iperf3 server; returns their processes once they listen."""
    www = os.path.join(work, "www")
    os.makedirs(www, exist_ok=True)
    with open(os.path.join(www, "bulk.bin"), "wb") as f:
        f.truncate(BULK_FILE_BYTES)                       # sparse: 8 GiB of zeros
    conf = os.path.join(work, "nginx.conf")
    with open(conf, "w") as f:
        f.write("""worker_processes 1;
pid %(w)s/nginx.pid;
error_log %(w)s/nginx-error.log;
daemon off;
events { worker_connections 256; }
http {
  client_body_temp_path %(w)s/tmp; proxy_temp_path %(w)s/tmp; fastcgi_temp_path %(w)s/tmp;
  uwsgi_temp_path %(w)s/tmp; scgi_temp_path %(w)s/tmp;
  sendfile on;
  log_format lab '$msec $server_addr $request_uri $status $body_bytes_sent $request_time $request_method';
  access_log %(w)s/access.log lab;
  server { listen 80; root %(www)s; }
}
""" % {"w": work, "www": www})
    if sc.adaptive:
        # the HLS content is made once per parameter set and kept in the build dir
        length = int(sc.duration) + 60                    # the player buffers ahead
        cache = os.path.join(build_dir, "tests", "lab", "hls-content", "%s-s%g-l%d" % (
            "-".join(str(v) for v in sc.hls_variants), sc.hls_segment, length))
        r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make-hls"), "--variants",
                            ",".join(str(v) for v in sc.hls_variants), "--length", str(length),
                            "--segment", str(int(sc.hls_segment)), cache],
                           capture_output=True, text=True)
        if r.returncode != 0:
            die("cannot make the HLS content: " + r.stderr.strip())
        shutil.copytree(cache, os.path.join(www, "hls"))
    if sc.progressive:
        length = int(sc.duration) + 60                    # the player reads ahead
        cache = os.path.join(build_dir, "tests", "lab", "progressive-content",
                             "%d-l%d" % (sc.video_kbps, length))
        r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make-progressive"), "--kbps",
                            "%d" % sc.video_kbps, "--length", str(length), cache],
                           capture_output=True, text=True)
        if r.returncode != 0:
            die("cannot make the progressive clip: " + r.stderr.strip())
        shutil.copy(os.path.join(cache, "video.mp4"), os.path.join(www, "video.mp4"))
    os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
    procs = [spawn(NS_S, ["nginx", "-c", conf], out=os.path.join(work, "nginx.out"))]
    if sc.video and not sc.adaptive and not sc.progressive:
        cmd = ["/usr/bin/python3", os.path.join(HERE, "video-server.py"), "--bind", VIDEO_ADDR,
               "--port", str(VIDEO_PORT), "--rate", str(sc.video_kbps * 1000), "--t0", repr(t0)]
        if sc.video_low_kbps:
            cmd += ["--low-rate", str(sc.video_low_kbps * 1000), "--low-from",
                    str(sc.video_low_from), "--low-to", str(sc.video_low_to)]
        procs.append(spawn(NS_S, cmd, out=os.path.join(work, "video-server.out")))
    if sc.quic:
        procs.append(start_quic_server(sc, work))
    for pr in procs:
        remember(pr.pid)
    for _ in range(50):
        ok = ns(NS_C, "curl", "-sf", "-o", "/dev/null", "-r", "0-0", "http://%s/bulk.bin" % bulk_addr(0),
                check=False) == 0
        if ok and sc.video and not sc.adaptive and not sc.progressive:
            ok = ns(NS_S, "sh", "-c", "ss -ltn | grep -q :%d" % VIDEO_PORT, check=False) == 0
        if ok:
            return procs
        time.sleep(0.2)
    die("servers did not start (see %s)" % work)


def start_cross_receiver(sc, out_dir):
    """The UDP receiver in the client namespace: one test, its per-second
    report as JSON (the cross traffic the link carried)."""
    if not sc.cross_kbps:
        return None
    p = spawn(NS_C, ["iperf3", "-s", "-1", "-J", "-B", CLIENT_ADDR], out=os.path.join(out_dir, "cross.json"))
    remember(p.pid)
    return p


def start_cross_sender(sc, work):
    length = max(1, int(sc.cross_end - sc.cross_start))
    p = spawn(NS_S, ["iperf3", "-c", CLIENT_ADDR, "-u", "-b", "%dk" % sc.cross_kbps, "-t", str(length),
                     "-l", "1000", "-B", CROSS_ADDR], out=os.path.join(work, "iperf3-c.out"))
    remember(p.pid)
    return p


def client_env(sc, mode, base_env, kind):
    """The environment of a client: the domain and plug-in path; in mode
    bwss-paper the paper's loop.  Only where BWSS runs do the clients see the
    project's GStreamer plug-in (bwsshttpsrc and the bwss tracer): elsewhere
    the player and gst-launch play with souphttpsrc as on a machine without
    bwss installed, and no plug-in of ours is loaded, not even by the
    registry's scan (a baseline run then runs none of bwss's code:
    baseline.py)."""
    env = dict(base_env)
    if mode == "bwss-paper":
        env["BWSS_LOOP"] = "paper"
    else:
        env.pop("BWSS_LOOP", None)
    if mode not in BWSS_MODES:
        env.pop("GST_PLUGIN_PATH", None)
    return env


def client_cmd(sc, mode, build_dir, kind, i=0, out_dir=None):
    """The command line of one client (kind "video" or "bulk", bulk index i)."""
    bwss = mode in BWSS_MODES
    if kind == "video" and sc.adaptive:
        # nothing set for bwss: the player as an application is written
        return [program(build_dir, "bwss-lab-player"), "--pipeline", sc.player,
                "--duration", str(sc.duration), "--json", os.path.join(out_dir, "player.json"),
                "http://%s/hls/master.m3u8" % VIDEO_ADDR]
    if kind == "video" and sc.progressive:
        # a progressive-download site's player: playbin, a synced sink
        return [program(build_dir, "bwss-lab-player"), "--pipeline", sc.player,
                "--duration", str(sc.duration), "--json", os.path.join(out_dir, "player.json"),
                "http://%s/video.mp4" % VIDEO_ADDR]
    if kind == "video":
        url = "http://%s:%d/video" % (VIDEO_ADDR, VIDEO_PORT)
        base = ["curl", "-sSf", "-o", "/dev/null", url]
    else:
        base = bulk_download(sc, bulk_addr(i), i)
    if kind == "video" and sc.video_client == "gst":
        # the element: bwsshttpsrc registers itself; the baseline is
        # souphttpsrc, which it is drop-in for
        if bwss:
            # striping and connections only when set: an element without
            # them (before striping) refuses an unknown property
            stripes = (["striping=" + sc.video_striping] if sc.video_striping else []) + (
                ["connections=%d" % sc.video_connections] if sc.video_connections else [])
            return ["gst-launch-1.0", "-q", "bwsshttpsrc", "location=" + url,
                    "bitrate=%d" % (sc.video_kbps * 1000), "min-rate=%d" % (sc.video_min_kbps * 1000),
                    "weight=%g" % sc.video_weight] + stripes + ["!", "fakesink", "sync=false"]
        return ["gst-launch-1.0", "-q", "souphttpsrc", "location=" + url, "!", "fakesink", "sync=false"]
    if mode == "bwss-adopt" and kind == "bulk":
        return base                                       # bwssd adopts it
    if bwss:
        run = program(build_dir, "bwss-run")
        if kind == "video":
            return [run, "--priority", "10", "--min-rate", "%gk" % sc.video_min_kbps,
                    "--weight", "%g" % sc.video_weight, "--"] + base
        return [run, "--weight", "%g" % sc.bulk_weight(i), "--"] + base
    if mode == "trickle" and kind == "bulk":
        # the best static setting a user could pick: the link minus the video,
        # split by weight (trickle counts KB/s)
        left = max(8.0, sc.link_kbps - (sc.video_kbps if sc.video else 0))
        total = sum(sc.bulk_weight(j) for j in range(sc.bulk))
        share = left * sc.bulk_weight(i) / total
        return ["trickle", "-s", "-d", "%d" % max(1, int(share / 8))] + base
    return base


def bulk_download(sc, addr, i=0):
    """Bulk download i from the server at addr: one curl, or with
    bulk_conns=K (its value for download i: bulk_conns=8,1 gives the first
    eight connections, the others one) one curl fetching the file as K byte ranges over K parallel
    connections at once (--parallel-immediate: a connection each, as a
    download manager's "-x K" or a browser's parallel fetches), one process
    either way, so bwss-run or a bwssd rule gives its weight once."""
    url = "http://%s/bulk.bin" % addr
    k = sc.bulk_conns_of(i)
    if k <= 1:
        return ["curl", "-sSf", "-o", "/dev/null", url]
    cmd = ["curl", "--parallel", "--parallel-immediate", "--parallel-max", str(k)]
    part = BULK_FILE_BYTES // k
    for c in range(k):
        last = BULK_FILE_BYTES - 1 if c == k - 1 else (c + 1) * part - 1
        cmd += (["--next"] if c else []) + ["-sSf", "-r", "%d-%d" % (c * part, last), "-o", "/dev/null", url]
    return cmd


def adopt_rules(sc):
    """bwssd's rules file for mode bwss-adopt: one rule per bulk server
    (matched by its address) with that download's weight."""
    lines = ["# bwss-lab: mode bwss-adopt"]
    for i in range(sc.bulk):
        lines += ["", "[bulk%d]" % (i + 1), "remote-address=%s" % bulk_addr(i),
                  "weight=%g" % sc.bulk_weight(i)]
    return "\n".join(lines) + "\n"


def domain_paths(build_dir, env):
    """Where the files of the domain env names are (the user's runtime
    directory is the library's to say): {"socket": path, "bwssd-lock": path,
    "runtime-dir": path}."""
    out = subprocess.run([program(build_dir, "bwss-top"), "--paths"], env=env, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return dict(line.split(" ", 1) for line in out.splitlines())


def start_bwssd(sc, work, build_dir, env, out_dir, ns_name=NS_C, rules_text=None, tag=""):
    """Starts bwssd in the client namespace (mode bwss-adopt; or in ns_name
    with rules_text, the second machine's, files named with tag) and waits
    until it answers with its status; returns its process."""
    suffix = "-" + tag if tag else ""
    rules = os.path.join(work, "rules%s.conf" % suffix)
    with open(rules, "w") as f:
        f.write(rules_text if rules_text is not None else adopt_rules(sc))
    log = os.path.join(out_dir, "bwssd%s.log" % suffix)
    p = spawn(ns_name, [program(build_dir, "bwssd"), "--foreground",
                        "--rules", rules], env=env, out=log)
    remember(p.pid)
    for _ in range(100):
        top = subprocess.run([program(build_dir, "bwss-top"), "--once", "--json"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        if re.search(r'"bwssd_pid":[0-9]', top):
            return p
        time.sleep(0.05)
    die("bwssd did not start (see %s)" % log)
