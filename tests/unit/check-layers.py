#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-layers.py LAYER=LIB.a ... — libbwss's layers call downwards only and
no two files call each other, read from the objects themselves (nm), so a
call that breaks the architecture fails the tests whatever the headers say.

Layers are given bottom first (laws, sys, domain): an object may call
into its own layer and the layers given before it, never after.  Within and
across layers the file-level call graph must have no cycle.  TAP output."""
import subprocess
import sys


def symbols(lib):
    """{object: (defined, undefined)} of the static library @lib."""
    out = subprocess.run(["nm", "-A", lib], capture_output=True, text=True, check=True).stdout
    objs = {}
    for line in out.splitlines():
        # "lib.a:dir/obj.o:0000000000000000 T name" or "lib.a:dir/obj.o:   U name"
        where, _, rest = line.rpartition(":")
        parts = rest.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        obj = where.split(":")[-1].rsplit("/", 1)[-1]
        defined, undefined = objs.setdefault(obj, (set(), set()))
        if kind == "U":
            undefined.add(name)
        elif kind.isupper():          # a global definition
            defined.add(name)
    return objs


def cycles(graph):
    """Returns the strongly connected components of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv):
    layers = [(name, symbols(lib)) for name, _, lib in (a.partition("=") for a in argv)]
    owner = {}                         # symbol -> (layer rank, node)
    for rank, (name, objs) in enumerate(layers):
        for obj, (defined, _) in objs.items():
            for s in defined:
                owner[s] = (rank, "%s/%s" % (name, obj))
    graph, upward = {}, []
    for rank, (name, objs) in enumerate(layers):
        for obj, (_, undefined) in objs.items():
            node = "%s/%s" % (name, obj)
            graph.setdefault(node, set())
            for s in sorted(undefined):
                if s not in owner:
                    continue
                orank, target = owner[s]
                if target != node:
                    graph[node].add(target)
                if orank > rank:
                    upward.append("%s calls %s of %s" % (node, s, target))
    print("1..2")
    if upward:
        print("not ok 1 - a layer calls a layer above it:")
        for u in upward:
            print("#   " + u)
    else:
        print("ok 1 - calls go downwards only (%s)" % " < ".join(n for n, _ in layers))
    found = cycles(graph)
    if found:
        print("not ok 2 - files that call each other:")
        for c in found:
            print("#   " + " <-> ".join(c))
    else:
        print("ok 2 - no call cycle among %d files" % len(graph))
    return 1 if upward or found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
