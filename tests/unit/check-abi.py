#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-abi.py SOURCE_ROOT LIBBWSS.so — libbwss's ABI is what its headers
and its Debian symbols file say, and nothing of its inside shows:

  1. every symbol libbwss.so exports is declared BWSS_API in a public
     header (libbwss/include/bwss/), and every BWSS_API symbol is exported;
  2. debian/libbwss1.symbols lists exactly the exported symbols;
  3. nothing internal is exported: no symbol of the bwss__ prefix (the
     library's internal functions, docs/architecture.md "The ABI") and
     none without the bwss_ prefix;
  4. no private header of the library (libbwss/lib/) names a function
     bwss_ + a letter that is not public: internal ones are bwss__.
TAP output."""
import glob
import os
import re
import subprocess
import sys


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if len(line.split()) == 3}


def declared(root):
    names = set()
    for h in glob.glob(os.path.join(root, "libbwss", "include", "bwss", "*.h")):
        text = open(h, encoding="utf-8").read()
        for decl in re.findall(r"\bBWSS_API\b([^;{]*)", text):
            m = re.search(r"\b(bwss_\w+)\s*(\(|\[|$)", decl.strip())
            if m:
                names.add(m.group(1))
    return names


def listed(root):
    names = set()
    with open(os.path.join(root, "debian", "libbwss1.symbols"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^ (\w+)@Base ", line)
            if m:
                names.add(m.group(1))
    return names


def misnamed(root):
    """bwss_ + a letter functions of the private headers that are not BWSS_API."""
    public, names = declared(root), set()
    for h in glob.glob(os.path.join(root, "libbwss", "lib", "**", "*.h"), recursive=True):
        for name in re.findall(r"\b(bwss_[a-z0-9]\w*)\s*\(", open(h, encoding="utf-8").read()):
            if name not in public:
                names.add("%s (%s)" % (name, os.path.relpath(h, root)))
    return names


def report(n, bad, ok_text, bad_text):
    if bad:
        print("not ok %d - %s: %s" % (n, bad_text, " ".join(sorted(bad))))
    else:
        print("ok %d - %s" % (n, ok_text))


def main(argv):
    root, lib = argv
    exp, dec, sym = exported(lib), declared(root), listed(root)
    print("1..4")
    report(1, exp ^ dec, "the %d exported symbols are the headers' BWSS_API declarations" % len(exp),
           "exported and declared differ")
    report(2, exp ^ sym, "debian/libbwss1.symbols lists them all and no other",
           "the symbols file and the library differ")
    inside = {s for s in exp if s.startswith("bwss__") or not s.startswith("bwss_")}
    report(3, inside, "no internal symbol is exported", "internal symbols exported")
    wrong = misnamed(root)
    report(4, wrong, "the private headers' functions are bwss__ (internal) or the API",
           "internal functions named like the API (bwss__ is theirs)")
    return 1 if (exp ^ dec) or (exp ^ sym) or inside or wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
