# SPDX-License-Identifier: LGPL-2.1-or-later
"""Baseline reuse: a run of a mode that runs none of bwss's code, recorded
on another commit, counts for this commit's report when everything that
made its recording is the same.

The model.  A run's recording (samples.txt, delay.json, cross.json, ...) is
made by (1) the lab's runner (the Python that builds the topology, starts
the servers and clients and times them), (2) the lab's programs that carry
the traffic or watch it: the delay stage and bottleneck (bwss-delay) and
the recorder (bwss-lab-sample), (3) the clients and servers the mode
starts, and (4) the kernel and the machine.  In modes BASELINE_MODES:

  - tcp: every client plain (curl, souphttpsrc without the project's
    plug-in path: clients.client_env), nothing of libbwss preloaded, no
    bwssd (clients.client_cmd, timeline.run_mode);
  - ideal: the same clients, the bottleneck a strict-priority router (the
    kernel's prio qdisc, or the stage's own: topology.bottleneck_ideal,
    topology.stage_args).

So (3) is the machine's packages (TOOLS), and of the project's code only
(1) and (2) reach the recording.  The recorder links part of libbwss (the
sys layer's socket dump and the domain client, which it uses to print the
controller's state when a domain exists): the files that determine it are
read from the build, not listed by hand — every object linked into
PROGRAMS (its archives' members that define a symbol the program has) and
every file its compiler read (ninja's dependency log), the compile commands
and the compiler.  A law of libbwss that the recorder does not link
(controller.c, capacity*.c, ...) is not one of them.

The key of a run (key()): those files' SHA-256 — RUNNER from the lab's own
tree, the programs' from their build's source tree — plus the headers
outside the tree, the compile commands and compiler, the kernel's release,
the machine (CPU model, CPU count, /etc/machine-id) and TOOLS' package
versions; with quic=1 also the QUIC client's aioquic.  compare() says what
differs; nothing differing is the one rule of reuse.  What a key leaves out,
and why it may: matrix.py's targets and report (the cell's definition is
compared as the run's recorded parameters, same_parameters()); the analysis
(analysis.py, linkstats.py, decisions.py, report.py, plots.py, bwss-late),
because a reused run is analysed again from its raw recording with this
commit's; lock.py and paths.py (when and where, not what); bwss-top, run
once before each run to name the domain's files to remove (its output never
reaches the recording); this file (the rules: KEY_VERSION says when they
change what a key means).  A build that is not up to date with its sources
has no key: the sources would not be what ran."""
import hashlib
import json
import os
import subprocess
import sys

from . import report

BASELINE_MODES = ("tcp", "ideal")
KEY_VERSION = 1

# (1) the runner: the lab's own tree, relative to its root
RUNNER = tuple("tests/lab/" + p for p in (
    "bwss-lab", "video-server.py", "quic-download.py",
    "bwsslab/__init__.py", "bwsslab/cli.py", "bwsslab/timeline.py", "bwsslab/topology.py",
    "bwsslab/clients.py", "bwsslab/hosts.py", "bwsslab/scenario.py", "bwsslab/linktrace.py",
    "bwsslab/proc.py", "bwsslab/host.py"))
# (2) the programs, built (their files read from the build)
PROGRAMS = ("tests/lab/bwss-delay", "tests/lab/bwss-lab-sample")
# (3) the packages whose programs a baseline run starts or loads: the
# clients (curl, souphttpsrc and libsoup), the servers (nginx, iperf3, the
# video source's Python, openssl for the QUIC server's certificate), tc and
# ip, ping, and the C library every one of them runs on
TOOLS = ("curl", "libcurl4", "nginx", "nginx-common", "nginx-light", "nginx-core", "iperf3", "libiperf0",
         "iproute2", "iputils-ping", "gstreamer1.0-tools", "libgstreamer1.0-0", "gstreamer1.0-plugins-base",
         "gstreamer1.0-plugins-good", "libsoup-3.0-0", "libsoup2.4-1", "python3", "python3-minimal",
         "openssl", "libc6")


class Unknown(Exception):
    """What the build or the machine cannot say (a key cannot be made)."""


