# SPDX-License-Identifier: LGPL-2.1-or-later
"""Processes: running commands, in namespaces, and remembering what to kill."""
import os
import signal
import subprocess
import sys

STATE_DIR = "/run/bwss-lab"


class LabError(RuntimeError):
    """A run cannot go on (the CLI prints it and exits with its code)."""
    def __init__(self, msg, code=1):
        super().__init__(msg)
        self.code = code


def die(msg, code=1):
    raise LabError(msg, code)


def sh(*cmd, check=True, quiet=True):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL if quiet else None,
                       stderr=subprocess.PIPE, text=True)
    if check and r.returncode != 0:
        die("command failed: %s: %s" % (" ".join(cmd), r.stderr.strip()))
    return r.returncode


def ns(name, *cmd, check=True):
    return sh("ip", "netns", "exec", name, *cmd, check=check)


def spawn(name, cmd, out=None, env=None):
    """Starts cmd inside namespace name, in its own process group."""
    full = ["ip", "netns", "exec", name] + cmd
    f = open(out, "w") if out else subprocess.DEVNULL
    return subprocess.Popen(full, stdout=f, stderr=subprocess.STDOUT if out else subprocess.DEVNULL,
                            env=env, start_new_session=True)


def stop(proc, sig=signal.SIGTERM):
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def remember(pid):
    os.makedirs(STATE_DIR, exist_ok=True)
    with open(os.path.join(STATE_DIR, "pids"), "a") as f:
        f.write("%d\n" % pid)


def warn(msg):
    print("bwss-lab: " + msg, file=sys.stderr)


# Where each program of the project is in a meson build tree (one place).
_PROGRAMS = {
    "bwss-run": ("libbwss", "programs", "tools"),
    "bwss-top": ("libbwss", "programs", "tools"),
    "bwss-late": ("libbwss", "programs", "tools"),
    "bwssd": ("libbwss", "programs", "bwssd"),
    "bwss-lab-player": ("tests", "lab"),
    "bwss-delay": ("tests", "lab"),
    "bwss-lab-sample": ("tests", "lab"),
    "bwss-lab-domain": ("tests", "lab"),
}


def program(build_dir, name):
    """Returns the path of the project's program @name in @build_dir."""
    return os.path.join(build_dir, *_PROGRAMS[name], name)
