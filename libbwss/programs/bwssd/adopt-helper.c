/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* adopt-helper.c — bwssd's side of bwss-sockd (see adopt-helper.h). */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "adopt-helper.h"
#include "sys.h"
#include "../sockd/sockd-proto.h"

static char *forced_path;              /* --adopt-helper */

gboolean
adopt_helper_option (const char *name, const char *value, gpointer data, GError **error)
{
  if (value == NULL || *value == '\0') {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s needs the helper's socket", name);
    return FALSE;
  }
  g_free (forced_path);
  forced_path = g_strdup (value);
  g_setenv ("BWSSD_ADOPT_HELPER", value, TRUE);   /* for what bwssd execs (a watchdog) */
  return TRUE;
}

const char *
adopt_helper_forced (void)
{
  if (forced_path)
    return forced_path;
  const char *env = g_getenv ("BWSSD_ADOPT_HELPER");
  return env && *env ? env : NULL;
}

gboolean
adopt_helper_present (void)
{
  struct stat st;
  return lstat (BWSS_SOCKD_PATH, &st) == 0 && S_ISSOCK (st.st_mode);
}

static int
refusal (SockdStatus status)
{
  return -(ADOPT_HELPER_ERRNO_BASE + (int) status);
}

/* Waits for readable @s at most ADOPT_HELPER_TIMEOUT_MS in all (bwssd's
 * signals interrupt it).  Returns TRUE if it is. */
static gboolean
wait_readable (int s)
{
  gint64 deadline = g_get_monotonic_time () + ADOPT_HELPER_TIMEOUT_MS * 1000;
  for (;;) {
    gint64 left = deadline - g_get_monotonic_time ();
    if (left <= 0)
      return FALSE;
    struct pollfd p = { .fd = s, .events = POLLIN };
    int r = poll (&p, 1, (int) ((left + 999) / 1000));
    if (r > 0)
      return TRUE;
    if (r == 0 || errno != EINTR)
      return FALSE;
  }
}

/* Reads the helper's answer about socket @inode on @s.  Returns what
 * adopt_helper_take() returns. */
static int
receive (int s, guint64 inode)
{
  if (!wait_readable (s))
    return refusal (SOCKD_TIMEOUT);
  SockdReply r;
  int fd, flags;
  ssize_t n = sock_recv_msg (s, &r, sizeof r, &fd, &flags);
  if (n == 0)
    return refusal (SOCKD_INTERNAL);    /* it hung up without answering */
  /* exactly one descriptor, with a grant only (more is MSG_CTRUNC) */
  gboolean ok = n == (ssize_t) sizeof r && !(flags & (MSG_TRUNC | MSG_CTRUNC))
                && r.magic == BWSS_SOCKD_MAGIC && r.inode == inode
                && (r.status == SOCKD_OK) == (fd >= 0);
  if (ok && r.status == SOCKD_OK && knob_fd_is (fd, inode))
    return fd;
  if (fd >= 0)
    close (fd);
  if (!ok)
    return refusal (SOCKD_PROTOCOL);
  switch (r.status) {
  case SOCKD_OK:                        /* not that socket after all */
  case SOCKD_STALE:
  case SOCKD_NO_SUCH_FD:
    return -ESTALE;
  case SOCKD_GONE:
    return -ESRCH;
  default:
    return refusal (r.status < SOCKD_N_STATUSES ? (SockdStatus) r.status : SOCKD_PROTOCOL);
  }
}

int
adopt_helper_take (pid_t pid, int fd, guint64 inode, int absent)
{
  const char *forced = adopt_helper_forced ();
  int s = sock_unix_connect (forced ? forced : BWSS_SOCKD_PATH, SOCK_NONBLOCK);
  if (s == -EAGAIN)
    return refusal (SOCKD_BUSY);        /* its backlog is full */
  if (s == -EMFILE || s == -ENFILE)
    return s;                           /* no socket to ask with */
  if (s < 0)
    return forced ? refusal (SOCKD_UNREACHABLE) : absent;
  SockdRequest req = { .magic = BWSS_SOCKD_MAGIC, .pid = pid, .fd = fd, .inode = inode };
  int got = send (s, &req, sizeof req, MSG_NOSIGNAL) == (ssize_t) sizeof req ? receive (s, inode)
                                                                              : refusal (SOCKD_UNREACHABLE);
  close (s);
  return got;
}

const char *
adopt_helper_why (int err)
{
#define WHY_ITEM(code, text) [code] = "bwss-sockd: " text,
  static const char *const why[] = { SOCKD_STATUSES (WHY_ITEM) };
#undef WHY_ITEM
  int status = err - ADOPT_HELPER_ERRNO_BASE;
  return status >= 0 && status < SOCKD_N_STATUSES ? why[status] : NULL;
}

char *
adopt_helper_capability (gboolean *can)
{
  const char *forced = adopt_helper_forced ();
  *can = TRUE;
  if (forced == NULL)
    return g_strdup ("can adopt the flows of its own descendants itself, and those of this user's other "
                     "dumpable processes through bwss-sockd (" BWSS_SOCKD_PATH "): Yama ptrace_scope "
                     "is 1 and bwssd lacks CAP_SYS_PTRACE (see docs/adopt.md)");
  struct stat st;
  gboolean there = lstat (forced, &st) == 0 && S_ISSOCK (st.st_mode);
  return g_strdup_printf ("adopts only through bwss-sockd at %s (forced; never pidfd_getfd itself): the "
                          "flows of this user's dumpable processes%s", forced,
                          there ? "" : " (nothing listens there yet: the flows seen meanwhile are "
                                       "listed as not adopted)");
}
