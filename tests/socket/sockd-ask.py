#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""sockd-ask.py — bwss-sockd's protocol (libbwss/programs/sockd/sockd-proto.h)
spoken by hand, for the tests: a client that is not bwssd.

  sockd-ask.py find PID PORT
      (as a user who may read PID's fds, e.g. root) prints "FD INODE" of
      PID's TCP socket connected to remote port PORT; exit 1 if none
  sockd-ask.py ask SOCKET PID FD INODE
      asks the service at SOCKET for it; prints "granted INODE" (the fd
      received is checked to be that socket: fstat) or the refusal's name
      ("refused not-dumpable"); exit 0 either way, 1 on a protocol error
  sockd-ask.py raw SOCKET BYTES
      sends a message of BYTES zero bytes (a malformed request); prints the
      answer's name
  sockd-ask.py idle SOCKET SECONDS
      connects, sends nothing, and prints after how many seconds the
      service hung up ("closed 2.0"), or "open" if it had not
  sockd-ask.py hold SOCKET N SECONDS
      opens N connections that send nothing, prints "connected", then the
      answer each got at once, within HOLD_WINDOW_S ("busy"; "waiting" if
      none), and keeps them SECONDS"""
import os
import select
import socket
import stat
import struct
import sys
import time

MAGIC = 0x62777331
REQUEST = struct.Struct("=IiiIQ")
REPLY = struct.Struct("=IIQ")
# SockdStatus, in the header's order (the numbers are the protocol's)
NAMES = ["granted", "bad-request", "busy", "yama-strict", "caller-root", "caller-ids",
         "caller-sandboxed", "caller-namespace", "caller-confined", "gone", "other-user",
         "other-group", "not-dumpable", "capabilities", "target-namespace", "no-such-fd",
         "not-tcp", "stale", "socket-other-user", "not-connected", "changed", "internal"]


def tcp_inodes(port):
    """{inode} of the TCP sockets whose remote port is @port (/proc/net/tcp*)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if int(f[2].rsplit(":", 1)[1], 16) == port:
                found.add(int(f[9]))
    return found


def find(pid, port):
    inodes = tcp_inodes(port)
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if link.startswith("socket:[") and int(link[8:-1]) in inodes:
            print(name, link[8:-1])
            return 0
    return 1


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(path)
    return s


def answer(s):
    """Returns (name, fd or None) of the service's answer on @s."""
    msg, anc, _, _ = s.recvmsg(REPLY.size + 8, socket.CMSG_SPACE(4 * 4))
    fds = []
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += struct.unpack("=%di" % (len(data) // 4), data[:len(data) // 4 * 4])
    if len(msg) != REPLY.size:
        raise ValueError("an answer of %d bytes" % len(msg))
    magic, status, _ = REPLY.unpack(msg)
    if magic != MAGIC or (status == 0) != (len(fds) == 1):
        raise ValueError("magic %#x, status %d with %d fds" % (magic, status, len(fds)))
    return (NAMES[status] if status < len(NAMES) else str(status)), (fds[0] if fds else None)


def ask(path, pid, fd, inode):
    s = connect(path)
    s.send(REQUEST.pack(MAGIC, pid, fd, 0, inode))
    name, got = answer(s)
    if got is None:
        print("refused", name)
        return 0
    st = os.fstat(got)
    os.close(got)
    if not stat.S_ISSOCK(st.st_mode) or st.st_ino != inode:
        print("granted the wrong file: inode", st.st_ino)
        return 1
    print("granted", st.st_ino)
    return 0


def raw(path, size):
    s = connect(path)
    s.send(bytes(size))
    print(answer(s)[0])
    return 0


def idle(path, seconds):
    s = connect(path)
    t0 = time.monotonic()
    s.settimeout(seconds)
    try:
        data = s.recv(64)
        print("closed %.1f" % (time.monotonic() - t0) if not data else "answered")
    except socket.timeout:
        print("open")
    return 0


# How long hold() waits for the answers: "at once" is before the helper
# could hang up on any of them (REQUEST_MS, 2 s, from each one's accept),
# with room for a busy machine (the answer the helper sends at accept may be
# late by that much and still count).
HOLD_WINDOW_S = 1.5


def hold(path, n, seconds):
    conns = [connect(path) for _ in range(n)]
    print("connected", flush=True)
    said = ["waiting"] * n            # no answer, or hung up without one
    deadline = time.monotonic() + HOLD_WINDOW_S
    pending = {s.fileno(): i for i, s in enumerate(conns)}
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select(list(pending), [], [], left)
        for fd in ready:
            i = pending.pop(fd)
            conns[i].settimeout(0)
            try:
                said[i] = answer(conns[i])[0]
            except (OSError, ValueError, struct.error):
                pass                      # hung up: it waited, it was not told "busy"
    print(" ".join(said), flush=True)
    time.sleep(seconds)
    return 0


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "find":
        return find(int(args[0]), int(args[1]))
    if cmd == "ask":
        return ask(args[0], int(args[1]), int(args[2]), int(args[3]))
    if cmd == "raw":
        return raw(args[0], int(args[1]))
    if cmd == "idle":
        return idle(args[0], float(args[1]))
    if cmd == "hold":
        return hold(args[0], int(args[1]), float(args[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, ValueError) as e:
        print("error", e)
        sys.exit(1)
