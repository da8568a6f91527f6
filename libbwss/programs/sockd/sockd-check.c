/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sockd-check.c — bwss-sockd's rules (see sockd-check.h). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sys.h"
#include "sockd-check.h"

/* A process: its pidfd and its /proc directory, the same process. */
typedef struct {
  int pidfd;
  int dir;
} Task;

int
sockd_self_init (SockdSelf *self)
{
  int err = proc_self_ns ("user", &self->user_ns);
  return err ? err : proc_self_ns ("pid", &self->pid_ns);
}

/* ---- /proc ---- */

/* Returns true if the four ids of @ids are all @id. */
static bool
all_are (const unsigned ids[4], unsigned id)
{
  return ids[0] == id && ids[1] == id && ids[2] == id && ids[3] == id;
}

static void
task_close (Task *p)
{
  if (p->dir >= 0)
    close (p->dir);
  if (p->pidfd >= 0)
    close (p->pidfd);
  p->dir = p->pidfd = -1;
}

/* Opens /proc/@pid for the process @pidfd (taken over: closed on failure).
 * Returns SOCKD_OK, or SOCKD_GONE if it exited meanwhile (the pid may name
 * another process now). */
static SockdStatus
task_open_dir (pid_t pid, int pidfd, Task *p)
{
  p->pidfd = pidfd;
  p->dir = proc_open_dir (pid);
  if (p->dir < 0 || proc_pidfd_exited (pidfd)) {   /* alive after the open: the directory is its */
    task_close (p);
    return SOCKD_GONE;
  }
  return SOCKD_OK;
}

/* Opens @pid: a pidfd first, then its /proc directory. */
static SockdStatus
task_open (pid_t pid, Task *p)
{
  p->pidfd = p->dir = -1;
  int pidfd = proc_pidfd (pid);
  if (pidfd < 0)
    return pidfd == -EINVAL ? SOCKD_BAD_REQUEST : SOCKD_GONE;   /* EINVAL: a thread, not a process */
  return task_open_dir (pid, pidfd, p);
}

/* ---- the caller ---- */

/* Returns true if @label (a security module's context) is unconfined:
 * none, AppArmor's "unconfined", or an AppArmor profile in unconfined
 * mode ("NAME (unconfined)"). */
static bool
label_unconfined (char *label, size_t len)
{
  while (len > 0 && (label[len - 1] == '\n' || label[len - 1] == '\0'))
    len--;
  label[len] = '\0';
  static const char mode[] = " (unconfined)";
  return len == 0 || strcmp (label, "unconfined") == 0
         || (len > sizeof mode - 1 && strcmp (label + len - (sizeof mode - 1), mode) == 0);
}

/* Returns true if no security module confines the peer of @conn (its /proc
 * directory @dir): SO_PEERSEC, else attr/current, else no module labels. */
static bool
caller_unconfined (int conn, int dir)
{
  char label[256];
  size_t len = sizeof label - 1;
  int err = sock_peer_label (conn, label, &len);
  if (err == 0)
    return label_unconfined (label, len < sizeof label ? len : sizeof label - 1);
  if (err != -ENOPROTOOPT)
    return false;
  ssize_t n = proc_label_at (dir, label, sizeof label - 1);
  if (n == -ENOENT)
    return true;                           /* a kernel without security modules */
  if (n < 0)
    return n == -EINVAL;                   /* no module gives the process a label */
  return label_unconfined (label, (size_t) n);
}

/* The peer's process: SO_PEERPIDFD (Linux 6.5) names the process that
 * connected, whatever happened to its pid since; before 6.5, its pid. */
static SockdStatus
caller_open (int conn, pid_t pid, Task *p)
{
  p->pidfd = p->dir = -1;
  int pidfd = sock_peer_pidfd (conn);
  if (pidfd >= 0) {
    fcntl (pidfd, F_SETFD, FD_CLOEXEC);
    return task_open_dir (pid, pidfd, p);
  }
  return task_open (pid, p);
}

SockdStatus
sockd_check_caller (int conn, const SockdSelf *self, SockdCaller *caller)
{
  struct ucred cr;
  memset (caller, 0, sizeof *caller);
  if (sock_peer_cred (conn, &cr) != 0)
    return SOCKD_INTERNAL;
  caller->pid = cr.pid;
  caller->uid = cr.uid;
  caller->gid = cr.gid;
  if (cr.pid <= 0)
    return SOCKD_CALLER_NAMESPACE;         /* not in the service's pid namespace */
  if (cr.uid == 0)
    return SOCKD_CALLER_ROOT;
  Task p;
  SockdStatus s = caller_open (conn, cr.pid, &p);
  if (s != SOCKD_OK)
    return s == SOCKD_BAD_REQUEST ? SOCKD_INTERNAL : s;
  ProcStatus st = { 0 };
  if (proc_status_at (p.dir, &st) != 0)
    s = SOCKD_GONE;
  else if (!all_are (st.uid, cr.uid) || !all_are (st.gid, cr.gid))
    s = SOCKD_CALLER_IDS;
  else if (st.no_new_privs != 0 || st.seccomp != 0)
    s = SOCKD_CALLER_SANDBOXED;
  else if (!proc_ns_is_at (p.dir, "user", &self->user_ns) || !proc_ns_is_at (p.dir, "pid", &self->pid_ns))
    s = SOCKD_CALLER_NAMESPACE;
  else if (!caller_unconfined (conn, p.dir))
    s = SOCKD_CALLER_CONFINED;
  else if (proc_pidfd_exited (p.pidfd))
    s = SOCKD_GONE;                        /* what was read may be another process's */
  caller->cap_prm = st.cap_prm;
  task_close (&p);
  return s;
}

