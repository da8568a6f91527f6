# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run reuse: a run recorded on another commit counts for this commit's
report when everything that made its recording is the same.  First the
baseline modes, which run none of bwss's code (key()); then the bwss modes,
whose key adds all of bwss they start or load (bwss_key(), below).

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
import re
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


def _symbols_of(build_dir, paths):
    """{path: its external symbols} of the objects @paths, one nm."""
    out = {p: set() for p in paths}
    if not paths:
        return out
    r = subprocess.run(["nm", "--defined-only", "-g", "-A"] + list(paths), capture_output=True, text=True,
                       cwd=build_dir)
    if r.returncode != 0:
        raise Unknown("nm: %s" % r.stderr.strip()[:200])
    for line in r.stdout.splitlines():
        where, _, rest = line.partition(":")
        if where in out and len(rest.split()) >= 3:
            out[where].add(rest.split()[-1])
    return out


def program_objects(build_dir, program, defined=None):
    """The objects linked into @program (a path in the build): its own, and
    each member of its archives that defines a symbol the program has
    (defined: {member: its symbols}, filled as read, for the next program
    of one reading of the build)."""
    own, libs = _inputs(build_dir, program)
    objs = [o for o in own if o.endswith(".o")]
    have = _symbols(build_dir, program, extern_only=False)
    if not have:
        raise Unknown("%s has no symbol table (stripped): what it links cannot be read" % program)
    defined = {} if defined is None else defined
    members = []
    for lib in (x for x in libs if x.endswith(".a")):
        members += [m for m in _inputs(build_dir, lib)[0] if m.endswith(".o") and m not in members]
    defined.update(_symbols_of(build_dir, [m for m in members if m not in defined]))
    return objs + [m for m in members if defined[m] & have]


def built_libraries(build_dir, target):
    """The shared libraries of the build that @target links: ninja names
    each by its symbols file (X.p/X.symbols, relinking only when the
    library's interface changes), the library itself is X."""
    return [x.rsplit(".p/", 1)[0] for x in _inputs(build_dir, target)[1] if x.endswith(".symbols") and ".p/" in x]


def closure(build_dir, programs):
    """@programs and, after them, every shared library of the build they
    link, directly or through one another: all that runs of the build when
    they run."""
    out, todo = [], list(programs)
    while todo:
        p = todo.pop(0)
        if p not in out:
            out.append(p)
            todo += built_libraries(build_dir, p)
    return out


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


def _relative(command, build_dir, src):
    """@command with the build's and its source tree's own paths named by
    role (a link names the build's folders for the linker's search,
    -rpath-link): the same build in another folder has the same commands."""
    for path, name in ((os.path.realpath(build_dir), "@BUILD@"), (os.path.abspath(build_dir), "@BUILD@"),
                       (src, "@SOURCE@")):
        command = command.replace(path + os.sep, name + os.sep).replace(path + " ", name + " ")
        if command.endswith(path):
            command = command[:-len(path)] + name
    return command


