/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* adopt-watchdog.c — see adopt-watchdog.h. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "adopt-proc.h"
#include "adopt-watchdog.h"
#include "kernel.h"

enum { MSG_HOLD = 1, MSG_DROP = 2 };

typedef struct {
  uint32_t op;
  int32_t  pid;
  int32_t  fd;
  uint32_t clamp;
  uint64_t inode;
} Msg;

/* Closes every fd of this process but 0, 1, 2 and @keep. */
static void
close_others (int keep)
{
  DIR *d = opendir ("/proc/self/fd");
  if (d == NULL)
    return;
  int dfd = dirfd (d);
  struct dirent *e;
  while ((e = readdir (d)))
    if (e->d_name[0] != '.') {
      int fd = atoi (e->d_name);
      if (fd > 2 && fd != keep && fd != dfd)
        close (fd);
    }
  closedir (d);
}

/* Puts back the clamp of every socket in @held[0..@n). */
static void
restore_all (const Msg *held, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    int fd = adopt_proc_take (held[i].pid, held[i].fd, held[i].inode);
    if (fd < 0)
      continue;                        /* closed, or its process gone: nothing throttled */
    knob_set_clamp (fd, held[i].clamp);
    close (fd);
  }
}

/* The watchdog's life: records what bwssd holds until end-of-file on @sock. */
static void G_GNUC_NORETURN
watch (int sock)
{
  signal (SIGTERM, SIG_IGN);
  signal (SIGINT, SIG_IGN);
  signal (SIGHUP, SIG_IGN);
  prctl (PR_SET_NAME, "bwssd-watchdog");
  close_others (sock);
  Msg *held = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    Msg m;
    ssize_t r = recv (sock, &m, sizeof m, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r != (ssize_t) sizeof m)
      break;                           /* end-of-file: bwssd is gone */
    if (m.op == MSG_DROP || m.op == MSG_HOLD)
      for (size_t i = 0; i < n; i++)
        if (held[i].inode == m.inode)
          held[i] = held[--n];
    if (m.op == MSG_HOLD) {
      if (n == cap) {
        size_t nc = cap ? cap * 2 : 64;
        Msg *nh = realloc (held, nc * sizeof *nh);
        if (nh == NULL)
          continue;                    /* not recorded: bwssd still restores it itself */
        held = nh;
        cap = nc;
      }
      held[n++] = m;
    }
  }
  restore_all (held, n);
  _exit (0);
}

int
adopt_watchdog_start (AdoptWatchdog *w)
{
  int sv[2];
  w->sock = -1;
  w->pid = 0;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return -errno;
  pid_t pid = fork ();
  if (pid < 0) {
    int err = errno;
    close (sv[0]);
    close (sv[1]);
    return -err;
  }
  if (pid == 0) {
    close (sv[0]);
    watch (sv[1]);
  }
  close (sv[1]);
  w->sock = sv[0];
  w->pid = pid;
  return 0;
}

static gboolean
send_msg (AdoptWatchdog *w, const Msg *m)
{
  if (w->sock < 0)
    return FALSE;
  if (send (w->sock, m, sizeof *m, MSG_NOSIGNAL) == (ssize_t) sizeof *m)
    return TRUE;
  close (w->sock);
  w->sock = -1;
  return FALSE;
}

gboolean
adopt_watchdog_hold (AdoptWatchdog *w, pid_t pid, int fd, guint64 inode, guint32 clamp)
{
  Msg m = { .op = MSG_HOLD, .pid = pid, .fd = fd, .clamp = clamp, .inode = inode };
  return send_msg (w, &m);
}

gboolean
adopt_watchdog_drop (AdoptWatchdog *w, guint64 inode)
{
  Msg m = { .op = MSG_DROP, .inode = inode };
  return send_msg (w, &m);
}