/* ---- the holder ---- */

/* The holder's rules, on its /proc directory @dir (sockd-check.h). */
static SockdStatus
check_holder (int dir, const SockdSelf *self, const SockdCaller *c)
{
  ProcStatus st;
  if (proc_status_at (dir, &st) != 0)
    return SOCKD_GONE;
  if (!all_are (st.uid, c->uid))
    return SOCKD_OTHER_USER;
  if (!all_are (st.gid, c->gid))
    return SOCKD_OTHER_GROUP;
  if ((st.cap_prm & ~c->cap_prm) != 0)
    return SOCKD_CAPABILITIES;
  if (!proc_ns_is_at (dir, "user", &self->user_ns))
    return SOCKD_TARGET_NAMESPACE;
  /* task_dump_owner(): /proc/PID/fd (not a world-readable directory) is
   * the effective uid's while the process is dumpable (SUID_DUMP_USER),
   * root's (of its mm's user namespace, here the service's) otherwise, and
   * root's when it has no mm (a zombie, a kernel thread) */
  uid_t fds_owner;
  if (proc_fds_owner_at (dir, &fds_owner) != 0)
    return SOCKD_GONE;
  if (fds_owner != c->uid)
    return SOCKD_NOT_DUMPABLE;
  return SOCKD_OK;
}

/* ---- the socket ---- */

/* The socket's rules, on the duplicate @fd (sockd-check.h).  *@err gets
 * the errno of a SOCKD_INTERNAL. */
static SockdStatus
check_socket (int fd, uint64_t inode, const SockdCaller *c, int *err)
{
  struct stat st;
  int domain = 0, type = 0, proto = 0;
  if (fstat (fd, &st) != 0 || !S_ISSOCK (st.st_mode) || sock_kind (fd, &domain, &type, &proto) != 0)
    return SOCKD_NOT_TCP;
  if ((domain != AF_INET && domain != AF_INET6) || type != SOCK_STREAM || proto != IPPROTO_TCP)
    return SOCKD_NOT_TCP;
  if ((uint64_t) st.st_ino != inode)
    return SOCKD_STALE;
  if (st.st_uid != c->uid)                 /* the socket inode's owner: who created it */
    return SOCKD_SOCKET_OTHER_USER;
  KnobInfo k;                               /* what names it to sock_diag */
  if (knob_diag_id (fd, &k) != 0)
    return SOCKD_NOT_CONNECTED;
  KnobDump want = { .items = &k, .n = 1, .cap = 1 }, got = { 0 };
  int qerr = knob_query (&want, &got);     /* the kernel's word, by the socket's cookie */
  SockdStatus s = SOCKD_OK;
  if (qerr != 0) {
    *err = -qerr;
    s = SOCKD_INTERNAL;
  } else if (got.n != 1 || got.items[0].inode != inode)
    s = SOCKD_NOT_CONNECTED;
  else if (got.items[0].uid != c->uid)
    s = SOCKD_SOCKET_OTHER_USER;
  else if (got.items[0].state != SYS_TCP_ESTABLISHED && got.items[0].state != SYS_TCP_FIN_WAIT1
           && got.items[0].state != SYS_TCP_FIN_WAIT2 && got.items[0].state != SYS_TCP_CLOSE_WAIT)
    s = SOCKD_NOT_CONNECTED;
  knob_dump_clear (&got);
  return s;
}

SockdStatus
sockd_take (const SockdSelf *self, const SockdCaller *c, const SockdRequest *req, int *fd, int *err)
{
  *fd = -1;
  *err = 0;
  if (req->magic != BWSS_SOCKD_MAGIC || req->reserved != 0 || req->pid <= 0 || req->fd < 0
      || req->inode == 0)
    return SOCKD_BAD_REQUEST;
  if (proc_yama_scope () >= 2)
    return SOCKD_YAMA_STRICT;
  Task p;
  SockdStatus s = task_open (req->pid, &p);
  if (s != SOCKD_OK)
    return s;
  s = check_holder (p.dir, self, c);
  if (s != SOCKD_OK) {
    task_close (&p);
    return s;
  }
  int dup = (int) syscall (SYS_pidfd_getfd, p.pidfd, req->fd, 0);
  if (dup < 0) {
    *err = errno;
    task_close (&p);
    return *err == EBADF ? SOCKD_NO_SUCH_FD : *err == ESRCH ? SOCKD_GONE : SOCKD_INTERNAL;
  }
  s = check_socket (dup, req->inode, c, err);
  if (s == SOCKD_OK) {                     /* the holder may have changed while we took it */
    SockdStatus again = !proc_pidfd_exited (p.pidfd) ? check_holder (p.dir, self, c) : SOCKD_GONE;
    if (again != SOCKD_OK)
      s = again == SOCKD_GONE ? SOCKD_GONE : SOCKD_CHANGED;
  }
  task_close (&p);
  if (s != SOCKD_OK) {
    close (dup);
    return s;
  }
  *fd = dup;
  return SOCKD_OK;
}
