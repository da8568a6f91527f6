# SPDX-License-Identifier: LGPL-2.1-or-later
"""The lab's machine-wide lock: one owner of the topology at a time.

The lab's namespaces have fixed names, so two runs on one machine tear each
other's topology down.  Every command that touches them takes this lock
first.  Since `bwss-lab up` exits and leaves the namespaces standing, the
lock is not a file descriptor held open but an owner record, OWNER_FILE:

  {"pid": 4242, "start": 123456, "command": "bwss-lab run streaming ...",
   "time": "2026-11-26T11:20:03+00:00", "kind": "run"}

that lives as long as the topology: `down` removes it, and a record whose
owner is dead (no process @pid that started at clock tick @start: a pid the
kernel gave again is not the owner) is free for the next taker.  The owner
is the process that made the topology: `run`, `lock` (the shell entry,
below) or, for `up`, the caller of `bwss-lab up` (the first ancestor that is
not a wrapper such as sudo or flock), which is alive as long as the shell or
script that uses the topology is.

A process whose ancestor owns the lab holds it too (re-entrant): a script
run under `bwss-lab lock -- SCRIPT` may call `bwss-lab run` and `down`.

Reading and writing the record is serialised by flock(2) on LOCK_FILE (held
for microseconds, never across a run).  Both files live in /run: a reboot,
which removes every namespace, removes them too.
"""
import datetime
import fcntl
import json
import os
import sys
import time

LOCK_FILE = "/run/bwss-lab.lock"
OWNER_FILE = "/run/bwss-lab.owner"
POLL_S = 0.5                   # how often a waiting caller looks again
BUSY = 2                       # exit status of --no-wait while the lab is held
SKIPPED = 0                    # with a TAP skip plan: a TAP test that exits non-zero is an ERROR

# Programs that exec or wait for the command they wrap: an `up` under them
# belongs to whoever called them.
WRAPPERS = {"sudo", "su", "doas", "flock", "env", "timeout", "nice", "ionice", "chrt",
            "taskset", "setsid", "stdbuf", "time"}


class Busy(Exception):
    """The lab is held by another live owner (its record is the argument)."""


def _stat(pid):
    """(ppid, start tick, comm) of process @pid, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except (OSError, ValueError):
        return None
    comm = s[s.index("(") + 1:s.rindex(")")]
    fields = s[s.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[19]), comm      # ppid, starttime (fields 4 and 22)


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return " ".join(a.decode(errors="replace") for a in f.read().split(b"\0") if a)
    except OSError:
        return "?"


def ancestors(pid=None):
    """The pids from @pid (default: this process) up to, not including, 1."""
    pid = os.getpid() if pid is None else pid
    out = []
    while pid > 1:
        st = _stat(pid)
        if st is None:
            break
        out.append(pid)
        pid = st[0]
    return out


def alive(rec):
    st = _stat(rec.get("pid", 0)) if isinstance(rec.get("pid"), int) else None
    return st is not None and st[1] == rec.get("start")


def _read():
    try:
        with open(OWNER_FILE) as f:
            rec = json.load(f)
        return rec if isinstance(rec, dict) else {}
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}                      # unreadable: treated as a dead owner


def _write(rec):
    tmp = OWNER_FILE + ".new"
    with open(tmp, "w") as f:
        json.dump(rec, f)
        f.write("\n")
    os.replace(tmp, OWNER_FILE)


class _Guard:
    """flock(2) on LOCK_FILE around one look at (and change of) the record."""
    def __enter__(self):
        self.fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


def describe(rec):
    return "pid %s (%s) since %s" % (rec.get("pid", "?"), rec.get("command", "?"),
                                     rec.get("time", "?"))


def held_by_us(rec):
    """The record's owner is this process or one of its ancestors."""
    return rec is not None and alive(rec) and rec["pid"] in ancestors()


def owner_of_up():
    """The process a topology made by `bwss-lab up` belongs to: the first
    ancestor of this process that is not a wrapper."""
    for pid in ancestors()[1:]:
        st = _stat(pid)
        if st is not None and st[2] not in WRAPPERS:
            return pid
    return os.getpid()


def try_take(command, kind, pid=None):
    """Takes the lab for @pid (default: this process) when it is free, its
    owner dead, or already ours.  Returns None when taken, else the live
    owner's record."""
    pid = os.getpid() if pid is None else pid
    with _Guard():
        rec = _read()
        if rec and alive(rec) and (rec["pid"] in ancestors(pid) or held_by_us(rec)):
            return None                                     # re-entrant
        if rec and alive(rec):
            return rec
        st = _stat(pid)
        _write({"pid": pid, "start": st[1] if st else 0, "command": command,
                "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "kind": kind})
        return None


def take(command, kind, wait=True, pid=None):
    """Takes the lab (see try_take); waits for the owner with a message
    naming it, or raises Busy at once when @wait is False."""
    said = False
    while True:
        rec = try_take(command, kind, pid)
        if rec is None:
            if said:
                print("bwss-lab: the lab is free; going on", file=sys.stderr, flush=True)
            return
        if not wait:
            raise Busy(rec)
        if not said:
            print("bwss-lab: the lab is in use by %s; waiting (--no-wait exits instead)"
                  % describe(rec), file=sys.stderr, flush=True)
            said = True
        time.sleep(POLL_S)


def release(pid=None):
    """Removes the record if @pid (default: this process) owns it."""
    pid = os.getpid() if pid is None else pid
    with _Guard():
        rec = _read()
        if rec is not None and rec.get("pid") == pid:
            os.unlink(OWNER_FILE)


def may_tear_down(force=False):
    """Whether `down` may remove the topology: nobody owns it, its owner is
    dead, it is ours (or an ancestor's), or @force.  Returns (ok, record);
    when ok, the record of an `up` (or a dead or forced owner) is removed;
    a live ancestor's `run` or `lock` keeps its record until it ends."""
    with _Guard():
        rec = _read()
        if not rec or not alive(rec):
            if rec is not None:
                os.unlink(OWNER_FILE)
            return True, rec
        mine = rec["pid"] in ancestors()
        if not mine and not force:
            return False, rec
        if force or rec.get("kind") == "up":
            os.unlink(OWNER_FILE)
        return True, rec


def current():
    """The live owner's record, or None."""
    with _Guard():
        rec = _read()
    return rec if rec and alive(rec) else None
