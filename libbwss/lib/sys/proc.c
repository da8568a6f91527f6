/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.c — reading /proc/<pid>/{stat,status,comm,exe,cgroup,fd} and
 * /proc/sys/kernel/yama (see sys.h).  Every
 * function reads one small file and never blocks on another process.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sys.h"

/* Reads proc(5) fields 3 (state) and 22 (start time) of @pid.  Returns 0,
 * or -1 if there is no such task or the file cannot be parsed. */
static int
read_stat (pid_t pid, char *state, uint64_t *starttime)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return -1;
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = '\0';
  /* comm may hold spaces and parentheses: fields restart after the last ')' */
  char *p = strrchr (buf, ')');
  unsigned long long st = 0;
  char c = 0;
  if (p == NULL
      || sscanf (p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                 &c, &st) != 2)
    return -1;
  *state = c;
  *starttime = st;
  return 0;
}

uint64_t
proc_starttime (pid_t pid)
{
  char state;
  uint64_t st;
  return pid > 0 && read_stat (pid, &state, &st) == 0 ? st : 0;
}

uint64_t
proc_pid_namespace (void)
{
  struct stat st;
  return stat ("/proc/self/ns/pid", &st) == 0 ? (uint64_t) st.st_ino : 0;
}

bool
proc_alive (pid_t pid, uint64_t starttime)
{
  if (pid <= 0 || kill (pid, 0) != 0)     /* gone, or another user's */
    return false;
  char state;
  uint64_t st;
  if (read_stat (pid, &state, &st) != 0)
    return starttime == 0;                 /* no /proc: trust kill() alone */
  if (state == 'Z' || state == 'X')
    return false;
  return starttime == 0 || st == starttime;
}

