/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adopt-proc.h — what bwssd needs of the user's other processes: which of
 * them holds a socket, what they are (executable, cgroup), and a duplicate
 * of their socket (pidfd_getfd(2), Linux 5.6+: same user, and where Yama
 * restricts ptrace, CAP_SYS_PTRACE or being their ancestor).
 */
#ifndef BWSS_ADOPT_PROC_H
#define BWSS_ADOPT_PROC_H

#include <glib.h>
#include <sys/types.h>

typedef struct {
  pid_t pid;
  int   fd;
} AdoptHolder;

/* For every socket inode in @wanted (a set of guint64 *), finds a process of
 * this user (not @skip_a nor @skip_b) holding it, and inserts inode →
 * AdoptHolder (g_free) into @found.  Reads /proc/PID/fd of this user's
 * processes only (its effective uid).  @hidden, if not NULL, gets the pids
 * (pid_t) of this user's processes whose fds may not be read: a process
 * that is not dumpable (prctl(PR_SET_DUMPABLE, 0), some sandboxes) has its
 * /proc files owned by root, and only CAP_SYS_PTRACE reads them. */
void adopt_proc_find_holders (GHashTable *wanted, GHashTable *found, pid_t skip_a, pid_t skip_b,
                              GArray *hidden);

/* The executable's path, command name and cgroup v2 path of @pid; NULL if
 * unknown.  g_free() them. */
char *adopt_proc_exe (pid_t pid);
char *adopt_proc_comm (pid_t pid);
char *adopt_proc_cgroup (pid_t pid);

/* Duplicates fd @fd of @pid into this process (close-on-exec) if it is the
 * socket @inode.  Returns the new fd, or -errno: -EPERM (ptrace rules),
 * -ESRCH (gone), -ENOSYS (kernel before 5.6), -ESTALE (the fd is no longer
 * that socket). */
int adopt_proc_take (pid_t pid, int fd, guint64 inode);

/* Returns a sentence saying whose flows this process can adopt on this
 * machine and why (kernel, Yama's ptrace_scope, CAP_SYS_PTRACE); sets
 * *@can to FALSE if none.  g_free() it. */
char *adopt_proc_capability (gboolean *can);

/* Returns why a take failed with -@err, for messages (static). */
const char *adopt_proc_why (int err);

#endif
