#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-sys-only.py SOURCE_ROOT — only libbwss's system layer
(libbwss/lib/sys/) asks the kernel about processes and sockets: no other
code folder of the library, the programs, the shim, the plugin or the
examples names a /proc path or the runtime directory's tmpfs (/run/user,
/dev/shm), calls getsockopt/setsockopt, asks TCP_INFO or
sock_diag, or defines a TCP state of its own.  Read from the sources, with
comments taken out: nm sees a getsockopt call but not a "/proc" string.
The tests' own helpers (tests/) are free to look.  TAP output."""
import os
import re
import sys

SCANNED = ["libbwss", "gst-plugin", "examples"]
OWNER = os.path.join("libbwss", "lib", "sys")

# (what, pattern over the source with comments removed)
RULES = [
    ("/proc path", re.compile(r'"/proc\b')),
    ("tmpfs path of the runtime directory (/run/user, /dev/shm)", re.compile(r'"/(run/user|dev/shm)\b')),
    ("getsockopt or setsockopt call", re.compile(r"\b[gs]etsockopt\s*\(")),
    ("TCP_INFO or struct tcp_info", re.compile(r"\bTCP_INFO\b|\bstruct\s+tcp_info\b")),
    ("sock_diag request (NETLINK_SOCK_DIAG, inet_diag_req)",
     re.compile(r"\bNETLINK_SOCK_DIAG\b|\binet_diag_req(_v2)?\b")),
    ("TCP state defined again",
     re.compile(r"#\s*define\s+\w*ESTABLISHED\w*|\b\w*ESTABLISHED\w*\s*=(?!=)")),
]

TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def strip_comments(text):
    """@text with each comment replaced by as many newlines as it spans."""
    def keep(m):
        s = m.group(0)
        return "\n" * s.count("\n") if s.startswith("/") else s
    return TOKENS.sub(keep, text)


def sources(root):
    for top in SCANNED:
        for dirpath, dirnames, files in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(dirpath, root)
            if rel == OWNER or rel.startswith(OWNER + os.sep):
                dirnames[:] = []
                continue
            dirnames.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(rel, f)


def main(argv):
    root = argv[0] if argv else "."
    files = list(sources(root))
    found = {what: [] for what, _ in RULES}
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = strip_comments(f.read()).split("\n")
        for n, line in enumerate(lines, 1):
            for what, rule in RULES:
                if rule.search(line):
                    found[what].append("%s:%d: %s" % (rel, n, line.strip()))
    print("1..%d" % (len(RULES) + 1))
    print("%s 1 - %d source files scanned outside %s" % ("ok" if len(files) > 50 else "not ok",
                                                          len(files), OWNER))
    for i, (what, _) in enumerate(RULES, 2):
        if found[what]:
            print("not ok %d - %s outside %s:" % (i, what, OWNER))
            for hit in found[what]:
                print("#   " + hit)
        else:
            print("ok %d - no %s outside %s" % (i, what, OWNER))
    return 1 if any(found.values()) or len(files) <= 50 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
