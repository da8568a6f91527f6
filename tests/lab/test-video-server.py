#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The lab's video source (video-server.py) and the video over several
connections in the analysis, without a network namespace or root: the
production law (whole packets, the low window's integral, a backlog sent at
once), Range parsing; then the server itself on loopback: a plain GET as
before, ranges answered 206 with the right Content-Range on one timeline,
byte-exact, several on one kept-alive connection, no byte before it is
produced, bad requests refused with their reason and without setting the
origin; then load_samples() summing a video over two sockets, and the
analysis reading the source's log of requests.  (TAP output.)"""
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "video-server.py")
sys.path.insert(0, HERE)
from bwsslab import analysis  # noqa: E402
from bwsslab.scenario import SCENARIOS  # noqa: E402
from bwsslab.tap import Tap  # noqa: E402
from bwsslab.topology import VIDEO_ADDR, VIDEO_PORT  # noqa: E402

tap = Tap()
check = tap.check
spec = importlib.util.spec_from_file_location("video_server", SERVER)
vs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vs)

# ---- the laws ----
tl = vs.Timeline(8000, 100.0, packet=100)                   # 1000 bytes/s, 100-byte packets
check(tl.produced(100.0, 100.95) == 900 and tl.produced(100.0, 101.0) == 1000 and tl.produced(101.0, 100.0) == 0,
      "whole packets only: 0.95 s of 1000 B/s is 900 bytes, 1 s 1000: %d %d"
      % (tl.produced(100.0, 100.95), tl.produced(100.0, 101.0)))
low = vs.Timeline(8000, 100.0, packet=100, low_rate=0, low_from=1.0, low_to=2.0)
check(low.produced(100.0, 103.0) == 2000 and low.produced(101.0, 102.0) == 0
      and low.produced(101.5, 102.5) == 500 and low.rate_at(1.5) == 0 and low.rate_at(2.0) == 8000,
      "the low window: the rate's integral (3 s with 1 s at 0: 2000 bytes; 1.5–2.5 s: 500): %d %d"
      % (low.produced(100.0, 103.0), low.produced(101.5, 102.5)))
check(vs.sendable(0, 10000, 5000) == 5000 and vs.sendable(5000, 10000, 5000) == 0
      and vs.sendable(4000, 4500, 9000) == 500 and vs.sendable(7000, 9000, 5000) == 0,
      "a backlog goes at once, up to the range's end; nothing ahead of production")
check(vs.stream_bytes(300, 700) == vs.stream_bytes(0, 1000)[300:] and vs.stream_bytes(0, 3)[2] == 2
      and vs.stream_bytes(251, 1) == b"\x00", "the stream's bytes depend on their offset only (x mod 251)")
size = 1000
check(vs.parse_range("bytes=0-99", size) == (0, 99) and vs.parse_range("bytes=5-", size) == (5, 999)
      and vs.parse_range("bytes=900-5000", size) == (900, 999) and vs.parse_range("bytes=1000-", size)
      == "unsatisfiable", "Range: A-B, A- to the end, clipped at the end, unsatisfiable at or past it")
bad = []
for v in ("bytes=-5", "bytes=0-1,5-6", "bytes=9-3", "items=0-1", "bytes=a-b"):
    try:
        vs.parse_range(v, size)
    except ValueError as e:
        bad.append(str(e))
check(len(bad) == 5 and "ends before it starts" in bad[2] and "one byte range" in bad[0],
      "a suffix, several ranges, an end before the start, another unit, not numbers: refused, with why")


# ---- the server on loopback ----
def start(*extra):
    """The server on a free loopback port: (process, port, its log's path)."""
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    p = subprocess.Popen([sys.executable, SERVER, "--bind", "127.0.0.1", "--port", "0"] + list(extra),
                         stdout=log, stderr=subprocess.STDOUT)
    while p.poll() is None:
        with open(log.name) as f:
            first = f.readline()
        if first.startswith("listening "):
            return p, int(first.split(":")[-1]), log.name
        time.sleep(0.01)
    raise SystemExit("Bail out! video-server.py did not start: " + open(log.name).read())


def lines(path):
    with open(path) as f:
        return f.read().splitlines()


