/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sockinfo.c — what a socket says about itself and its peer (socket(7),
 * unix(7)): its kind, whether it listens, who is at the other end of a
 * UNIX socket.  One getsockopt(2) each; and the UNIX sockets the domain
 * and bwss-sockd talk over: connected, bound, one message sent or received
 * with a descriptor, and the poll(2) and close(2) they use.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include "sys.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77         /* Linux 6.5 */
#endif

/* Reads the int option @name of level SOL_SOCKET.  0 or -errno. */
static int
get_int (int fd, int name, int *value)
{
  socklen_t len = sizeof *value;
  return getsockopt (fd, SOL_SOCKET, name, value, &len) == 0 ? 0 : -errno;
}

int
sock_kind (int fd, int *domain, int *type, int *protocol)
{
  int err;
  if ((err = get_int (fd, SO_DOMAIN, domain)) != 0 || (err = get_int (fd, SO_TYPE, type)) != 0)
    return err;
  return get_int (fd, SO_PROTOCOL, protocol);
}

int
sock_listening (int fd)
{
  int listening = 0;
  int err = get_int (fd, SO_ACCEPTCONN, &listening);
  return err ? err : listening != 0;
}

int
sock_peer_cred (int fd, struct ucred *cr)
{
  socklen_t len = sizeof *cr;
  return getsockopt (fd, SOL_SOCKET, SO_PEERCRED, cr, &len) == 0 ? 0 : -errno;
}

int
sock_peer_pidfd (int fd)
{
  int pidfd = -1;
  int err = get_int (fd, SO_PEERPIDFD, &pidfd);
  return err ? err : pidfd >= 0 ? pidfd : -ESRCH;
}

int
sock_peer_label (int fd, char *label, size_t *len)
{
  socklen_t l = (socklen_t) *len;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERSEC, label, &l) != 0)
    return -errno;
  *len = l;
  return 0;
}

/* Fills @sa with the address of the UNIX socket file @path.  0 or
 * -ENAMETOOLONG. */
static int
unix_address (const char *path, struct sockaddr_un *sa)
{
  memset (sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  if (strlen (path) >= sizeof sa->sun_path)
    return -ENAMETOOLONG;
  strcpy (sa->sun_path, path);
  return 0;
}

int
sock_unix_connect (const char *path, int flags)
{
  struct sockaddr_un sa;
  int err = unix_address (path, &sa);
  if (err)
    return err;
  int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | flags, 0);
  if (fd < 0)
    return -errno;
  if (connect (fd, (struct sockaddr *) &sa, sizeof sa) == 0)
    return fd;
  err = -errno;
  sys_close (fd);
  return err;
}

int
sock_unix_listen (const char *path, mode_t mode)
{
  struct sockaddr_un sa;
  int err = unix_address (path, &sa);
  if (err)
    return err;
  int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -errno;
  mode_t old = umask (~mode & 0777);     /* the file is made with @mode: no moment with more */
  int r = bind (fd, (struct sockaddr *) &sa, sizeof sa);
  umask (old);
  if (r != 0 || listen (fd, 64) != 0) {
    err = -errno;
    sys_close (fd);
    return err;
  }
  return fd;
}

int
sock_systemd_listener (void)
{
  const char *pid = getenv ("LISTEN_PID"), *fds = getenv ("LISTEN_FDS");
  if (pid == NULL || fds == NULL || strtol (pid, NULL, 10) != (long) getpid ())
    return -ENOENT;
  int one = strcmp (fds, "1") == 0, domain = 0, type = 0, proto = 0;
  unsetenv ("LISTEN_PID");
  unsetenv ("LISTEN_FDS");
  unsetenv ("LISTEN_FDNAMES");
  if (!one || sock_kind (3, &domain, &type, &proto) != 0 || domain != AF_UNIX
      || type != SOCK_SEQPACKET || sock_listening (3) != 1)
    return -EINVAL;
  if (fcntl (3, F_SETFD, FD_CLOEXEC) != 0 || fcntl (3, F_SETFL, O_NONBLOCK) != 0)
    return -errno;
  return 3;
}

int
sock_systemd_notify (const char *state)
{
  const char *path = getenv ("NOTIFY_SOCKET");
  if (path == NULL || path[0] == '\0')
    return 0;
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  size_t len = strlen (path);
  /* an abstract name starts with a NUL byte and has no terminating one */
  if ((path[0] != '/' && path[0] != '@') || len < 2 || len > sizeof addr.sun_path - (path[0] == '/'))
    return -EINVAL;
  memcpy (addr.sun_path, path, len);
  if (path[0] == '@')
    addr.sun_path[0] = '\0';
  socklen_t alen = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + len + (path[0] == '/'));
  int fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -errno;
  ssize_t sent;
  do
    sent = sendto (fd, state, strlen (state), MSG_NOSIGNAL, (struct sockaddr *) &addr, alen);
  while (sent < 0 && errno == EINTR);
  int err = sent < 0 ? -errno : 1;
  close (fd);
  return err;
}

int
sock_send_msg (int fd, const void *msg, size_t len, int pass, uint64_t wait_us)
{
  struct iovec iov = { .iov_base = (void *) msg, .iov_len = len };
  union { char buf[CMSG_SPACE (sizeof (int))]; struct cmsghdr align; } u;
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (pass >= 0) {
    memset (&u, 0, sizeof u);
    mh.msg_control = u.buf;
    mh.msg_controllen = sizeof u.buf;
    struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN (sizeof (int));
    memcpy (CMSG_DATA (cm), &pass, sizeof pass);
  }
  uint64_t end = bwss__clock_now_us () + wait_us;
  for (;;) {
    ssize_t n = sendmsg (fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == (ssize_t) len)
      return 0;
    if (n >= 0)
      return -EMSGSIZE;                  /* a stream socket took part of it */
    int e = errno;
    if (e == EINTR)
      continue;
    uint64_t now = bwss__clock_now_us ();
    if (e != EAGAIN || now >= end)
      return -e;
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    sys_poll (&p, 1, (int) ((end - now + 999) / 1000));
  }
}

ssize_t
sock_recv_msg (int fd, void *msg, size_t len, int *pass, int *flags)
{
  union { char buf[CMSG_SPACE (4 * sizeof (int))]; struct cmsghdr align; } u;
  struct iovec iov = { .iov_base = msg, .iov_len = len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf };
  ssize_t n;
  while ((n = (ssize_t) syscall (SYS_recvmsg, fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) < 0
         && errno == EINTR)
    ;
  *pass = -1;
  if (flags)
    *flags = 0;
  if (n < 0)
    return -errno;
  int got = mh.msg_flags;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR (&mh); cm; cm = CMSG_NXTHDR (&mh, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
      continue;
    for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int); k++) {
      int x;
      memcpy (&x, CMSG_DATA (cm) + k * sizeof (int), sizeof x);
      if (*pass < 0) {
        *pass = x;
      } else {
        sys_close (x);                   /* one descriptor a message */
        got |= MSG_CTRUNC;
      }
    }
  }
  if (flags)
    *flags = got;
  return n;
}

int
sys_close (int fd)
{
  return (int) syscall (SYS_close, fd);
}

int
sys_poll (struct pollfd *p, nfds_t n, int ms)
{
  struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000 };
  return (int) syscall (SYS_ppoll, p, n, ms < 0 ? NULL : &ts, NULL, (size_t) 0);
}
