/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* adopt-proc.c — the user's other processes, read from /proc (see adopt-proc.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "adopt-helper.h"
#include "adopt-proc.h"
#include "sys.h"

#define CAP_SYS_PTRACE_BIT 19

/* Returns the socket inode fd link @target names ("socket:[123]"), 0 if it
 * is not a socket. */
static guint64
socket_inode (const char *target)
{
  guint64 ino = 0;
  if (g_str_has_prefix (target, "socket:[") && sscanf (target + 8, "%" G_GUINT64_FORMAT "]", &ino) == 1)
    return ino;
  return 0;
}

/* Returns TRUE if /proc/@name is a process of this user (its effective
 * uid; /proc/PID itself is root's when the process is not dumpable). */
static gboolean
is_users_process (const char *name, pid_t *pid)
{
  char *end;
  long v = strtol (name, &end, 10);
  if (*end != '\0' || v <= 0 || v > G_MAXINT)
    return FALSE;
  char path[64];
  struct stat st;
  g_snprintf (path, sizeof path, "/proc/%ld", v);
  if (stat (path, &st) != 0)
    return FALSE;
  if (st.st_uid != 0 ? st.st_uid != geteuid () : proc_foreign ((pid_t) v) != 0)
    return FALSE;
  *pid = (pid_t) v;
  return TRUE;
}

/* Adds the sockets of @wanted that @pid holds to @found.  Returns FALSE if
 * its fds may not be read (it is not dumpable). */
static gboolean
scan_fds (pid_t pid, GHashTable *wanted, GHashTable *found)
{
  char dir[64];
  g_snprintf (dir, sizeof dir, "/proc/%d/fd", (int) pid);
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) d = g_dir_open (dir, 0, &error);
  if (d == NULL)
    return !g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_ACCES)
           && !g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_PERM);
  const char *name;
  while ((name = g_dir_read_name (d))) {
    char link[64], target[64];
    g_snprintf (link, sizeof link, "%s/%s", dir, name);
    ssize_t n = readlink (link, target, sizeof target - 1);
    if (n <= 0)
      continue;
    target[n] = '\0';
    guint64 ino = socket_inode (target);
    if (ino == 0 || !g_hash_table_contains (wanted, &ino) || g_hash_table_contains (found, &ino))
      continue;
    AdoptHolder *h = g_new (AdoptHolder, 1);
    h->pid = pid;
    h->fd = atoi (name);
    guint64 *key = g_new (guint64, 1);
    *key = ino;
    g_hash_table_insert (found, key, h);
  }
  return TRUE;
}

void
adopt_proc_find_holders (GHashTable *wanted, GHashTable *found, pid_t skip_a, pid_t skip_b,
                         GArray *hidden)
{
  g_autoptr (GDir) d = g_dir_open ("/proc", 0, NULL);
  if (d == NULL)
    return;
  const char *name;
  pid_t pid;
  while ((name = g_dir_read_name (d)))
    if (is_users_process (name, &pid) && pid != skip_a && pid != skip_b
        && !scan_fds (pid, wanted, found) && hidden)
      g_array_append_val (hidden, pid);
}

gboolean
adopt_proc_holds (pid_t pid, int fd, guint64 inode)
{
  char link[64], target[64];
  g_snprintf (link, sizeof link, "/proc/%d/fd/%d", (int) pid, fd);
  ssize_t n = readlink (link, target, sizeof target - 1);
  if (n <= 0)
    return FALSE;
  target[n] = '\0';
  return socket_inode (target) == inode;
}

char *
adopt_proc_exe (pid_t pid)
{
  char link[64];
  g_snprintf (link, sizeof link, "/proc/%d/exe", (int) pid);
  return g_file_read_link (link, NULL);
}

char *
adopt_proc_comm (pid_t pid)
{
  char path[64];
  char *text = NULL;
  g_snprintf (path, sizeof path, "/proc/%d/comm", (int) pid);
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return g_strchomp (text);
}

char *
adopt_proc_cgroup (pid_t pid)
{
  char path[64];
  g_autofree char *text = NULL;
  g_snprintf (path, sizeof path, "/proc/%d/cgroup", (int) pid);
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (int i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], "0::"))      /* the unified (v2) hierarchy */
      return g_strdup (lines[i] + 3);
  return NULL;
}

int
adopt_proc_take (pid_t pid, int fd, guint64 inode)
{
  if (adopt_helper_forced ())
    return adopt_helper_take (pid, fd, inode, -EPERM);
  int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return -errno;
  int dup = (int) syscall (SYS_pidfd_getfd, pidfd, fd, 0);
  int err = errno;
  close (pidfd);
  if (dup < 0)
    return err == EPERM ? adopt_helper_take (pid, fd, inode, -EPERM) : -err;   /* Yama: bwss-sockd */
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

/* Returns TRUE if this process has CAP_SYS_PTRACE in its effective set. */
static gboolean
has_cap_sys_ptrace (void)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/status", &text, NULL, NULL))
    return FALSE;
  const char *p = strstr (text, "\nCapEff:");
  guint64 caps = p ? g_ascii_strtoull (p + 8, NULL, 16) : 0;
  return (caps >> CAP_SYS_PTRACE_BIT) & 1;
}

char *
adopt_proc_capability (gboolean *can)
{
  if (adopt_helper_forced ())
    return adopt_helper_capability (can);
  int self = (int) syscall (SYS_pidfd_open, getpid (), 0);
  int probe = self >= 0 ? (int) syscall (SYS_pidfd_getfd, self, 0, 0) : -1;
  int err = errno;
  if (self >= 0)
    close (self);
  if (probe >= 0)
    close (probe);
  else if (err == ENOSYS) {
    *can = FALSE;
    return g_strdup ("cannot adopt flows: the kernel has no pidfd_open/pidfd_getfd (Linux 5.6+)");
  }
  g_autofree char *scope = NULL;
  gboolean yama = g_file_get_contents ("/proc/sys/kernel/yama/ptrace_scope", &scope, NULL, NULL);
  int level = yama ? atoi (scope) : 0;
  gboolean cap = has_cap_sys_ptrace ();
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
