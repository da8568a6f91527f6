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
 * TCP_INFO and SIOCINQ for a socket we hold (two system calls, about half
 * the kernel time of one exact sock_diag lookup), sock_diag (the interface
 * `ss` uses) for every socket of the namespace, keyed by inode — so the controller sees the
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sys.h"

#ifndef TCP_WINDOW_CLAMP
#define TCP_WINDOW_CLAMP 10
#endif

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
  return ti.tcpi_state == SYS_TCP_ESTABLISHED;
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
  out->advmss = ti->tcpi_advmss;
  out->last_recv_ms = ti->tcpi_last_data_recv;
  out->last_sent_ms = ti->tcpi_last_data_sent;
  out->window_clamp = ti->tcpi_rcv_ssthresh;
  out->bytes_received = 0;
  if (len >= offsetof (struct tcp_info, tcpi_bytes_received) + sizeof ti->tcpi_bytes_received)
    out->bytes_received = ti->tcpi_bytes_received;
  out->rcv_ooopack = 0;
  if (len >= offsetof (struct tcp_info, tcpi_rcv_ooopack) + sizeof ti->tcpi_rcv_ooopack)
    out->rcv_ooopack = ti->tcpi_rcv_ooopack;
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

int
knob_read_sample (int fd, KnobInfo *out)
{
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  memset (&ti, 0, sizeof ti);
  if (getsockopt (fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
    return -errno;
  fill_from_tcp_info (out, &ti, len);
  out->unread = 0;
  return 0;
}

int
knob_read_unread (int fd, uint32_t *unread)
{
  int n = 0;
  if (ioctl (fd, FIONREAD, &n) != 0)    /* SIOCINQ on a TCP socket */
    return -errno;
  *unread = n > 0 ? (uint32_t) n : 0;
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

#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK 72
#endif
#ifndef SOCK_RCVBUF_LOCK
#define SOCK_RCVBUF_LOCK 2
#endif

static int
sockopt_int (int fd, int level, int name, int *v)
{
  socklen_t len = sizeof *v;
  *v = 0;
  return getsockopt (fd, level, name, v, &len) == 0 ? 0 : -errno;
}

int
knob_free_clamp (int fd, uint32_t *bytes)
{
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  memset (&ti, 0, sizeof ti);
  if (getsockopt (fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
    return -errno;
  *bytes = 65535u << ti.tcpi_rcv_wscale;
  return 0;
}

int
knob_give_back_clamp (int fd, uint32_t orig, bool buffer_ours)
{
  int lock;
  uint32_t free_clamp;
  if (!buffer_ours && sockopt_int (fd, SOL_SOCKET, SO_BUF_LOCK, &lock) == 0
      && (lock & SOCK_RCVBUF_LOCK))
    return knob_set_clamp (fd, orig);  /* the application's buffer, with its clamp */
  int err = knob_free_clamp (fd, &free_clamp);
  return err ? err : knob_set_clamp (fd, free_clamp);
}

int
knob_first_window_begin (int fd, uint32_t bytes, int *kernel_buf, int *small_buf)
{
  int type, family, proto, lock, buf, small = bytes > (uint32_t) INT_MAX ? INT_MAX : (int) bytes, err;
  if ((err = sockopt_int (fd, SOL_SOCKET, SO_TYPE, &type)) != 0
      || (err = sockopt_int (fd, SOL_SOCKET, SO_DOMAIN, &family)) != 0
      || (err = sockopt_int (fd, SOL_SOCKET, SO_PROTOCOL, &proto)) != 0)
    return err;
  if (type != SOCK_STREAM || (family != AF_INET && family != AF_INET6) || proto != IPPROTO_TCP)
    return -EPROTOTYPE;
  if ((err = sockopt_int (fd, SOL_SOCKET, SO_BUF_LOCK, &lock)) != 0
      || (err = sockopt_int (fd, SOL_SOCKET, SO_RCVBUF, &buf)) != 0)
    return err;                      /* no SO_BUF_LOCK: a kernel before 5.14 */
  if (lock & SOCK_RCVBUF_LOCK)
    return -EBUSY;
  if (setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small) != 0)
    return -errno;
  lock &= ~SOCK_RCVBUF_LOCK;
  if (setsockopt (fd, SOL_SOCKET, SO_BUF_LOCK, &lock, sizeof lock) != 0
      || (err = sockopt_int (fd, SOL_SOCKET, SO_RCVBUF, &small)) != 0) {
    err = -errno;
    int back = buf / 2;              /* SO_RCVBUF sets twice its value */
    setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &back, sizeof back);
    return err;
  }
  *kernel_buf = buf;
  *small_buf = small;
  return 0;
}

int
knob_first_window_end (int fd, int kernel_buf, int small_buf)
{
  int buf, lock, back = kernel_buf / 2, err;
  uint32_t free_clamp;
  if ((err = sockopt_int (fd, SOL_SOCKET, SO_RCVBUF, &buf)) != 0)
    return err;
  if (buf != small_buf)
    return -ESTALE;
  if (setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &back, sizeof back) != 0
      || (err = sockopt_int (fd, SOL_SOCKET, SO_BUF_LOCK, &lock)) != 0)
    return err ? err : -errno;
  lock &= ~SOCK_RCVBUF_LOCK;
  if (setsockopt (fd, SOL_SOCKET, SO_BUF_LOCK, &lock, sizeof lock) != 0)
    return -errno;
  if ((err = knob_free_clamp (fd, &free_clamp)) != 0)
    return err;
  return knob_set_clamp (fd, free_clamp);
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

/* Copies the address and port of @ss into a sock_diag id's @addr/@port. */
static void
diag_addr (const struct sockaddr_storage *ss, __be32 addr[4], __be16 *port)
{
  memset (addr, 0, 4 * sizeof addr[0]);
  if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *in = (const void *) ss;
    memcpy (addr, &in->sin_addr, 4);
    *port = in->sin_port;
  } else {
    const struct sockaddr_in6 *in6 = (const void *) ss;
    memcpy (addr, &in6->sin6_addr, 16);
    *port = in6->sin6_port;
  }
}

int
knob_diag_id (int fd, KnobInfo *out)
{
  struct sockaddr_storage local, peer;
  socklen_t llen = sizeof local, plen = sizeof peer, len;
  uint64_t cookie = 0;
  int ifindex = 0;
  struct stat st;
  memset (&local, 0, sizeof local);
  memset (&peer, 0, sizeof peer);
  if (getsockname (fd, (struct sockaddr *) &local, &llen) != 0
      || getpeername (fd, (struct sockaddr *) &peer, &plen) != 0 || fstat (fd, &st) != 0)
    return -errno;
  if (local.ss_family != AF_INET && local.ss_family != AF_INET6)
    return -EAFNOSUPPORT;
  len = sizeof cookie;
  if (getsockopt (fd, SOL_SOCKET, SO_COOKIE, &cookie, &len) != 0)
    return -errno;
  len = sizeof ifindex;
  if (getsockopt (fd, SOL_SOCKET, SO_BINDTOIFINDEX, &ifindex, &len) != 0)
    ifindex = 0;                         /* before Linux 5.0: bound to a device is rare */
  memset (out, 0, sizeof *out);
  out->inode = st.st_ino;
  out->uid = st.st_uid;
  out->family = (uint8_t) local.ss_family;
  diag_addr (&local, out->id.idiag_src, &out->id.idiag_sport);
  diag_addr (&peer, out->id.idiag_dst, &out->id.idiag_dport);
  out->id.idiag_if = (uint32_t) ifindex;
  out->id.idiag_cookie[0] = (uint32_t) cookie;        /* as sock_diag writes it */
  out->id.idiag_cookie[1] = (uint32_t) (cookie >> 32);
  return 0;
}

/* A dump's array starts at DUMP_MIN_ITEMS entries and doubles as it
 * fills.  A dump or query that ends holding at most a quarter of its array
 * gives the rest back (to two to four times what it holds, DUMP_MIN_ITEMS
 * at least): a caller that keeps its arrays from one scan to the next
 * (bwssd's adopter keeps two, each an entry per TCP socket of the host)
 * then holds memory for the sockets there are, not for the most the host
 * ever had.  Between a quarter and all of it nothing moves, so a count
 * that changes by less than 2x from one scan to the next keeps its array. */
#define DUMP_MIN_ITEMS 64

static void
dump_fit (KnobDump *d)
{
  if (d->cap <= DUMP_MIN_ITEMS || d->n > d->cap / 4)
    return;
  size_t cap = d->cap;
  while (cap > DUMP_MIN_ITEMS && d->n <= cap / 4)
    cap /= 2;
  KnobInfo *items = realloc (d->items, cap * sizeof *items);
  if (items == NULL)                     /* a smaller block refused: keep the one there is */
    return;
  d->items = items;
  d->cap = cap;
}

int
knob_dump_push (KnobDump *d, const KnobInfo *k)
{
  if (d->n == d->cap) {
    size_t cap = d->cap ? 2 * d->cap : DUMP_MIN_ITEMS;
    KnobInfo *items = realloc (d->items, cap * sizeof *items);
    if (items == NULL)
      return -ENOMEM;
    d->items = items;
    d->cap = cap;
  }
  d->items[d->n++] = *k;
  return 0;
}

/* Fills @k from one sock_diag answer @m of @len bytes (the message and its
 * attributes) for a socket of @family: its identity (inode, uid, the id an
 * exact query needs), state, unread bytes and TCP_INFO. */
static void
fill_from_diag (const struct inet_diag_msg *m, int len, uint8_t family, KnobInfo *k)
{
  memset (k, 0, sizeof *k);
  k->inode = m->idiag_inode;
  k->uid = m->idiag_uid;
  k->state = m->idiag_state;
  k->unread = m->idiag_rqueue;
  k->family = family;
  k->id = m->id;
  int alen = len - (int) NLMSG_ALIGN (sizeof *m);
  for (const struct rtattr *a = (const void *) (m + 1); RTA_OK (a, alen); a = RTA_NEXT (a, alen)) {
    if (a->rta_type == INET_DIAG_INFO) {
      struct tcp_info ti;
      size_t payload = RTA_PAYLOAD (a);
      socklen_t tlen = (socklen_t) (payload < sizeof ti ? payload : sizeof ti);
      memset (&ti, 0, sizeof ti);
      memcpy (&ti, RTA_DATA (a), tlen);
      fill_from_tcp_info (k, &ti, tlen);
      k->state = m->idiag_state;
    }
  }
}

/* Writes "addr:port" of @k's remote end to k->remote. */
static void
format_remote (KnobInfo *k)
{
  struct sockaddr_storage peer;
  memset (&peer, 0, sizeof peer);
  if (k->family == AF_INET) {
    struct sockaddr_in *in = (void *) &peer;
    in->sin_family = AF_INET;
    in->sin_port = k->id.idiag_dport;
    memcpy (&in->sin_addr, k->id.idiag_dst, 4);
  } else {
    struct sockaddr_in6 *in6 = (void *) &peer;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = k->id.idiag_dport;
    memcpy (&in6->sin6_addr, k->id.idiag_dst, 16);
  }
  format_addr (&peer, k->remote, sizeof k->remote);
}

/* A sock_diag request for the TCP sockets of @family: a dump of every one
 * in our states (@id NULL), or the one socket @id names. */
typedef struct {
  struct nlmsghdr         nlh;
  struct inet_diag_req_v2 req;
} DiagRequest;

static void
diag_request (DiagRequest *msg, uint8_t family, const struct inet_diag_sockid *id, uint32_t seq)
{
  memset (msg, 0, sizeof *msg);
  msg->nlh.nlmsg_len = sizeof *msg;
  msg->nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg->nlh.nlmsg_flags = NLM_F_REQUEST | (id ? 0 : NLM_F_DUMP);
  msg->nlh.nlmsg_seq = seq;
  msg->req.sdiag_family = family;
  msg->req.sdiag_protocol = IPPROTO_TCP;
  msg->req.idiag_ext = 1 << (INET_DIAG_INFO - 1);
  msg->req.idiag_states = id ? ~0u : (1 << SYS_TCP_ESTABLISHED) | (1 << SYS_TCP_CLOSE_WAIT)
                                     | (1 << SYS_TCP_FIN_WAIT1) | (1 << SYS_TCP_FIN_WAIT2);
  if (id)
    msg->req.id = *id;
}

/* One NETLINK_SOCK_DIAG dump of the TCP sockets of @family. */
static int
dump_family (int nl, uint8_t family, KnobDump *d)
{
  DiagRequest msg;
  diag_request (&msg, family, NULL, 0);
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
      KnobInfo k;
      fill_from_diag (NLMSG_DATA (h), (int) h->nlmsg_len - NLMSG_HDRLEN, family, &k);
      format_remote (&k);
      err = knob_dump_push (d, &k);
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
    knob_dump_sort (d);                  /* for knob_dump_find() */
  dump_fit (d);
  return err;
}

const KnobInfo *
knob_dump_find (const KnobDump *d, uint64_t inode)
{
  KnobInfo key = { .inode = inode };
  return d->n ? bsearch (&key, d->items, d->n, sizeof *d->items, by_inode) : NULL;
}

/* Exact queries in flight at once: their answers (~0.5-1 kB each with
 * the kernel's overhead) stay well inside a netlink socket's default
 * receive buffer, which would drop what does not fit. */
#define QUERY_BATCH 64
/* Room for one answer, bytes: an inet_diag_msg and its attributes (the
 * TCP_INFO and a few small attributes); one that does not fit arrives
 * truncated and its socket goes unmeasured this round. */
#define ANSWER_BYTES 2048

/* Sends the queries for @want[@from .. @from+@n) and reads their answers
 * (one each: the socket, or an error for a socket that is gone) into @out,
 * as many datagrams per recvmmsg(2) as have arrived: one system call for a
 * batch, not one per socket.  0 or -errno. */
static int
query_batch (int nl, const KnobDump *want, size_t from, size_t n, KnobDump *out)
{
  DiagRequest msgs[QUERY_BATCH];
  for (size_t i = 0; i < n; i++) {
    const KnobInfo *w = &want->items[from + i];
    diag_request (&msgs[i], w->family, &w->id, (uint32_t) (from + i + 1));
  }
  if (send (nl, msgs, n * sizeof msgs[0], 0) < 0)
    return -errno;
  static __thread char buf[QUERY_BATCH][ANSWER_BYTES] __attribute__ ((aligned (8)));
  struct iovec iov[QUERY_BATCH];
  struct mmsghdr hdr[QUERY_BATCH];
  size_t answered = 0;
  while (answered < n) {
    size_t room = n - answered;
    for (size_t i = 0; i < room; i++) {
      iov[i] = (struct iovec) { .iov_base = buf[i], .iov_len = ANSWER_BYTES };
      hdr[i] = (struct mmsghdr) { .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
    }
    int got = recvmmsg (nl, hdr, (unsigned) room, MSG_WAITFORONE, NULL);
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    for (int d = 0; d < got; d++) {
      size_t len = hdr[d].msg_len;
      if (hdr[d].msg_hdr.msg_flags & MSG_TRUNC) {
        const struct nlmsghdr *h = (const void *) buf[d];
        if (len >= sizeof *h && h->nlmsg_seq > from && h->nlmsg_seq <= from + n)
          answered++;                    /* one answer a datagram: that socket goes unmeasured */
        continue;
      }
      for (struct nlmsghdr *h = (void *) buf[d]; NLMSG_OK (h, len); h = NLMSG_NEXT (h, len)) {
        uint32_t seq = h->nlmsg_seq;
        if (seq <= from || seq > from + n)
          continue;                      /* not an answer of this batch */
        answered++;
        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
          continue;                      /* NLMSG_ERROR: ENOENT, the socket is gone */
        const KnobInfo *w = &want->items[seq - 1];
        KnobInfo k;
        fill_from_diag (NLMSG_DATA (h), (int) h->nlmsg_len - NLMSG_HDRLEN, w->family, &k);
        if (k.inode != w->inode)
          continue;                      /* the tuple now names another socket, or a TIME_WAIT */
        memcpy (k.remote, w->remote, sizeof k.remote);
        int err = knob_dump_push (out, &k);
        if (err)
          return err;
      }
    }
  }
  return 0;
}

int
knob_query (const KnobDump *want, KnobDump *out)
{
  out->n = 0;
  if (want->n == 0) {
    dump_fit (out);
    return 0;
  }
  int nl = socket (AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl < 0)
    return -errno;
  int err = 0;
  for (size_t from = 0; from < want->n && err == 0; from += QUERY_BATCH) {
    size_t n = want->n - from < QUERY_BATCH ? want->n - from : QUERY_BATCH;
    err = query_batch (nl, want, from, n, out);
  }
  close (nl);
  if (err == 0)
    knob_dump_sort (out);
  dump_fit (out);
  return err;
}

void
knob_dump_sort (KnobDump *d)
{
  if (d->n > 1)                        /* items is NULL while nothing was ever pushed */
    qsort (d->items, d->n, sizeof *d->items, by_inode);
}

void
knob_dump_clear (KnobDump *d)
{
  free (d->items);
  d->items = NULL;
  d->n = d->cap = 0;
}
