#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A paced video source for the lab: one HTTP response per connection whose
body is produced at the stream rate in 1000-byte packets (the paper's video
source: 62 packets/s for 496 kbit/s), like a live encoder.  The rate can
drop for a window of time (Fig. 5c).  Production never waits for the
network: the socket's send buffer is large, so what TCP cannot carry yet
queues at the sender and arrives late, which is what the late-packet metric
measures.

  video-server.py --bind ADDR --port N --rate BPS [--low-rate BPS --low-from S --low-to S]
                  [--t0 MONOTONIC] [--packet 1000]
Times are seconds after --t0 (time.monotonic() of the run start).
"""
import argparse
import socket
import socketserver
import threading
import time

SNDBUF = 8 * 1024 * 1024   # never block the encoder on the network


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--bind", required=True)
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--rate", type=float, required=True, help="bit/s")
    p.add_argument("--low-rate", type=float, default=None)
    p.add_argument("--low-from", type=float, default=0.0)
    p.add_argument("--low-to", type=float, default=0.0)
    p.add_argument("--t0", type=float, default=None)
    p.add_argument("--packet", type=int, default=1000)
    return p.parse_args()


ARGS = parse_args()
T0 = ARGS.t0 if ARGS.t0 is not None else time.monotonic()


def rate_at(t):
    """Stream rate (bit/s) at run time t."""
    if ARGS.low_rate is not None and ARGS.low_from <= t < ARGS.low_to:
        return ARGS.low_rate
    return ARGS.rate


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock = self.request
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                return
            data += chunk
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\n"
                     b"Content-Length: 100000000000\r\nConnection: close\r\n\r\n")
        packet = bytes(ARGS.packet)
        owed = 0.0                     # bytes produced but not yet sent
        last = time.monotonic()
        tick = 0.005
        try:
            while True:
                now = time.monotonic()
                owed += rate_at(now - T0) / 8.0 * (now - last)
                last = now
                while owed >= ARGS.packet:
                    sock.sendall(packet)
                    owed -= ARGS.packet
                time.sleep(tick)
        except (BrokenPipeError, ConnectionResetError, OSError):
            return


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


if __name__ == "__main__":
    with Server((ARGS.bind, ARGS.port), Handler) as srv:
        srv.serve_forever()
