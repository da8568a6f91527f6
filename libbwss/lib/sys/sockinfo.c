/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sockinfo.c — what a socket says about itself and its peer (socket(7),
 * unix(7)): its kind, whether it listens, who is at the other end of a
 * UNIX socket, the names sock_diag knows it by.  One getsockopt(2) each;
 * and one message sent on a UNIX socket, a descriptor with it, and the
 * poll(2) it waits with.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "sys.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57            /* Linux 4.13 */
#endif
#ifndef SO_BINDTOIFINDEX
#define SO_BINDTOIFINDEX 62     /* Linux 5.1 */
#endif
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

int
sock_cookie (int fd, uint64_t *cookie)
{
  socklen_t len = sizeof *cookie;
  return getsockopt (fd, SOL_SOCKET, SO_COOKIE, cookie, &len) == 0 ? 0 : -errno;
}

int
sock_bound_ifindex (int fd, int *ifindex)
{
  return get_int (fd, SO_BINDTOIFINDEX, ifindex);
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

int
sys_poll (struct pollfd *p, nfds_t n, int ms)
{
  struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000 };
  return (int) syscall (SYS_ppoll, p, n, ms < 0 ? NULL : &ts, NULL, (size_t) 0);
}