def _sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def _ninja(build_dir, *args):
    r = subprocess.run(["ninja", "-C", build_dir] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise Unknown("ninja %s: %s" % (" ".join(args), (r.stderr or r.stdout).strip()[:200]))
    return r.stdout


def _inputs(build_dir, target):
    """(explicit inputs, implicit inputs) of a ninja target."""
    explicit, implicit, where = [], [], None
    for line in _ninja(build_dir, "-t", "query", target).splitlines():
        s = line.strip()
        if line.startswith("  input:"):
            where = "in"
        elif line.startswith("  outputs:"):
            where = None
        elif where == "in" and s:
            (implicit if s.startswith("|") else explicit).append(s.lstrip("|").strip())
    return explicit, implicit


def _symbols(build_dir, path, extern_only):
    r = subprocess.run(["nm", "--defined-only"] + (["-g"] if extern_only else []) + [path],
                       capture_output=True, text=True, cwd=build_dir)
    if r.returncode != 0:
        raise Unknown("nm %s: %s" % (path, r.stderr.strip()[:200]))
    return {line.split()[-1] for line in r.stdout.splitlines() if len(line.split()) >= 3}


def program_objects(build_dir, program):
    """The objects linked into @program (a path in the build): its own, and
    each member of its archives that defines a symbol the program has."""
    own, libs = _inputs(build_dir, program)
    objs = [o for o in own if o.endswith(".o")]
    have = _symbols(build_dir, program, extern_only=False)
    if not have:
        raise Unknown("%s has no symbol table (stripped): what it links cannot be read" % program)
    seen = set()
    for lib in (x for x in libs if x.endswith(".a")):
        for member in _inputs(build_dir, lib)[0]:
            if member.endswith(".o") and member not in seen:
                seen.add(member)
                if _symbols(build_dir, member, extern_only=True) & have:
                    objs.append(member)
    return objs


def _deps(build_dir, objs):
    """{object: [the files its compiler read]} from ninja's dependency log."""
    out, cur = {}, None
    for line in _ninja(build_dir, "-t", "deps", *objs).splitlines():
        if line and not line.startswith(" "):
            cur = line.split(":", 1)[0]
            if "(VALID)" not in line:
                raise Unknown("ninja's dependency log of %s is stale" % cur)
            out[cur] = []
        elif line.strip() and cur is not None:
            out[cur].append(line.strip())
    missing = [o for o in objs if o not in out]
    if missing:
        raise Unknown("no dependency log for %s" % ", ".join(missing))
    return out


def build_source(build_dir):
    """The source tree @build_dir was configured from (meson-info), or None."""
    try:
        with open(os.path.join(build_dir, "meson-info", "meson-info.json")) as f:
            return json.load(f)["directories"]["source"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def programs_part(build_dir, src_root=None):
    """The programs' share of the key: {"files": {path in the tree: sha256},
    "headers": sha256 of the files outside the tree, "commands": sha256 of
    the compile and link commands, "compiler": its --version line}; the
    tree's files read from src_root where given (a copy of the build's
    source tree), else from the build's.  Raises Unknown (why) when the
    build cannot say."""
    bsrc = os.path.realpath(build_source(build_dir) or "")
    if not os.path.isdir(bsrc):
        raise Unknown("the build's source tree is unknown")
    src = os.path.realpath(src_root or bsrc)
    stale = _ninja(build_dir, "-n", *PROGRAMS)
    if "no work to do" not in stale:
        raise Unknown("the build of %s is not up to date with its sources" % ", ".join(PROGRAMS))
    objs = []
    for p in PROGRAMS:
        objs += [o for o in program_objects(build_dir, p) if o not in objs]
    try:
        with open(os.path.join(build_dir, "compile_commands.json")) as f:
            cmds = {e["output"]: e["command"] for e in json.load(f)}
    except (OSError, ValueError, KeyError) as e:
        raise Unknown("compile_commands.json: %s" % e)
    files, outside, commands, compiler = {}, hashlib.sha256(), hashlib.sha256(), set()
    for obj, deps in sorted(_deps(build_dir, objs).items()):
        if obj not in cmds:
            raise Unknown("no compile command for %s" % obj)
        commands.update((obj + "\0" + cmds[obj] + "\0").encode())
        compiler.add(cmds[obj].split()[0])
        for d in deps:
            real = os.path.realpath(os.path.join(build_dir, d))
            if real.startswith(bsrc + os.sep):
                rel = os.path.relpath(real, bsrc)
                files[rel] = _sha(os.path.join(src, rel))
            else:
                outside.update((real + "\0" + _sha(real) + "\0").encode())
    for p in PROGRAMS:                       # the link: its command names the objects and libraries
        link = [l for l in _ninja(build_dir, "-t", "commands", p).splitlines() if " -o %s " % p in l + " "]
        commands.update((p + "\0" + (link[-1] if link else "?") + "\0").encode())
    versions = []
    for cc in sorted(compiler):
        r = subprocess.run([cc, "--version"], capture_output=True, text=True, cwd=build_dir)
        versions.append((r.stdout.splitlines() or ["?"])[0])
    return {"files": files, "headers": outside.hexdigest(), "commands": commands.hexdigest(),
            "compiler": "; ".join(versions)}


def runner_part(lab_root):
    """{path: sha256} of RUNNER in the lab's tree at lab_root."""
    out = {}
    for p in RUNNER:
        full = os.path.join(lab_root, p)
        out[p] = _sha(full) if os.path.exists(full) else "absent"
    return out


def machine():
    """This machine, as the key names it: CPU model, CPUs, machine id."""
    cpu = report.cpu_model()
    try:
        mid = open("/etc/machine-id").read().strip() or "unknown"
    except OSError:
        mid = "unknown"
    return "%s, %d CPUs, machine-id %s" % (cpu, os.cpu_count() or 0, mid)


def tools():
    """{package: version} of TOOLS that are installed (dpkg), or None
    where the machine cannot say."""
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version} ${db:Status-Status}\\n"] + list(TOOLS),
                       capture_output=True, text=True) if os.path.exists("/usr/bin/dpkg-query") else None
    if r is None or not r.stdout:
        return None
    return {p: v for p, v, st in (l.split() for l in r.stdout.splitlines() if len(l.split()) == 3)
            if st == "installed"}


