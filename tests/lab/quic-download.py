#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""quic-download — the lab's QUIC download: an HTTP/3 server and client on
aioquic (a browser fetching from a CDN over HTTP/3, which bwss does not
control: a UDP socket has no TCP window to clamp).

  quic-download serve --bind ADDR --port PORT --cert PEM --key PEM [--cc cubic|reno]
  quic-download get --url https://ADDR:PORT/PATH --samples FILE [--period-ms 50]

serve answers every GET with an endless body of zeros (the download is cut
by the lab at the end of the run), sent as fast as its congestion control
allows: data is handed to the connection while less than SEND_AHEAD bytes
of the stream are unacknowledged, so the sender's own buffer never grows
without bound and what it sends is what the network takes.

get fetches the URL and every --period-ms writes "t_monotonic bytes" (the
body bytes received so far, CLOCK_MONOTONIC seconds: the clock of the
lab's recorder) to --samples, as the lab's recorder does for TCP sockets.
It exits 0 when the body ended, 1 on a connection error or a reset, and
with 128+SIGINT's number when the lab stops it.

aioquic is not a Debian package: the lab runs this with the Python of a
virtual environment that has it (docs/lab.md, "A QUIC download")."""
import argparse
import asyncio
import signal
import ssl
import sys
import time
from urllib.parse import urlparse

from aioquic.asyncio import serve
from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, ProtocolNegotiated, StreamReset

CHUNK = 16384                    # bytes handed to the stream at a time
SEND_AHEAD = 4 << 20             # unacknowledged bytes of a stream at most: 1.7 s at 20 Mbit/s
POLL_S = 0.002                   # how often a full sender looks again, s


class Server(QuicConnectionProtocol):
    """One connection of the server: an endless body per request."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._h3 = None

    def quic_event_received(self, event):
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            self._h3 = H3Connection(self._quic)
        if self._h3 is None:
            return
        for ev in self._h3.handle_event(event):
            if isinstance(ev, HeadersReceived):
                asyncio.ensure_future(self._body(ev.stream_id))

    async def _body(self, stream_id):
        self._h3.send_headers(stream_id, [(b":status", b"200"), (b"content-type", b"application/octet-stream")])
        self.transmit()
        zeros = bytes(CHUNK)
        while not self._quic._close_pending:
            sender = self._quic._streams[stream_id].sender
            if len(sender._buffer) >= SEND_AHEAD:       # wait for acknowledgements
                await asyncio.sleep(POLL_S)
                continue
            self._h3.send_data(stream_id, zeros, end_stream=False)
            self.transmit()
            await asyncio.sleep(0)


class Client(QuicConnectionProtocol):
    """The client's connection: counts the body's bytes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._h3 = H3Connection(self._quic)
        self.received = 0
        self.done = asyncio.get_event_loop().create_future()

    def quic_event_received(self, event):
        if isinstance(event, (ConnectionTerminated, StreamReset)) and not self.done.done():
            self.done.set_result(1)
        for ev in self._h3.handle_event(event):
            if isinstance(ev, DataReceived):
                self.received += len(ev.data)
                if ev.stream_ended and not self.done.done():
                    self.done.set_result(0)

    def get(self, authority, path):
        sid = self._quic.get_next_available_stream_id()
        self._h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"),
                                    (b":authority", authority.encode()), (b":path", path.encode())],
                              end_stream=True)
        self.transmit()


async def run_server(args):
    cfg = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN, congestion_control_algorithm=args.cc,
                            max_datagram_size=1350)
    cfg.load_cert_chain(args.cert, args.key)
    await serve(args.bind, args.port, configuration=cfg, create_protocol=Server)
    await asyncio.Future()


async def run_client(args):
    url = urlparse(args.url)
    cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, verify_mode=ssl.CERT_NONE,
                            max_datagram_size=1350)
    out = open(args.samples, "w", buffering=1)
    async with connect(url.hostname, url.port or 443, configuration=cfg, create_protocol=Client) as c:
        c.get(url.netloc, url.path or "/")
        while not c.done.done():
            out.write("%.6f %d\n" % (time.monotonic(), c.received))
            try:
                await asyncio.wait_for(asyncio.shield(c.done), args.period_ms / 1000.0)
            except asyncio.TimeoutError:
                pass
        out.write("%.6f %d\n" % (time.monotonic(), c.received))
        return c.done.result()


def main():
    ap = argparse.ArgumentParser(prog="quic-download")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--bind", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--cert", required=True)
    s.add_argument("--key", required=True)
    s.add_argument("--cc", default="cubic", choices=("cubic", "reno"))
    g = sub.add_parser("get")
    g.add_argument("--url", required=True)
    g.add_argument("--samples", required=True)
    g.add_argument("--period-ms", type=float, default=50.0)
    args = ap.parse_args()
    signal.signal(signal.SIGINT, lambda *a: sys.exit(128 + signal.SIGINT))
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(128 + signal.SIGTERM))
    if args.cmd == "serve":
        asyncio.run(run_server(args))
        return 0
    return asyncio.run(run_client(args))


if __name__ == "__main__":
    sys.exit(main())
