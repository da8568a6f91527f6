/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* adopt-proc.c — the user's other processes, read from /proc through the
 * system layer (see adopt-proc.h). */
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include "adopt-helper.h"
#include "adopt-proc.h"
#include "sys.h"

#define CAP_SYS_PTRACE_BIT 19

/* Returns TRUE if @pid is a process of this user (its effective uid;
 * /proc/PID itself is root's when the process is not dumpable). */
static gboolean
is_users_process (pid_t pid)
{
  uid_t owner;
  if (proc_owner (pid, &owner) != 0)
    return FALSE;
  return owner != 0 ? owner == geteuid () : proc_foreign (pid) == 0;
}

/* One process's fds: the sockets of @wanted it holds go to @found. */
typedef struct {
  pid_t       pid;
  GHashTable *wanted, *found;
} FdScan;

static bool
scan_fd (int fd, void *data)
{
  FdScan *s = data;
  guint64 ino = proc_fd_socket (s->pid, fd);
  if (ino == 0 || !g_hash_table_contains (s->wanted, &ino) || g_hash_table_contains (s->found, &ino))
    return true;
  AdoptHolder h = { s->pid, fd };
  g_hash_table_insert (s->found, g_memdup2 (&ino, sizeof ino), g_memdup2 (&h, sizeof h));
  return true;
}

/* Adds the sockets of @wanted that @pid holds to @found.  Returns FALSE if
 * its fds may not be read (it is not dumpable). */
static gboolean
scan_fds (pid_t pid, GHashTable *wanted, GHashTable *found)
{
  FdScan s = { pid, wanted, found };
  int err = proc_each_fd (pid, scan_fd, &s);
  return err != -EACCES && err != -EPERM;
}

/* Every process of this user but two: whose sockets bwssd wants. */
typedef struct {
  GHashTable *wanted, *found;
  pid_t       skip_a, skip_b;
  GArray     *hidden;
} PidScan;

static bool
scan_pid (pid_t pid, void *data)
{
  PidScan *s = data;
  if (is_users_process (pid) && pid != s->skip_a && pid != s->skip_b
      && !scan_fds (pid, s->wanted, s->found) && s->hidden)
    g_array_append_val (s->hidden, pid);
  return true;
}

void
adopt_proc_find_holders (GHashTable *wanted, GHashTable *found, pid_t skip_a, pid_t skip_b,
                         GArray *hidden)
{
  PidScan s = { wanted, found, skip_a, skip_b, hidden };
  proc_each_pid (scan_pid, &s);
}

char *
adopt_proc_exe (pid_t pid)
{
  char path[PATH_MAX];
  return proc_exe (pid, path, sizeof path) > 0 ? g_strdup (path) : NULL;
}

char *
adopt_proc_comm (pid_t pid)
{
  char comm[64];
  return proc_comm (pid, comm, sizeof comm) == 0 ? g_strchomp (g_strdup (comm)) : NULL;
}

char *
adopt_proc_cgroup (pid_t pid)
{
  char path[PATH_MAX];
  return proc_cgroup (pid, path, sizeof path) == 0 ? g_strdup (path) : NULL;
}

int
adopt_proc_take (pid_t pid, int fd, guint64 inode)
{
  if (adopt_helper_forced ())
    return adopt_helper_take (pid, fd, inode, -EPERM);
  int dup = proc_take_fd (pid, fd);
  if (dup < 0)
    return dup == -EPERM ? adopt_helper_take (pid, fd, inode, -EPERM) : dup;   /* Yama: bwss-sockd */
  if (!knob_fd_is (dup, inode)) {
    close (dup);
    return -ESTALE;
  }
  return dup;
}

const char *
adopt_proc_why (int err)
{
  if (adopt_helper_why (err))
    return adopt_helper_why (err);
  switch (err) {
  case EPERM:
    return "not permitted (Yama ptrace_scope, or the process is not dumpable: "
           "either needs CAP_SYS_PTRACE)";
  case ESRCH:
    return "the process is gone";
  case ENOSYS:
    return "the kernel has no pidfd_getfd (Linux 5.6+)";
  case ESTALE:
  case EBADF:
    return "the socket was closed meanwhile";
  case EMFILE:
  case ENFILE:
    return "bwssd has too many open files";
  default:
    return g_strerror (err);
  }
}

char *
adopt_proc_capability (gboolean *can)
{
  if (adopt_helper_forced ())
    return adopt_helper_capability (can);
  int probe = proc_take_fd (getpid (), 0);
  if (probe >= 0)
    close (probe);
  else if (probe == -ENOSYS) {
    *can = FALSE;
    return g_strdup ("cannot adopt flows: the kernel has no pidfd_open/pidfd_getfd (Linux 5.6+)");
  }
  int level = proc_yama_scope ();
  gboolean yama = level >= 0;
  gboolean cap = proc_self_has_cap (CAP_SYS_PTRACE_BIT);
  *can = TRUE;
  if (!yama)
    return g_strdup ("can adopt the flows of every process of this user (no Yama in this kernel)");
  if (level == 0)
    return g_strdup ("can adopt the flows of every process of this user (Yama ptrace_scope 0)");
  if (level == 1 && cap)
    return g_strdup ("can adopt the flows of every process of this user "
                     "(Yama ptrace_scope 1, and bwssd has CAP_SYS_PTRACE)");
  if (level == 1 && adopt_helper_present ())
    return adopt_helper_capability (can);
  if (level == 1)
    return g_strdup ("can adopt only the flows of its own descendants: Yama ptrace_scope is 1 and "
                     "bwssd lacks CAP_SYS_PTRACE (flows of other processes are listed as not adopted; "
                     "see docs/adopt.md)");
  if (level == 2 && cap)
    return g_strdup ("can adopt the flows of every process of this user "
                     "(Yama ptrace_scope 2, and bwssd has CAP_SYS_PTRACE)");
  *can = FALSE;
  return g_strdup_printf ("cannot adopt flows: Yama ptrace_scope is %d%s", level,
                          level == 2 ? " and bwssd lacks CAP_SYS_PTRACE" : " (no process may ptrace)");
}