int
proc_foreign (pid_t tid)
{
  char path[64], line[256];
  snprintf (path, sizeof path, "/proc/%d/status", (int) tid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return -1;
  int result = -1;
  while (fgets (line, sizeof line, f)) {
    unsigned long real, effective;
    if (sscanf (line, "Uid: %lu %lu", &real, &effective) == 2) {
      result = effective != (unsigned long) geteuid ();
      break;
    }
  }
  fclose (f);
  return result;
}

/* Writes "/proc/@pid/@what" (pid 0: "/proc/self/@what") to @path. */
static void
proc_path (char *path, size_t len, pid_t pid, const char *what)
{
  if (pid)
    snprintf (path, len, "/proc/%d/%s", (int) pid, what);
  else
    snprintf (path, len, "/proc/self/%s", what);
}

int
proc_comm (pid_t pid, char *comm, size_t len)
{
  char path[64];
  proc_path (path, sizeof path, pid, "comm");
  comm[0] = '\0';
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return -errno;
  if (fgets (comm, (int) len, f))
    comm[strcspn (comm, "\n")] = '\0';
  fclose (f);
  return 0;
}

int
proc_exe (pid_t pid, char *path, size_t len)
{
  char link[64];
  proc_path (link, sizeof link, pid, "exe");
  ssize_t n = readlink (link, path, len);
  if (n < 0)
    return -errno;
  if ((size_t) n >= len)
    return -ENAMETOOLONG;
  path[n] = '\0';
  return (int) n;
}

int
proc_exec_self (char *const argv[])
{
  execv ("/proc/self/exe", argv);
  return -errno;
}

int
proc_cgroup (pid_t pid, char *path, size_t len)
{
  char file[64], line[4096];
  proc_path (file, sizeof file, pid, "cgroup");
  FILE *f = fopen (file, "re");
  if (f == NULL)
    return -errno;
  int err = -ENOENT;
  while (err == -ENOENT && fgets (line, sizeof line, f))
    if (strncmp (line, "0::", 3) == 0) {        /* the unified (v2) hierarchy */
      line[strcspn (line, "\n")] = '\0';
      err = (size_t) snprintf (path, len, "%s", line + 3) < len ? 0 : -ENAMETOOLONG;
    }
  fclose (f);
  return err;
}

int
proc_cgroup_id (pid_t pid, uint64_t *id)
{
  char rel[4096], dir[4096 + 32];
  int err = proc_cgroup (pid, rel, sizeof rel);
  if (err)
    return err;
  struct stat st;
  if ((size_t) snprintf (dir, sizeof dir, "/sys/fs/cgroup%s", rel) >= sizeof dir)
    return -ENAMETOOLONG;
  struct statfs fs;
  if (stat (dir, &st) != 0 || statfs (dir, &fs) != 0)
    return -errno;
  /* a hybrid system mounts v1 controllers there and v2 elsewhere (or not) */
  if (!S_ISDIR (st.st_mode) || fs.f_type != CGROUP2_SUPER_MAGIC)
    return -ENOENT;
  *id = (uint64_t) st.st_ino;
  return 0;
}

int
proc_owner (pid_t pid, uid_t *uid)
{
  char path[64];
  struct stat st;
  snprintf (path, sizeof path, "/proc/%d", (int) pid);
  if (pid <= 0 || stat (path, &st) != 0)
    return pid <= 0 ? -EINVAL : -errno;
  *uid = st.st_uid;
  return 0;
}

/* Calls @fn for each numeric entry of the directory @path. */
static int
each_number (const char *path, bool (*fn) (int n, void *data), void *data)
{
  DIR *d = opendir (path);
  if (d == NULL)
    return -errno;
  int dfd = dirfd (d);
  struct dirent *e;
  while ((e = readdir (d))) {
    char *end;
    long v = strtol (e->d_name, &end, 10);
    if (*end != '\0' || end == e->d_name || v < 0 || v > INT32_MAX || v == dfd)
      continue;
    if (!fn ((int) v, data))
      break;
  }
  closedir (d);
  return 0;
}

typedef struct {
  bool (*fn) (pid_t pid, void *data);
  void *data;
} EachPid;

static bool
each_pid_one (int n, void *data)
{
  EachPid *e = data;
  return n == 0 || e->fn ((pid_t) n, e->data);
}

int
proc_each_pid (bool (*fn) (pid_t pid, void *data), void *data)
{
  EachPid e = { fn, data };
  return each_number ("/proc", each_pid_one, &e);
}

int
proc_each_fd (pid_t pid, bool (*fn) (int fd, void *data), void *data)
{
  char path[64];
  proc_path (path, sizeof path, pid, "fd");
  return each_number (path, fn, data);
}

uint64_t
proc_fd_socket (pid_t pid, int fd)
{
  char link[64], target[64];
  char what[32];
  snprintf (what, sizeof what, "fd/%d", fd);
  proc_path (link, sizeof link, pid, what);
  ssize_t n = readlink (link, target, sizeof target - 1);
  if (n <= 0)
    return 0;
  target[n] = '\0';
  uint64_t ino = 0;
  if (strncmp (target, "socket:[", 8) == 0 && sscanf (target + 8, "%" SCNu64 "]", &ino) == 1)
    return ino;
  return 0;
}

#ifndef KCMP_FILE
#define KCMP_FILE 0                     /* linux/kcmp.h */
#endif

int
proc_fd_same_file (pid_t pid, int fd, int mine)
{
#ifdef SYS_kcmp
  long r = syscall (SYS_kcmp, (long) getpid (), (long) pid, (long) KCMP_FILE, (long) mine, (long) fd);
  if (r == 0)
    return 1;
  if (r > 0 || errno == EBADF || errno == ESRCH)
    return 0;                           /* another file, none, or no such process */
  return errno == EACCES ? -EPERM : -errno;
#else
  (void) pid;
  (void) fd;
  (void) mine;
  return -ENOSYS;
#endif
}

int
proc_yama_scope (void)
{
  FILE *f = fopen ("/proc/sys/kernel/yama/ptrace_scope", "re");
  if (f == NULL)
    return errno == ENOENT ? -1 : 3;
  int scope = -1;
  if (fscanf (f, "%d", &scope) != 1 || scope < 0 || scope > 3)
    scope = 3;                 /* Yama is there but unreadable: the strictest */
  fclose (f);
  return scope;
}

bool
proc_self_has_cap (int cap)
{
  char line[256];
  FILE *f = fopen ("/proc/self/status", "re");
  if (f == NULL)
    return false;
  unsigned long long caps = 0;
  while (fgets (line, sizeof line, f))
    if (sscanf (line, "CapEff: %llx", &caps) == 1)
      break;
  fclose (f);
  return cap >= 0 && cap < 64 && ((caps >> cap) & 1);
}

int
proc_pidfd (pid_t pid)
{
  int fd = (int) syscall (SYS_pidfd_open, pid, 0);
  return fd < 0 ? -errno : fd;
}

bool
proc_pidfd_exited (int pidfd)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  return sys_poll (&p, 1, 0) != 0;       /* readable once its process exited */
}

