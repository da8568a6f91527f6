#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""slow-get.py URL [--rate BYTES] [--non-dumpable] [--drop-to UID:GID]

A download for the bwss-sockd tests: one HTTP GET over plain TCP, read at
BYTES per second (default 512 kB/s) until the server closes or it is
killed.

  --non-dumpable     prctl(PR_SET_DUMPABLE, 0) before connecting, as setuid
                     programs, ssh-agent and some sandboxes do
  --drop-to UID:GID  connect first (as the caller, e.g. root), then become
                     UID:GID (real, effective, saved and filesystem ids, no
                     supplementary groups, no capabilities) and dumpable
                     again: a process of that user holding a socket of
                     another user"""
import argparse
import ctypes
import os
import socket
import sys
import time
import urllib.parse

PR_SET_DUMPABLE = 4
libc = ctypes.CDLL(None, use_errno=True)


def dumpable(on):
    if libc.prctl(PR_SET_DUMPABLE, 1 if on else 0, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_DUMPABLE): %s" % os.strerror(ctypes.get_errno()))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--rate", type=int, default=512 * 1024)
    p.add_argument("--non-dumpable", action="store_true")
    p.add_argument("--drop-to")
    a = p.parse_args()
    if a.non_dumpable:
        dumpable(False)
    u = urllib.parse.urlsplit(a.url)
    s = socket.create_connection((u.hostname, u.port))
    s.sendall(b"GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" % (u.path.encode(), u.hostname.encode()))
    if a.drop_to:
        uid, gid = (int(x) for x in a.drop_to.split(":"))
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)        # clears the permitted capabilities
        dumpable(True)                     # a change of euid made it non-dumpable
    chunk = 16384
    while s.recv(chunk):
        time.sleep(chunk / a.rate)


if __name__ == "__main__":
    main()