def build_source(build_dir):
    """The source tree @build_dir was configured from (meson-info), or None."""
    try:
        with open(os.path.join(build_dir, "meson-info", "meson-info.json")) as f:
            return json.load(f)["directories"]["source"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def programs_part(build_dir, src_root=None, programs=PROGRAMS):
    """The share of the key of @programs (paths in the build) and the
    build's shared libraries they link (closure()): {"files": {path in the
    tree: sha256}, "headers": sha256 of the files outside the tree,
    "commands": sha256 of the compile and link commands, "compiler": its
    --version line}; the tree's files read from src_root where given (a
    copy of the build's source tree), else from the build's.  Raises
    Unknown (why) when the build cannot say."""
    bsrc = os.path.realpath(build_source(build_dir) or "")
    if not os.path.isdir(bsrc):
        raise Unknown("the build's source tree is unknown")
    src = os.path.realpath(src_root or bsrc)
    stale = _ninja(build_dir, "-n", *programs)
    if "no work to do" not in stale:
        raise Unknown("the build of %s is not up to date with its sources" % ", ".join(programs))
    programs = closure(build_dir, programs)
    objs, defined = [], {}
    for p in programs:
        objs += [o for o in program_objects(build_dir, p, defined) if o not in objs]
    try:
        with open(os.path.join(build_dir, "compile_commands.json")) as f:
            cmds = {e["output"]: _relative(e["command"], build_dir, bsrc) for e in json.load(f)}
    except (OSError, ValueError, KeyError) as e:
        raise Unknown("compile_commands.json: %s" % e)
    files, outside, commands, compiler, reals = {}, hashlib.sha256(), hashlib.sha256(), set(), {}
    for obj, deps in sorted(_deps(build_dir, objs).items()):
        if obj not in cmds:
            raise Unknown("no compile command for %s" % obj)
        commands.update((obj + "\0" + cmds[obj] + "\0").encode())
        compiler.add(cmds[obj].split()[0])
        for d in deps:
            if d not in reals:
                reals[d] = os.path.realpath(os.path.join(build_dir, d))
            real = reals[d]
            if real.startswith(bsrc + os.sep):
                rel = os.path.relpath(real, bsrc)
                files[rel] = _sha(os.path.join(src, rel))
            else:
                outside.update((real + "\0" + _sha(real) + "\0").encode())
    for p in programs:                       # the link: its command names the objects and libraries
        link = [l for l in _ninja(build_dir, "-t", "commands", p).splitlines() if " -o %s " % p in l + " "]
        commands.update((p + "\0" + (_relative(link[-1], build_dir, bsrc) if link else "?") + "\0").encode())
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
        if str((current or {}).get("version", "")).startswith("bwss-"):
            return ["the run carries no bwss key (made by bwss-lab run, or before the matrix recorded one)"]
        return ["the run carries no baseline key (recorded before runs did)"]
    if "none" in recorded:
        return ["the run's key could not be made: %s" % recorded["none"]]
    if "none" in current:
        return ["this build's key cannot be made: %s" % current["none"]]
    why = []
    if recorded.get("version") != current.get("version"):
        return ["the key's version %s, this lab's %s" % (recorded.get("version"), current.get("version"))]
    for k, what in (("kernel", "kernel"), ("machine", "machine"), ("python", "the runner's Python"),
                    ("compiler", "compiler"), ("quic", "the QUIC client"), ("rules", "bwssd's rules")):
        if recorded.get(k) != current.get(k):
            why.append("%s %s, now %s" % (what, recorded.get(k), current.get(k)))
    rp, cp = recorded.get("programs") or [], current.get("programs") or []
    for p in [x for x in rp if x not in cp] + [x for x in cp if x not in rp]:
        why.append("program %s %s" % (p, "is no longer run" if p in rp else "is new"))
    for k, what in (("environment", "environment variable"), ("libraries", "library")):
        re_, ce = recorded.get(k) or {}, current.get(k) or {}
        for v in sorted(set(re_) | set(ce)):
            if re_.get(v) != ce.get(v):
                why.append("%s %s %s, now %s" % (what, v, re_.get(v, "absent"), ce.get(v, "absent")))
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


def unkeyed(sc, mode="tcp"):
    """Why a run of scenario sc in mode depends on what its key does not
    cover (empty: nothing): in a baseline mode a second machine under bwssd
    (host2=bwss; bwssd is in a bwss run's key), the lab's own player
    (adaptive, progressive: bwss-lab-player and its content), a link trace
    read from a file.  Such a run is never reused."""
    from .linktrace import BUILTIN
    why = []
    if sc.link_trace and sc.link_trace not in BUILTIN:
        why.append("its link trace is a file (%s)" % sc.link_trace)
    if sc.hosts == 2 and sc.host2 == "bwss" and mode in BASELINE_MODES:
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
    if recorded.get("programs"):
        return ("recorded on %s; key %s the same: the runner's %d files, the %d files the stage, the recorder "
                "and bwss's %d programs and libraries are built from, their compile commands and compiler, "
                "bwssd's rules, the environment, kernel %s, the machine, %d packages"
                % (commit, digest(recorded), len(RUNNER), progs, len(recorded["programs"]),
                   recorded.get("kernel"), len(recorded.get("tools") or {})))
    return ("recorded on %s; key %s the same: the runner's %d files, the %d files the stage and the recorder "
            "are built from, their compile commands and compiler, kernel %s, the machine, %d packages"
            % (commit, digest(recorded), len(RUNNER), progs, recorded.get("kernel"),
               len(recorded.get("tools") or {})))


# ---- the bwss modes' key ----
# A run of a bwss mode (bwss, bwss-adopt, bwss-paper) is made by all that
# makes a baseline run and by the product: what the runner starts of the
# build in those modes (timeline.run_mode, clients.client_cmd, hosts.py) and
# what that loads.  Read from the build as above, each with the build's
# shared libraries it links (libbwss.so.1: the laws, the domain, the sys
# layer; closure()):
BWSS_KEY_VERSION = 1
BWSS_PROGRAMS = (
    "libbwss/programs/tools/bwss-run",           # a client's launcher: sets LD_PRELOAD to ...
    "libbwss/programs/shim/libbwss-preload.so",  # ... the shim (bwss-run's ../shim before the installed one)
    "libbwss/programs/bwssd/bwssd",              # the controller, started by the shim's client (BWSS_BWSSD)
                                                 # or by the runner (bwss-adopt, host2=bwss)
    "libbwss/programs/tools/bwss-top",           # the domain's paths, --resume, the last snapshot (bwss-top.json)
    "tests/lab/bwss-lab-domain")                 # the controller's state (domain.txt)
# The element and the tracer: every shared library under gst-plugin/ (the
# folder the runner puts in GST_PLUGIN_PATH: GStreamer scans it all),
# keyed where a GStreamer client runs (video_client=gst): elsewhere the
# clients are curl and no process of the run loads GStreamer.
PLUGIN_DIR = "gst-plugin/"
# The environment the runner passes on to what it starts (timeline.run_mode:
# os.environ and its own): the variables of these prefixes change what the
# product, GLib or GStreamer do ...
ENV_PREFIXES = ("BWSS_", "GST_", "LD_", "G_", "GIO_", "GLIB_", "SOUP_")
# ... less those the runner sets itself for every run (their values name the
# run's own domain, build and files)
ENV_SET_BY_RUNNER = ("BWSS_DOMAIN", "BWSS_BWSSD", "BWSS_DECISIONS", "BWSS_LOOP", "GST_PLUGIN_PATH")


def plugins(build_dir):
    """The shared libraries the build makes under PLUGIN_DIR."""
    out = []
    for line in _ninja(build_dir, "-t", "targets", "all").splitlines():
        target = line.split(":", 1)[0].strip()
        if target.startswith(PLUGIN_DIR) and target.endswith(".so"):
            out.append(target)
    return sorted(set(out))


def element_keyed(sc):
    """Whether scenario sc's bwss runs load the element (a GStreamer client)."""
    return sc is not None and sc.video_client == "gst"


def bwss_programs(build_dir, element):
    """What of the build a bwss run starts or loads, paths in the build:
    BWSS_PROGRAMS, with element the plug-ins."""
    return BWSS_PROGRAMS + (tuple(plugins(build_dir)) if element else ())


def rules_in_force(build_dir):
    """bwssd's rules file in force when the library starts it (mode bwss: no
    --rules): $XDG_CONFIG_HOME/bwss/rules.conf, else SYSCONFDIR's (bwssd's
    compile command says where), else the rules built in: "path sha256" or
    "built in"."""
    cfg = os.environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(cfg):
        cfg = os.path.join(os.path.expanduser("~"), ".config")
    places = [os.path.join(cfg, "bwss", "rules.conf")]
    try:
        with open(os.path.join(build_dir, "compile_commands.json")) as f:
            cmd = next(e["command"] for e in json.load(f) if e["file"].endswith("bwssd/bwssd.c"))
    except (OSError, ValueError, KeyError, StopIteration) as e:
        raise Unknown("bwssd's compile command: %s" % (e or "not in compile_commands.json"))
    m = re.search(r'BWSS_SYSCONFDIR=\\?"([^"\\]*)', cmd)
    if not m:
        raise Unknown("bwssd's compile command names no BWSS_SYSCONFDIR")
    places.append(os.path.join(m.group(1), "bwss", "rules.conf"))
    for p in places:
        if os.path.exists(p):
            return "%s %s" % (p, _sha(p))
    return "built in"


def environment():
    """{variable: value} of ENV_PREFIXES in this process's environment
    (the runner's), less ENV_SET_BY_RUNNER."""
    return {k: v for k, v in sorted(os.environ.items())
            if k.startswith(ENV_PREFIXES) and k not in ENV_SET_BY_RUNNER}


def libraries(build_dir, programs):
    """The shared libraries outside the build that @programs load (ldd):
    ({package: version} of those a package owns, {path: sha256} of the
    others)."""
    found = set()
    for p in programs:
        r = subprocess.run(["ldd", os.path.join(build_dir, p)], capture_output=True, text=True)
        if r.returncode != 0:
            raise Unknown("ldd %s: %s" % (p, (r.stderr or r.stdout).strip()[:200]))
        for line in r.stdout.splitlines():
            m = re.search(r"=> (/\S+)", line)
            if m and not os.path.realpath(m.group(1)).startswith(os.path.realpath(build_dir) + os.sep):
                found.add(m.group(1))
    # dpkg names a file where its package put it: /lib or /usr/lib on a
    # merged /usr, so both are asked
    ask = sorted(found | {("/usr" + x) if not x.startswith("/usr/") else x[4:] for x in found})
    r = subprocess.run(["dpkg-query", "-S"] + ask, capture_output=True, text=True)
    owner = {}
    for line in r.stdout.splitlines():
        pkgs, _, path = line.partition(": ")
        if path and "," not in pkgs:
            owner[path.strip()] = pkgs.split(":")[0]
    packages, others = set(), {}
    for x in sorted(found):
        alt = ("/usr" + x) if not x.startswith("/usr/") else x[4:]
        pkg = owner.get(x) or owner.get(alt)
        if pkg:
            packages.add(pkg)
        else:
            others[x] = _sha(x)
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n"] + sorted(packages),
                       capture_output=True, text=True)
    versions = dict(l.split() for l in r.stdout.splitlines() if len(l.split()) == 2)
    if set(versions) != packages:
        raise Unknown("dpkg-query: no version of %s" % ", ".join(sorted(packages - set(versions))))
    return versions, others