int
proc_pidfd_signal (int pidfd, int sig)
{
  return syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0 ? 0 : -errno;
}

int
proc_take_fd (pid_t pid, int fd)
{
  int pidfd = proc_pidfd (pid);
  if (pidfd < 0)
    return pidfd;
  int dup = (int) syscall (SYS_pidfd_getfd, pidfd, fd, 0);
  int err = dup < 0 ? -errno : 0;
  close (pidfd);
  return dup < 0 ? err : dup;
}

int
proc_open_dir (pid_t pid)
{
  char path[32];
  snprintf (path, sizeof path, "/proc/%d", (int) pid);
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  return fd >= 0 ? fd : -errno;
}

int
proc_self_ns (const char *ns, struct stat *st)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/ns/%s", ns);
  return stat (path, st) == 0 ? 0 : -errno;
}

enum { SEEN_UID = 1, SEEN_GID = 2, SEEN_CAP = 4, SEEN_NNP = 8, SEEN_SECCOMP = 16 };

/* Parses the fields of @text (status) ProcStatus holds into @st. */
static void
parse_status (const char *text, ProcStatus *st)
{
  memset (st, 0, sizeof *st);
  for (const char *line = text; line && *line; line = strchr (line, '\n') ? strchr (line, '\n') + 1 : NULL) {
    if (sscanf (line, "Uid: %u %u %u %u", &st->uid[0], &st->uid[1], &st->uid[2], &st->uid[3]) == 4)
      st->seen |= SEEN_UID;
    else if (sscanf (line, "Gid: %u %u %u %u", &st->gid[0], &st->gid[1], &st->gid[2], &st->gid[3]) == 4)
      st->seen |= SEEN_GID;
    else if (strncmp (line, "CapPrm:", 7) == 0) {
      char *end;
      st->cap_prm = strtoull (line + 7, &end, 16);
      if (end != line + 7)
        st->seen |= SEEN_CAP;
    } else if (sscanf (line, "NoNewPrivs: %d", &st->no_new_privs) == 1)
      st->seen |= SEEN_NNP;
    else if (sscanf (line, "Seccomp: %d", &st->seccomp) == 1)
      st->seen |= SEEN_SECCOMP;
  }
}

int
proc_status_at (int dir, ProcStatus *st)
{
  int fd = openat (dir, "status", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return errno == ENOENT ? -ESRCH : -errno;
  char buf[8192];
  size_t len = 0;
  for (;;) {
    ssize_t n = read (fd, buf + len, sizeof buf - 1 - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int err = errno;
      close (fd);
      return -err;
    }
    if (n == 0 || (len += (size_t) n) == sizeof buf - 1)
      break;
  }
  close (fd);
  buf[len] = '\0';
  parse_status (buf, st);
  return st->seen == (SEEN_UID | SEEN_GID | SEEN_CAP | SEEN_NNP | SEEN_SECCOMP) ? 0 : -EPROTO;
}

bool
proc_ns_is_at (int dir, const char *ns, const struct stat *mine)
{
  char name[32];
  struct stat st;
  snprintf (name, sizeof name, "ns/%s", ns);
  return fstatat (dir, name, &st, 0) == 0 && st.st_dev == mine->st_dev && st.st_ino == mine->st_ino;
}

int
proc_fds_owner_at (int dir, uid_t *uid)
{
  struct stat st;
  if (fstatat (dir, "fd", &st, 0) != 0)
    return -errno;
  *uid = st.st_uid;
  return 0;
}

ssize_t
proc_label_at (int dir, char *label, size_t len)
{
  int fd = openat (dir, "attr/current", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  ssize_t n = read (fd, label, len);
  int err = errno;
  close (fd);
  return n < 0 ? -err : n;
}
