/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * knobs.c — the receive window of a real TCP socket, and measurements.
 *
 * The window is set with TCP_WINDOW_CLAMP on an established socket (Linux
 * supports a mid-stream clamp since 5.13, fixed in 6.7): the receiver never
 * advertises more than the clamp, so a sender limited by it sends one clamp
 * per RTT — eq. (1).  Lowering it never retracts a window already offered
 * (unless net.ipv4.tcp_shrink_window=1), so a decrease bites within about
 * one RTT, inside the FCS hold.  docs/sockets.md has the measured table and
 * why SO_RCVBUF is not used.
 *
 * Measurement comes from the kernel, not from the application's reads:
 * TCP_INFO for a socket we hold, sock_diag (the interface `ss` uses) for
 * every socket of the namespace, keyed by inode — so the controller sees the
 * flows of other processes, including ones that stopped reading.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "knobs.h"

#ifndef TCP_WINDOW_CLAMP
#define TCP_WINDOW_CLAMP 10
#endif

/* TCP states (include/net/tcp_states.h; not in the uapi headers, and glibc's
 * netinet/tcp.h, which has them, lacks tcpi_bytes_received) */
enum {
  ST_ESTABLISHED = 1,
  ST_FIN_WAIT1 = 4,
  ST_FIN_WAIT2 = 5,
  ST_CLOSE_WAIT = 8,
};

