#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A paced video source for the lab, like a live encoder: a stream produced
at its rate in 1000-byte packets (the paper's video source: 62 packets/s for
496 kbit/s), whose rate can drop for a window of time (Fig. 5c).  Production
never waits for the network: the socket's send buffer is large, so what TCP
cannot carry yet queues at the sender and arrives late, which is what the
late-packet metric measures.

Two ways to read it:
  - a plain GET: one 200 response whose body is the stream produced from
    the connection's start (a live encoder's one response per viewer);
    the connection closes after it.
  - a GET with "Range: bytes=A-B" (or "A-"): 206 with bytes A..B of the
    stream's one timeline.  Byte x is produced once its packet is complete,
    at origin + 8·P·(⌊x/P⌋ + 1)/R for packet size P and rate R (with the
    low window, the rate's integral from the origin instead), the origin
    being the run's first answered GET (or --t0 with --origin-at-t0; a
    HEAD reads no stream and sets nothing).  What is produced by the time the request arrives goes
    out at once, the catch-up of a backlog; later bytes as they are
    produced.  The connection stays open for the next request (HTTP/1.1),
    as a server of stored video keeps it: a player reading ranges over a
    few connections reuses each.
HEAD answers a GET's headers.  The resource has a known length (--size
bytes: the plain GET's Content-Length, the total of every Content-Range),
so a client sees a seekable resource.  The stream's bytes are the same
whichever way they are read (byte x is x mod 251: a range served from the
wrong offset shows).  A range that starts at or past the end is 416; a
request it cannot read (several ranges, a suffix range, a range whose end
is before its start, a method other than GET or HEAD) gets 400 or 405 with
the reason in its body, and changes nothing (the origin is set by an
answered GET only).

Every request is a line on stdout, when it arrived:
  <monotonic s> <peer port> <method> <A-B|-> <status>
the origin, once set: "origin <monotonic s>"; first "listening ADDR:PORT"
(--port 0: a free port).

  video-server.py --bind ADDR --port N --rate BPS [--low-rate BPS --low-from S --low-to S]
                  [--t0 MONOTONIC] [--origin-at-t0] [--packet 1000] [--size BYTES]
Times are seconds after --t0 (time.monotonic() of the run start).
"""
import argparse
import re
import socket
import socketserver
import sys
import threading
import time

SNDBUF = 8 * 1024 * 1024       # never block the encoder on the network
TICK_S = 0.005                 # how often a response sends what was produced since
SIZE = 100 * 1000 ** 3         # bytes: the resource's length (at 20 Mbit/s, 11 hours of stream)
PATTERN_PERIOD = 251           # byte x of the stream is x mod 251 (a prime: no packet-sized period)
HEADER_MAX = 16 * 1024         # bytes: a request's head larger than this ends the connection
RANGE_RE = re.compile(r"^bytes=([0-9]+)-([0-9]*)$")


class Timeline:
    """The stream's production: rate R bit/s, R_low in [low_from, low_to)
    of run time (seconds after t0), packets of P bytes."""

    def __init__(self, rate, t0, packet=1000, low_rate=None, low_from=0.0, low_to=0.0):
        self.rate, self.t0, self.packet = float(rate), float(t0), int(packet)
        self.low_rate, self.low_from, self.low_to = low_rate, float(low_from), float(low_to)

    def rate_at(self, t):
        """The stream rate (bit/s) at run time t."""
        if self.low_rate is not None and self.low_from <= t < self.low_to:
            return self.low_rate
        return self.rate

    def _bits(self, t):
        """∫ rate from run time 0 to t, bits (negative before 0)."""
        bits = self.rate * t
        if self.low_rate is not None:
            bits += (self.low_rate - self.rate) * max(0.0, min(t, self.low_to) - self.low_from)
        return bits

    def produced(self, start, now):
        """Bytes of whole packets produced from monotonic time start to now."""
        if now <= start:
            return 0
        b = (self._bits(now - self.t0) - self._bits(start - self.t0)) / 8.0
        return int(b // self.packet) * self.packet


def sendable(cursor, end, produced):
    """Of a response at stream offset cursor whose last byte is end - 1,
    the bytes that may go now: every byte produced and not yet sent, the
    whole backlog at once (a live source holds nothing back)."""
    return max(0, min(end, produced) - cursor)


def stream_bytes(offset, n):
    """The stream's bytes [offset, offset + n)."""
    k = offset % PATTERN_PERIOD
    reps = (k + n) // PATTERN_PERIOD + 1
    return (bytes(range(PATTERN_PERIOD)) * reps)[k:k + n]


def parse_range(value, size):
    """A Range header's value → (first, last) byte, inclusive, clipped to
    size; "unsatisfiable" if it starts at or past the end; raises
    ValueError with the reason for what this source does not read."""
    m = RANGE_RE.match(value.replace(" ", ""))
    if not m:
        raise ValueError("one byte range \"bytes=A-B\" or \"bytes=A-\" per request (got %r)" % value)
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) else size - 1
    if m.group(2) and last < first:
        raise ValueError("the range ends before it starts (%r)" % value)
    if first >= size:
        return "unsatisfiable"
    return first, min(last, size - 1)


