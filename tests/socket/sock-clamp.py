#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""sock-clamp.py PID [REMOTE_PORT] — prints the TCP_WINDOW_CLAMP, in bytes, of
the established TCP socket of process PID (connected to REMOTE_PORT if
given), read through a duplicate of its fd (pidfd_getfd).  Exit 1 if PID has
no such socket.  For the bwssd tests: what the kernel applies to another
process's socket, not what a controller says it applied."""
import ctypes
import os
import socket
import sys

SYS_PIDFD_OPEN, SYS_PIDFD_GETFD = 434, 438
TCP_WINDOW_CLAMP = 10
libc = ctypes.CDLL(None, use_errno=True)


def main():
    pid = int(sys.argv[1])
    port = int(sys.argv[2]) if len(sys.argv) > 2 else None
    pidfd = libc.syscall(SYS_PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        return 1
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                    continue
            except OSError:
                continue
            fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, int(name), 0)
            if fd < 0:
                continue
            s = socket.socket(fileno=fd)
            try:
                if s.type != socket.SOCK_STREAM or s.family not in (socket.AF_INET, socket.AF_INET6):
                    continue
                try:
                    peer = s.getpeername()
                except OSError:
                    continue
                if port is None or peer[1] == port:
                    print(s.getsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP))
                    return 0
            finally:
                s.detach()
                os.close(fd)
    finally:
        os.close(pidfd)
    return 1


if __name__ == "__main__":
    sys.exit(main())