bool
knob_is_connected_tcp (int fd)
{
  int type = 0, domain = 0, proto = 0;
  socklen_t len = sizeof type;
  if (getsockopt (fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
    return false;
  len = sizeof domain;
  if (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0
      || (domain != AF_INET && domain != AF_INET6))
    return false;
  len = sizeof proto;
  if (getsockopt (fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) != 0 || proto != IPPROTO_TCP)
    return false;
  struct tcp_info ti;
  len = sizeof ti;
  memset (&ti, 0, sizeof ti);
  if (getsockopt (fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
    return false;
  return ti.tcpi_state == ST_ESTABLISHED;
}

static void
fill_from_tcp_info (KnobInfo *out, const struct tcp_info *ti, socklen_t len)
{
  out->state = ti->tcpi_state;
  /* a receive-mostly flow has no data of its own to time: its rcv_rtt is
   * the estimate (measured per window of data received) */
  out->rtt_us = ti->tcpi_rcv_rtt ? ti->tcpi_rcv_rtt : ti->tcpi_rtt;
  out->min_rtt_us = 0;
  if (len >= offsetof (struct tcp_info, tcpi_min_rtt) + sizeof ti->tcpi_min_rtt)
    out->min_rtt_us = ti->tcpi_min_rtt == ~0u ? 0 : ti->tcpi_min_rtt;
  out->mss = ti->tcpi_rcv_mss;
  out->window_clamp = ti->tcpi_rcv_ssthresh;
  out->bytes_received = 0;
  if (len >= offsetof (struct tcp_info, tcpi_bytes_received) + sizeof ti->tcpi_bytes_received)
    out->bytes_received = ti->tcpi_bytes_received;
}

int
knob_read_info (int fd, KnobInfo *out)
{
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  struct stat st;
  memset (&ti, 0, sizeof ti);
  if (getsockopt (fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
    return -errno;
  if (fstat (fd, &st) != 0)
    return -errno;
  memset (out, 0, sizeof *out);
  out->inode = st.st_ino;
  out->uid = st.st_uid;
  fill_from_tcp_info (out, &ti, len);
  return 0;
}

bool
knob_fd_is (int fd, uint64_t inode)
{
  struct stat st;
  return fstat (fd, &st) == 0 && (uint64_t) st.st_ino == inode;
}

int
knob_get_clamp (int fd, uint32_t *bytes)
{
  int v = 0;
  socklen_t len = sizeof v;
  if (getsockopt (fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v, &len) != 0)
    return -errno;
  *bytes = (uint32_t) v;
  return 0;
}

int
knob_set_clamp (int fd, uint32_t bytes)
{
  /* the kernel takes an int; windows above 2^30 do not exist (scale 14) */
  int v = bytes > (1u << 30) ? (1 << 30) : (int) bytes;
  if (setsockopt (fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v, sizeof v) != 0)
    return -errno;
  return 0;
}

int
knob_set_rcvbuf (int fd, uint32_t bytes)
{
  int v = bytes > (uint32_t) INT_MAX ? INT_MAX : (int) bytes;
  return setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v) == 0 ? 0 : -errno;
}

int
knob_restore_rcvbuf (int fd)
{
  return knob_set_rcvbuf (fd, (uint32_t) INT_MAX);   /* the kernel caps it at rmem_max */
}

static void
format_addr (const struct sockaddr_storage *ss, char *buf, size_t len)
{
  char host[INET6_ADDRSTRLEN] = "?";
  if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *in = (const void *) ss;
    inet_ntop (AF_INET, &in->sin_addr, host, sizeof host);
    snprintf (buf, len, "%s:%u", host, ntohs (in->sin_port));
  } else if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const void *) ss;
    inet_ntop (AF_INET6, &in6->sin6_addr, host, sizeof host);
    snprintf (buf, len, "[%s]:%u", host, ntohs (in6->sin6_port));
  } else {
    snprintf (buf, len, "?");
  }
}

void
knob_endpoints (int fd, char *local, size_t local_len, char *remote, size_t remote_len)
{
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  memset (&ss, 0, sizeof ss);
  if (getsockname (fd, (struct sockaddr *) &ss, &len) == 0)
    format_addr (&ss, local, local_len);
  else
    snprintf (local, local_len, "?");
  len = sizeof ss;
  memset (&ss, 0, sizeof ss);
  if (getpeername (fd, (struct sockaddr *) &ss, &len) == 0)
    format_addr (&ss, remote, remote_len);
  else
    snprintf (remote, remote_len, "?");
}

/* ---- sock_diag ---- */

static int
dump_push (KnobDump *d, const KnobInfo *k)
{
  if (d->n == d->cap) {
    size_t cap = d->cap ? 2 * d->cap : 64;
    KnobInfo *items = realloc (d->items, cap * sizeof *items);
    if (items == NULL)
      return -ENOMEM;
    d->items = items;
    d->cap = cap;
  }
  d->items[d->n++] = *k;
  return 0;
}

/* One NETLINK_SOCK_DIAG dump of the TCP sockets of @family. */
static int
dump_family (int nl, uint8_t family, KnobDump *d)
{
  struct {
    struct nlmsghdr nlh;
    struct inet_diag_req_v2 req;
  } msg;
  memset (&msg, 0, sizeof msg);
  msg.nlh.nlmsg_len = sizeof msg;
  msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  msg.req.sdiag_family = family;
  msg.req.sdiag_protocol = IPPROTO_TCP;
  msg.req.idiag_ext = 1 << (INET_DIAG_INFO - 1);
  msg.req.idiag_states = (1 << ST_ESTABLISHED) | (1 << ST_CLOSE_WAIT) | (1 << ST_FIN_WAIT1)
      | (1 << ST_FIN_WAIT2);
  if (send (nl, &msg, sizeof msg, 0) < 0)
    return -errno;

  enum { BUF_BYTES = 32768 };            /* a few hundred sockets per read */
  char *buf = malloc (BUF_BYTES);
  if (buf == NULL)
    return -ENOMEM;
  int err = 0;
  for (;;) {
    ssize_t got = recv (nl, buf, BUF_BYTES, 0);
    if (got < 0) {
      if (errno == EINTR)
        continue;
      err = -errno;
      break;
    }
    for (struct nlmsghdr *h = (void *) buf; NLMSG_OK (h, (size_t) got); h = NLMSG_NEXT (h, got)) {
      if (h->nlmsg_type == NLMSG_DONE)
        goto out;
      if (h->nlmsg_type == NLMSG_ERROR) {
        err = -EIO;
        goto out;
      }
      if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
        continue;
      struct inet_diag_msg *m = NLMSG_DATA (h);
      KnobInfo k;
      memset (&k, 0, sizeof k);
      k.inode = m->idiag_inode;
      k.uid = m->idiag_uid;
      k.state = m->idiag_state;
      k.unread = m->idiag_rqueue;
      struct sockaddr_storage peer;
      memset (&peer, 0, sizeof peer);
      if (family == AF_INET) {
        struct sockaddr_in *in = (void *) &peer;
        in->sin_family = AF_INET;
        in->sin_port = m->id.idiag_dport;
        memcpy (&in->sin_addr, m->id.idiag_dst, 4);
      } else {
        struct sockaddr_in6 *in6 = (void *) &peer;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = m->id.idiag_dport;
        memcpy (&in6->sin6_addr, m->id.idiag_dst, 16);
      }
      format_addr (&peer, k.remote, sizeof k.remote);
      int alen = (int) h->nlmsg_len - NLMSG_LENGTH (sizeof *m);
      for (struct rtattr *a = (void *) (m + 1); RTA_OK (a, alen); a = RTA_NEXT (a, alen)) {
        if (a->rta_type == INET_DIAG_INFO) {
          struct tcp_info ti;
          size_t payload = RTA_PAYLOAD (a);
          socklen_t len = (socklen_t) (payload < sizeof ti ? payload : sizeof ti);
          memset (&ti, 0, sizeof ti);
          memcpy (&ti, RTA_DATA (a), len);
          fill_from_tcp_info (&k, &ti, len);
          k.state = m->idiag_state;
        }
      }
      err = dump_push (d, &k);
      if (err)
        goto out;
    }
  }
out:
  free (buf);
  return err;
}

static int
by_inode (const void *a, const void *b)
{
  uint64_t x = ((const KnobInfo *) a)->inode, y = ((const KnobInfo *) b)->inode;
  return x < y ? -1 : x > y;
}

int
knob_dump (KnobDump *d)
{
  d->n = 0;
  int nl = socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl < 0)
    return -errno;
  int err = dump_family (nl, AF_INET, d);
  if (err == 0)
    err = dump_family (nl, AF_INET6, d);
  close (nl);
  if (err == 0)
    qsort (d->items, d->n, sizeof *d->items, by_inode);   /* for knob_dump_find() */
  return err;
}

const KnobInfo *
knob_dump_find (const KnobDump *d, uint64_t inode)
{
  KnobInfo key = { .inode = inode };
  return d->n ? bsearch (&key, d->items, d->n, sizeof *d->items, by_inode) : NULL;
}

void
knob_dump_clear (KnobDump *d)
{
  free (d->items);
  d->items = NULL;
  d->n = d->cap = 0;
}