def bwss_key(build_dir, lab_root, element, src_root=None):
    """The key of a bwss run made now (element: its scenario loads the
    element, element_keyed): the baseline key's parts over the stage, the
    recorder and bwss_programs(), the packages of the libraries they load
    added to TOOLS', bwssd's rules in force, the environment.  {"none": why}
    where a part cannot be read: such a run is never reused."""
    out = {"version": "bwss-%d" % BWSS_KEY_VERSION, "kernel": os.uname().release, "machine": machine(),
           "tools": tools(), "python": sys.version.split()[0], "files": runner_part(lab_root),
           "environment": environment()}
    try:
        if element and not plugins(build_dir):
            raise Unknown("the build has no GStreamer plug-in (gst-plugin disabled or GStreamer missing)")
        programs = PROGRAMS + bwss_programs(build_dir, element)
        prog = programs_part(build_dir, src_root, programs)
        out["programs"] = closure(build_dir, programs)
        linked, others = libraries(build_dir, out["programs"])
        out["rules"] = rules_in_force(build_dir)
    except (Unknown, OSError) as e:
        return {"none": str(e)}
    if out["tools"] is None:
        return {"none": "the machine's package versions cannot be read (dpkg-query)"}
    out["files"].update(prog.pop("files"))
    out.update(prog)
    out["tools"].update(linked)
    out["libraries"] = others
    return out


def bwss_keys(build_dir, lab_root, src_root=None):
    """{element: bwss_key(...)} for both kinds of scenario."""
    return {e: bwss_key(build_dir, lab_root, e, src_root) for e in (False, True)}


def bwss_key_for(keys, sc):
    """Scenario sc's key of bwss_keys() (with its QUIC client: with_scenario)."""
    return with_scenario(keys[element_keyed(sc)], sc)
