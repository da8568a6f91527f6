#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""burst.py N GO DONE — a program that opens N loopback connections at once,
for bwssd's burst test, run under bwss-run.  It connects them all, prints
"connected PID CONN" (CONN: the inodes of its SOCK_SEQPACKET Unix sockets,
which under bwss-run is the preload shim's connection to bwssd), waits for
the file GO, then has 100 bytes sent on every connection and reads them:
each first read is where the shim hands that connection to bwssd, so the
hand-overs come as one burst.  It prints "read", waits for the file DONE,
prints "still CONN" (the same look again) and closes everything.  While it
waits it sits in select() as an event loop at rest does: a call the shim's
hooks see, so the shim sends what it still has for bwssd."""
import os
import select
import socket
import struct
import sys


def domain_connection():
    seqpacket = set()
    with open("/proc/net/unix") as f:
        next(f)
        for line in f:
            fields = line.split()
            if len(fields) >= 7 and fields[4] == "0005":
                seqpacket.add(fields[6])
    mine = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in seqpacket:
            mine.append(link[8:-1])
    return ",".join(sorted(mine)) or "none"


def wait_for(path):
    while not os.path.exists(path):
        select.select([], [], [], 0.05)


def main():
    n, go, done = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4096)
    port = listener.getsockname()[1]
    clients, servers = [], []
    for _ in range(n):
        clients.append(socket.create_connection(("127.0.0.1", port)))
        servers.append(listener.accept()[0])
    print("connected", os.getpid(), domain_connection(), flush=True)
    wait_for(go)
    for s in servers:
        s.sendall(b"x" * 100)
    for c in clients:
        got = 0
        while got < 100:
            data = c.recv(100)
            if not data:
                sys.exit("a connection ended before its 100 bytes")
            got += len(data)
    print("read", flush=True)
    wait_for(done)
    print("still", domain_connection(), flush=True)
    for s in clients + servers:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    return 0


sys.exit(main())