def recv_response(sock, buf=b""):
    """One response: (status line, {header: value}, body, the bytes after it)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("closed before a response")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    hl = head.decode().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in hl[1:])}
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return hl[0], headers, rest[:n], rest[n:]


def request(sock, head_lines):
    sock.sendall(("\r\n".join(head_lines) + "\r\n\r\n").encode())


RATE = 8e6                     # bit/s: 1 MB/s of stream
SIZE = 5_000_000
srv, port, log = start("--rate", "%d" % RATE, "--size", str(SIZE), "--t0", "%.6f" % time.monotonic())
try:
    c = socket.create_connection(("127.0.0.1", port))
    request(c, ["GET /video HTTP/1.1", "Host: x", "Range: bytes=-5"])
    st, h, body, _ = recv_response(c)
    c.close()
    check(st.startswith("HTTP/1.1 400") and b"one byte range" in body
          and not any(x.startswith("origin") for x in lines(log)),
          "a suffix range: 400 with its reason, and the origin not set: %s %r" % (st, body))
    c = socket.create_connection(("127.0.0.1", port))
    request(c, ["GET /video HTTP/1.1", "Host: x", "Range: bytes=%d-" % SIZE])
    st, h, body, _ = recv_response(c)
    c.close()
    check(st.startswith("HTTP/1.1 416") and h.get("content-range") == "bytes */%d" % SIZE
          and not any(x.startswith("origin") for x in lines(log)),
          "a range past the end: 416, Content-Range bytes */SIZE, the origin not set: %s %s"
          % (st, h.get("content-range")))
    c = socket.create_connection(("127.0.0.1", port))
    request(c, ["POST /video HTTP/1.1", "Host: x", "Content-Length: 0"])
    st, h, body, _ = recv_response(c)
    c.close()
    check(st.startswith("HTTP/1.1 405"), "POST: 405 (%s)" % st)

    c = socket.create_connection(("127.0.0.1", port))
    request(c, ["HEAD /video HTTP/1.1", "Host: x"])
    st, h, body, _ = recv_response(c)
    c.close()
    check(st.startswith("HTTP/1.1 200") and h.get("content-length") == str(SIZE)
          and h.get("accept-ranges") == "bytes" and body == b"",
          "HEAD: 200, the resource's length, Accept-Ranges: bytes, no body: %s" % h)
    check(not any(x.startswith("origin") for x in lines(log)), "a HEAD reads no stream: the origin not set")

    # ranges: one timeline from the origin, several on one connection
    c = socket.create_connection(("127.0.0.1", port))
    got = []
    buf = b""
    for a, b in ((0, 99_999), (100_000, 149_999), (400_000, 400_999)):
        request(c, ["GET /video HTTP/1.1", "Host: x", "Range: bytes=%d-%d" % (a, b)])
        st, h, body, buf = recv_response(c, buf)
        got.append((st, h, body, time.monotonic()))
    c.close()
    origin = [float(x.split()[1]) for x in lines(log) if x.startswith("origin")]
    first_get = [float(x.split()[0]) for x in lines(log) if x[:1].isdigit() and x.split()[2] == "GET"
                 and x.split()[4] in ("200", "206")]
    check(len(origin) == 1 and origin[0] == first_get[0],
          "the first answered GET set the origin, once (%s)" % origin)
    check(all(g[0].startswith("HTTP/1.1 206") for g in got)
          and [g[1].get("content-range") for g in got]
          == ["bytes 0-99999/%d" % SIZE, "bytes 100000-149999/%d" % SIZE, "bytes 400000-400999/%d" % SIZE]
          and [g[1].get("content-length") for g in got] == ["100000", "50000", "1000"],
          "three ranges on one kept-alive connection: 206, Content-Range and Content-Length each: %s"
          % [(g[1].get("content-range"), g[1].get("content-length")) for g in got])
    check(all(g[2] == vs.stream_bytes(a, b - a + 1) for g, (a, b) in
              zip(got, ((0, 99_999), (100_000, 149_999), (400_000, 400_999)))),
          "each range's body is the stream's bytes at its offsets")
    # byte 400999's packet is complete at origin + 8 × 401000 / RATE: not before
    # (less the log's 1-µs rounding of the origin)
    due = origin[0] + 8 * 401_000 / RATE - 1e-6
    check(got[2][3] >= due, "a range ahead of production arrives no earlier than its bytes are produced "
          "(%.3f s after the origin, produced at %.3f)" % (got[2][3] - origin[0], due - origin[0]))
    # a range on a second connection is on the same timeline, not its own
    c = socket.create_connection(("127.0.0.1", port))
    request(c, ["GET /video HTTP/1.1", "Host: x", "Range: bytes=450000-450999", "Connection: close"])
    st, h, body, _ = recv_response(c)
    closed = c.recv(1) == b""
    c.close()
    due = origin[0] + 8 * 451_000 / RATE - 1e-6
    check(st.startswith("HTTP/1.1 206") and body == vs.stream_bytes(450_000, 1000) and closed
          and time.monotonic() >= due,
          "a second connection's range: the same timeline and bytes; Connection: close honoured")

    # the plain GET as before: 200, the stream from this connection's start, then closed
    c = socket.create_connection(("127.0.0.1", port))
    request(c, ["GET /video HTTP/1.1", "Host: x"])
    buf = b""
    while b"\r\n\r\n" not in buf or len(buf.split(b"\r\n\r\n", 1)[1]) < 5000:
        buf += c.recv(65536)
    c.close()
    head, body = buf.split(b"\r\n\r\n", 1)
    check(head.startswith(b"HTTP/1.1 200") and b"Content-Length: %d" % SIZE in head
          and b"Connection: close" in head and body[:5000] == vs.stream_bytes(0, 5000),
          "a plain GET: 200, the resource's length, the stream from byte 0, Connection: close")
    logged = [x.split() for x in lines(log) if x[:1].isdigit()]
    check([x[4] for x in logged] == ["400", "416", "405", "200", "206", "206", "206", "206", "200"]
          and [x[3] for x in logged if x[4] == "206"] == ["0-99999", "100000-149999", "400000-400999",
                                                            "450000-450999"],
          "its log: every request, its range and status, in order")
    with tempfile.TemporaryDirectory() as d:
        with open(log) as f, open(os.path.join(d, "video-server.log"), "w") as g:
            g.write(f.read())
        first = float(next(x for x in logged if x[4] == "206")[0])
        asked = analysis.video_requests(d, first - 1.0)
        check(asked == {"plain": 1, "ranges": 4, "refused": 3, "range_ports": 2, "first_range_s": 1.0}
              and analysis.video_requests(os.path.join(d, "none"), 0) is None,
              "the analysis reads the log: 1 plain GET, 4 ranges over 2 connections, 3 refused: %s" % asked)
finally:
    srv.kill()
    srv.wait()
    os.unlink(log)

for argv in (["--rate", "0"], ["--rate", "1000", "--origin-at-t0"], ["--rate", "1000", "--size", "-1"]):
    r = subprocess.run([sys.executable, SERVER, "--bind", "127.0.0.1", "--port", "0"] + argv,
                       capture_output=True, text=True)
    why = (r.stderr.strip().splitlines() or [""])[-1][-80:]      # one line: a TAP description
    check(r.returncode == 2 and "error" in r.stderr, "%s: exits 2 with why: %s" % (" ".join(argv), why))

# ---- the video over two connections in the analysis ----
with tempfile.TemporaryDirectory() as d:
    sc = SCENARIOS["streaming"].with_sets(["duration=4", "measure_from=0", "bulk=0"])
    v = "%s:%d" % (VIDEO_ADDR, VIDEO_PORT)
    with open(os.path.join(d, "samples.txt"), "w") as f:
        # socket 11 alone in second 0, both in 1 and 2 (socket 12 from 1.5 s), 11 closing in 3
        f.write("100.5 %s 25000 11 40000\n" % v)
        f.write("101.5 %s 50000 11 40000\n101.5 %s 12500 12 40000\n" % (v, v))
        f.write("102.5 %s 75000 11 40000\n102.5 %s 37500 12 40000\n" % (v, v))
        f.write("103.5 %s 75100 0 40000\n103.5 %s 62500 12 40000\n" % (v, v))
    sockets = {}
    rate, qdelay, trace, _, _, conns, moved = analysis.load_samples(sc, d, 100.0, sockets=sockets)
    check([round(x) for x in rate["video"]] == [200, 300, 400, 200] and conns["video"] == 2,
          "the video's rate is the sum of its connections' each second: %s, %d connections"
          % (rate["video"], conns["video"]))
    check(sum(b for _, b in trace) == 75000 + 62500 and [round(t - 0, 1) for t, _ in trace] == [0.5, 1.5, 1.5, 2.5,
                                                                                                   2.5, 3.5]
          and len(moved["video"]) == 6 and len(qdelay["video"]) == 6,
          "its late-packet trace, progress and queue samples take every connection's bytes")
    check(analysis.video_connections(sockets.get("video"), sc, 0)
          == {"sockets": 2, "most_at_once": 2, "seconds_over_one": 2},
          "the video's connections: 2 sockets, 2 at once, 2 seconds with more than one moving: %s"
          % analysis.video_connections(sockets.get("video"), sc, 0))
    # a minimum of 300 kbit/s (270 at 0.9): the two seconds over two connections (300, 400) meet it,
    # the two over one (200, 200) do not
    split = analysis.video_connections(sockets.get("video"), sc.with_sets(["video_min_kbps=300"]), 0,
                                       rate["video"])
    check(split["at_min_over_one"] == [2, 2] and split["at_min_one"] == [0, 2],
          "at its minimum (300 kbit/s) in both seconds over two connections, neither of the two over one: %s"
          % split)
tap.done()