class Source:
    """The run's one stream: its timeline and origin (set by the first
    answered GET), shared by every connection."""

    def __init__(self, timeline, size, origin=None, out=sys.stdout):
        self.timeline, self.size, self.origin, self.out = timeline, size, origin, out
        self.lock = threading.Lock()

    def start(self, now):
        """The origin, set at now by the first answered GET."""
        with self.lock:
            if self.origin is None:
                self.origin = now
                self.say("origin %.6f" % now)
            return self.origin

    def say(self, line):
        self.out.write(line + "\n")
        self.out.flush()


def read_head(sock, buf):
    """Reads one request's head: (request line, {header: value}, the bytes
    after it) or None at the connection's end."""
    while b"\r\n\r\n" not in buf:
        if len(buf) > HEADER_MAX:
            return None
        chunk = sock.recv(4096)
        if not chunk:
            return None
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return lines[0], headers, rest


def send_stream(sock, timeline, start, first, end):
    """Sends the stream's bytes [first, end) as they are produced from
    monotonic time start (the origin, or the connection's start)."""
    cursor = first
    while cursor < end:
        n = sendable(cursor, end, timeline.produced(start, time.monotonic()))
        if n:
            sock.sendall(stream_bytes(cursor, n))
            cursor += n
        else:
            time.sleep(TICK_S)


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock, src = self.request, self.server.source
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        port = self.client_address[1]
        buf = b""
        try:
            while True:
                req = read_head(sock, buf)
                if req is None:
                    return
                line, headers, buf = req
                if not self.answer(sock, src, port, line, headers):
                    return
        except (BrokenPipeError, ConnectionResetError, OSError):
            return

    def refuse(self, sock, now, port, method, status, reason):
        self.server.source.say("%.6f %d %s - %s" % (now, port, method or "?", status.split()[0]))
        body = (reason + "\n").encode()
        extra = "Content-Range: bytes */%d\r\n" % self.server.source.size if status.startswith("416") else ""
        sock.sendall(("HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s"
                      "Connection: close\r\n\r\n" % (status, len(body), extra)).encode() + body)
        return False

    def answer(self, sock, src, port, line, headers):
        """Answers one request; returns whether the connection takes another."""
        now = time.monotonic()
        parts = line.split()
        method = parts[0] if parts else ""
        if method not in ("GET", "HEAD"):
            return self.refuse(sock, now, port, method, "405 Method Not Allowed", "GET or HEAD only")
        want = headers.get("range")
        if want is None:
            if method == "GET":
                src.start(now)
            src.say("%.6f %d %s - 200" % (now, port, method))
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nAccept-Ranges: bytes\r\n"
                         b"Content-Length: %d\r\nConnection: close\r\n\r\n" % src.size)
            if method == "GET":
                # a live encoder's one response: the stream from this connection's start
                send_stream(sock, src.timeline, now, 0, src.size)
            return False
        try:
            got = parse_range(want, src.size)
        except ValueError as e:
            return self.refuse(sock, now, port, method, "400 Bad Request", str(e))
        if got == "unsatisfiable":
            return self.refuse(sock, now, port, method, "416 Range Not Satisfiable",
                               "the stream has %d bytes (got %r)" % (src.size, want))
        first, last = got
        origin = src.start(now) if method == "GET" else None
        src.say("%.6f %d %s %d-%d 206" % (now, port, method, first, last))
        close = "close" in headers.get("connection", "").lower()
        sock.sendall(("HTTP/1.1 206 Partial Content\r\nContent-Type: video/mp2t\r\nAccept-Ranges: bytes\r\n"
                      "Content-Range: bytes %d-%d/%d\r\nContent-Length: %d\r\n%s\r\n"
                      % (first, last, src.size, last - first + 1,
                         "Connection: close\r\n" if close else "")).encode())
        if method == "GET":
            send_stream(sock, src.timeline, origin, first, last + 1)
        return not close


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--bind", required=True)
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--rate", type=float, required=True, help="bit/s")
    p.add_argument("--low-rate", type=float, default=None)
    p.add_argument("--low-from", type=float, default=0.0)
    p.add_argument("--low-to", type=float, default=0.0)
    p.add_argument("--t0", type=float, default=None)
    p.add_argument("--origin-at-t0", action="store_true",
                   help="the ranges' timeline starts at --t0, not at the first request")
    p.add_argument("--packet", type=int, default=1000)
    p.add_argument("--size", type=int, default=SIZE, help="the resource's length, bytes")
    a = p.parse_args(argv)
    if a.rate <= 0 or a.packet <= 0 or a.size <= 0 or (a.low_rate is not None and a.low_rate < 0):
        p.error("--rate, --packet and --size must be positive, --low-rate not negative")
    if a.origin_at_t0 and a.t0 is None:
        p.error("--origin-at-t0 needs --t0")
    return a


def main(argv=None):
    a = parse_args(argv)
    t0 = a.t0 if a.t0 is not None else time.monotonic()
    timeline = Timeline(a.rate, t0, a.packet, a.low_rate, a.low_from, a.low_to)
    with Server((a.bind, a.port), Handler) as srv:
        srv.source = Source(timeline, a.size, t0 if a.origin_at_t0 else None)
        srv.source.say("listening %s:%d" % srv.server_address[:2])
        srv.serve_forever()


if __name__ == "__main__":
    main()
