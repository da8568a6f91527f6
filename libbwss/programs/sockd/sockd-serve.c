/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sockd-serve.c — one exchange of bwss-sockd (see sockd-serve.h). */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sockd-serve.h"
#include "sys.h"

bool
sockd_reply (int conn, uint32_t status, uint64_t inode, int fd)
{
  SockdReply r = { .magic = BWSS_SOCKD_MAGIC, .status = status, .inode = inode };
  return sock_send_msg (conn, &r, sizeof r, fd, 0) == 0;
}

/* Writes one line on stderr in one write (the exchanges log at once). */
static void say (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

static void
say (const char *fmt, ...)
{
  char line[512];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (line, sizeof line - 1, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  if (n > (int) sizeof line - 2)
    n = (int) sizeof line - 2;
  line[n++] = '\n';
  ssize_t w = write (STDERR_FILENO, line, (size_t) n);
  (void) w;
}

void
sockd_serve (int conn, const SockdSelf *self, int timeout_ms)
{
  struct pollfd p = { .fd = conn, .events = POLLIN };
  int ready;
  do
    ready = poll (&p, 1, timeout_ms);
  while (ready < 0 && errno == EINTR);
  SockdRequest req;
  memset (&req, 0, sizeof req);
  ssize_t n = ready > 0 ? recv (conn, &req, sizeof req, MSG_DONTWAIT | MSG_TRUNC) : -1;
  SockdCaller c;
  SockdStatus s = sockd_check_caller (conn, self, &c);
  if (ready <= 0) {
    say ("bwss-sockd: uid %u pid %d: no request within %d ms: closed", (unsigned) c.uid, (int) c.pid,
         timeout_ms);
    return;
  }
  if (n == 0)
    return;                                /* it hung up without asking */
  if (s == SOCKD_OK && n != (ssize_t) sizeof req)
    s = SOCKD_BAD_REQUEST;                 /* a message of another size: nothing of it is read */
  int fd = -1, err = 0;
  if (s == SOCKD_OK)
    s = sockd_take (self, &c, &req, &fd, &err);
  bool sent = sockd_reply (conn, s, req.inode, fd);
  int send_err = errno;
  say ("bwss-sockd: uid %u pid %d: pid %d fd %d socket %" PRIu64 ": %s%s%s%s%s",
       (unsigned) c.uid, (int) c.pid, (int) req.pid, (int) req.fd, req.inode,
       s == SOCKD_OK ? "" : "refused: ", sockd_status_text (s),
       err ? " (" : "", err ? strerror (err) : "", err ? ")" : "");
  if (!sent)
    say ("bwss-sockd: uid %u pid %d: the answer could not be sent: %s", (unsigned) c.uid, (int) c.pid,
         strerror (send_err));
  if (fd >= 0)
    close (fd);
}