def quic_part():
    from .clients import QUIC_PYTHON
    r = subprocess.run([QUIC_PYTHON, "-c", "import aioquic, sys; print(aioquic.__version__, sys.version.split()[0])"],
                       capture_output=True, text=True) if os.access(QUIC_PYTHON, os.X_OK) else None
    return r.stdout.strip() if r is not None and r.returncode == 0 else None


def key(build_dir, lab_root, sc=None, src_root=None):
    """The key of a run made now with the programs of build_dir and the
    runner in lab_root (scenario sc: its QUIC client with quic=1): a dict,
    recorded in the run's summary ("baseline").  {"none": why} where a part
    cannot be read: such a run is never reused."""
    out = {"version": KEY_VERSION, "kernel": os.uname().release, "machine": machine(), "tools": tools(),
           "python": sys.version.split()[0], "files": runner_part(lab_root)}
    try:
        prog = programs_part(build_dir, src_root)
    except (Unknown, OSError) as e:
        return {"none": str(e)}
    out["files"].update(prog.pop("files"))
    out.update(prog)
    if out["tools"] is None:
        return {"none": "the machine's package versions cannot be read (dpkg-query)"}
    return with_scenario(out, sc)


def with_scenario(k, sc):
    """Key k for a run of scenario sc: with quic=1 also the QUIC client's
    aioquic and Python (the download is its code)."""
    if sc is None or not sc.quic or "none" in k:
        return k
    return dict(k, quic=quic_part())


def digest(k):
    """A short name of a key (its JSON's SHA-256, 12 hex digits)."""
    return hashlib.sha256(json.dumps(k, sort_keys=True).encode()).hexdigest()[:12]


def compare(recorded, current):
    """What differs between a recorded run's key and this one's: a list of
    reasons, empty when the run may be reused."""
    if not recorded:
        return ["the run carries no baseline key (recorded before runs did)"]
    if "none" in recorded:
        return ["the run's key could not be made: %s" % recorded["none"]]
    if "none" in current:
        return ["this build's key cannot be made: %s" % current["none"]]
    why = []
    if recorded.get("version") != current.get("version"):
        return ["the key's version %s, this lab's %s" % (recorded.get("version"), current.get("version"))]
    for k, what in (("kernel", "kernel"), ("machine", "machine"), ("python", "the runner's Python"),
                    ("compiler", "compiler"), ("quic", "the QUIC client")):
        if recorded.get(k) != current.get(k):
            why.append("%s %s, now %s" % (what, recorded.get(k), current.get(k)))
    for k, what in (("headers", "the system headers the programs were compiled with"),
                    ("commands", "the programs' compile or link commands")):
        if recorded.get(k) != current.get(k):
            why.append(what + " differ")
    rt, ct = recorded.get("tools") or {}, current.get("tools") or {}
    for p in sorted(set(rt) | set(ct)):
        if rt.get(p) != ct.get(p):
            why.append("package %s %s, now %s" % (p, rt.get(p, "absent"), ct.get(p, "absent")))
    rf, cf = recorded.get("files") or {}, current.get("files") or {}
    changed = sorted(p for p in set(rf) | set(cf) if rf.get(p) != cf.get(p))
    for p in changed:
        why.append("%s %s" % (p, "changed" if p in rf and p in cf else
                              "is new" if p in cf else "is no longer read"))
    return why


def unkeyed(sc):
    """Why a baseline run of scenario sc depends on what the key does not
    cover (empty: nothing): a second machine under bwssd (host2=bwss), the
    lab's own player (adaptive, progressive: bwss-lab-player), a link trace
    read from a file.  Such a run is never reused."""
    from .linktrace import BUILTIN
    why = []
    if sc.link_trace and sc.link_trace not in BUILTIN:
        why.append("its link trace is a file (%s)" % sc.link_trace)
    if sc.hosts == 2 and sc.host2 == "bwss":
        why.append("the second machine runs bwssd (host2=bwss)")
    if sc.adaptive or sc.progressive:
        why.append("the video's client is bwss-lab-player, not in the key")
    return why


def same_parameters(recorded, sc):
    """The keys where a run's recorded parameters differ from scenario sc's
    (empty: the same experiment)."""
    want = json.loads(json.dumps(sc.parameters()))
    have = recorded or {}
    return sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))


def why_counts(recorded, commit):
    """One line: why a reused run counts for this commit's report."""
    files = recorded.get("files") or {}
    progs = sum(1 for p in files if p not in RUNNER)
    return ("recorded on %s; key %s the same: the runner's %d files, the %d files the stage and the recorder "
            "are built from, their compile commands and compiler, kernel %s, the machine, %d packages"
            % (commit, digest(recorded), len(RUNNER), progs, recorded.get("kernel"),
               len(recorded.get("tools") or {})))
