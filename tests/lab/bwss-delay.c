/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-delay — the lab's delay stage: forwards IP packets between two TUN
 * devices, holding each for a one-way delay chosen by the server address it
 * goes to or comes from.  This kernel has no netem.  The rate limit stays in
 * the kernel (tbf/htb on the router's client-side interface) unless
 * --bottleneck is given: then the stage is the bottleneck of the server →
 * client direction itself (lab-link: a drop-tail, CoDel or FQ-CoDel queue in
 * front of a serialisation at --rate-kbps or along --trace).
 *
 *   bwss-delay --client-tun NAME --server-tun NAME [--default-ms MS]
 *              [--delay ADDR=MS]… [--stats FILE]
 *              [--bottleneck droptail|codel|fq_codel --rate-kbps KBPS
 *               [--queue-ms MS] [--trace FILE] [--priority ADDR]] [--realtime PRIO]
 *
 * --queue-ms is drop-tail's buffer in ms of --rate-kbps; --trace a file of
 * "seconds kbit/s" lines, the rate from that time on, whose clock starts at
 * SIGUSR1 (before it: the first line's rate); --priority ADDR makes the
 * packets from ADDR a class served strictly first (the ideal router), each
 * class with its own queue of the kind.  --realtime runs the stage under
 * SCHED_FIFO at PRIO (1-99) so that other work on the machine does not
 * delay its departures (the kernel's RT throttling still leaves 5 % to the
 * rest).
 *
 * Packets read from the client-side TUN (client → server) are delayed by the
 * entry of their destination, packets read from the server-side TUN by the
 * entry of their source; each is written to the other TUN when due.  One
 * binary heap ordered by due time holds both directions, so different
 * delays never reorder packets of one flow (a flow has one delay).
 *
 * Speed.  The TUNs are opened with IFF_VNET_HDR and TSO/checksum offloads
 * (TUNSETOFFLOAD): the kernel hands over a TCP sender's GSO super-packets
 * (up to 64 KB) whole and segments them again on the way out, so one read
 * and one write move dozens of segments — at 100 Mbit/s a few hundred
 * system calls a second instead of 17 000.  Every readable packet is read
 * per wake-up, every due packet written per timer expiry.  As the
 * bottleneck the server-side TUN keeps checksum offload but not TSO: an AQM
 * must see the packets the link carries, not 64-kB super-packets, so the
 * kernel segments before handing them over.
 *
 * Precision.  Each packet's lateness (written − due) goes into a histogram;
 * --stats FILE gets, at exit, one JSON object: packets, bytes, drops and
 * the p50/p99/max lateness in µs, and as the bottleneck "bottleneck" with
 * its own (lab-link.h) — the lab checks a run against it.
 *
 * Runs until SIGTERM/SIGINT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "lab-link.h"

#define VNET_HDR     ((int) sizeof (struct virtio_net_hdr))
#define MAX_FRAME    (VNET_HDR + 65536)   /* a GSO super-packet and its header */
#define MAX_QUEUED   (64u * 1024u * 1024u) /* bytes held at most: 5 s at 100 Mbit/s */
#define MAX_DELAYS   32
#define LATE_BIN_NS  10000ull              /* lateness histogram: 10-µs bins ... */
#define LATE_BINS    2000                  /* ... up to 20 ms (and one for the rest) */
#define DRAIN_CHECK  16                    /* packets read between two looks at the clock */

typedef struct {
  uint64_t due_ns;
  uint64_t seq;                 /* FIFO among equal due times */
  int      out_fd;
  bool     to_link;             /* server → client through the bottleneck */
  uint32_t len;                 /* vnet header included */
  uint8_t *data;
} Packet;

static Packet  *heap;           /* min-heap on (due, seq) */
static size_t   heap_n, heap_cap;
static uint64_t seq, queued_bytes;

static struct { struct in_addr addr; uint64_t delay_ns; } delays[MAX_DELAYS];
static int n_delays;
static uint64_t default_ns;
static volatile sig_atomic_t stop, start_trace;
static Link the_link;
static bool have_link;

/* statistics */
static uint64_t st_packets, st_bytes, st_drops, st_max_late_ns;
static uint64_t st_late[LATE_BINS + 1];

static uint64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static bool
before (const Packet *a, const Packet *b)
{
  return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->seq < b->seq);
}

static bool
heap_push (Packet p)
{
  if (heap_n == heap_cap) {
    size_t cap = heap_cap ? 2 * heap_cap : 4096;
    Packet *h = realloc (heap, cap * sizeof *h);
    if (h == NULL)
      return false;
    heap = h;
    heap_cap = cap;
  }
  size_t i = heap_n++;
  heap[i] = p;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!before (&heap[i], &heap[parent]))
      break;
    Packet t = heap[i];
    heap[i] = heap[parent];
    heap[parent] = t;
    i = parent;
  }
  return true;
}

static Packet
heap_pop (void)
{
  Packet top = heap[0];
  heap[0] = heap[--heap_n];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < heap_n && before (&heap[l], &heap[m]))
      m = l;
    if (r < heap_n && before (&heap[r], &heap[m]))
      m = r;
    if (m == i)
      break;
    Packet t = heap[i];
    heap[i] = heap[m];
    heap[m] = t;
    i = m;
  }
  return top;
}

/* Returns the one-way delay for a packet to or from @addr, ns. */
static uint64_t
delay_for (struct in_addr addr)
{
  for (int i = 0; i < n_delays; i++)
    if (delays[i].addr.s_addr == addr.s_addr)
      return delays[i].delay_ns;
  return default_ns;
}

static int
tun_attach (const char *name, bool tso)
{
  int fd = open ("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct ifreq ifr;
  memset (&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR;
  snprintf (ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
  int hdr = VNET_HDR;
  unsigned offloads = TUN_F_CSUM | (tso ? TUN_F_TSO4 | TUN_F_TSO6 : 0);
  if (ioctl (fd, TUNSETIFF, &ifr) < 0 || ioctl (fd, TUNSETVNETHDRSZ, &hdr) < 0
      || ioctl (fd, TUNSETOFFLOAD, offloads) < 0) {
    close (fd);
    return -1;
  }
  return fd;
}

static void release_due (void);

/* When the next packet is due (the heap's or the link's), UINT64_MAX if none. */
static uint64_t
next_due_ns (void)
{
  uint64_t due = heap_n ? heap[0].due_ns : UINT64_MAX;
  if (have_link && link_next_ns (&the_link) < due)
    due = link_next_ns (&the_link);
  return due;
}

/* Reads every packet waiting on @in and queues it for @out.  A sender's
 * burst can be thousands of packets: every DRAIN_CHECK of them the due
 * ones go out first, so reading never delays a departure by more than a
 * few packets' reads. */
static void
drain (int in, int out, bool from_client, uint8_t *buf)
{
  for (unsigned k = 1;; k++) {
    if (k % DRAIN_CHECK == 0 && next_due_ns () <= now_ns ())
      release_due ();
    ssize_t n = read (in, buf, MAX_FRAME);
    if (n <= 0)
      return;
    if (n <= VNET_HDR)
      continue;
    if (queued_bytes + (uint64_t) n > MAX_QUEUED) {
      st_drops++;                        /* held too much: drop, like a full buffer */
      continue;
    }
    Packet p = { .out_fd = out, .len = (uint32_t) n, .seq = seq++, .to_link = have_link && !from_client };
    p.data = malloc ((size_t) n);
    if (p.data == NULL) {
      st_drops++;
      continue;
    }
    memcpy (p.data, buf, (size_t) n);
    uint64_t d = default_ns;
    const uint8_t *ip = buf + VNET_HDR;
    if (n - VNET_HDR >= 20 && (ip[0] >> 4) == 4) {
      struct in_addr a;
      memcpy (&a, ip + (from_client ? 16 : 12), 4);   /* dst or src */
      d = delay_for (a);
    }
    p.due_ns = now_ns () + d;
    if (!heap_push (p)) {
      free (p.data);
      st_drops++;
      continue;
    }
    queued_bytes += (uint64_t) n;
  }
}

static void
arm (int tfd)
{
  struct itimerspec its;
  memset (&its, 0, sizeof its);
  uint64_t due = next_due_ns ();
  if (due != UINT64_MAX) {
    its.it_value.tv_sec = (time_t) (due / 1000000000ull);
    its.it_value.tv_nsec = (long) (due % 1000000000ull);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
      its.it_value.tv_nsec = 1;
  }
  timerfd_settime (tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void
account (uint64_t late_ns, uint32_t bytes)
{
  uint64_t b = late_ns / LATE_BIN_NS;
  st_late[b < LATE_BINS ? b : LATE_BINS]++;
  st_packets++;
  st_bytes += bytes;
  if (late_ns > st_max_late_ns)
    st_max_late_ns = late_ns;
}

static void
link_write (void *ctx, const LabPkt *p)
{
  if (write (*(int *) ctx, p->data, p->frame_len) < 0 && errno != EAGAIN)
    perror ("bwss-delay: write");
}

/* Writes (or hands to the link) every packet that is due, and the link's
 * due departures.  A packet's lateness is taken just before its own write:
 * the writes before it in the batch count (each write runs the kernel's
 * receive path, and on an ACK the sender's transmit path, in this thread). */
static void
release_due (void)
{
  uint64_t now = now_ns ();
  while (heap_n && heap[0].due_ns <= now) {
    Packet p = heap_pop ();
    account (now_ns () - p.due_ns, p.len - VNET_HDR);
    queued_bytes -= p.len;
    LabPkt *lp = p.to_link ? malloc (sizeof *lp) : NULL;
    if (lp) {
      /* on to the bottleneck, arriving when it was due */
      *lp = (LabPkt) { .frame_len = p.len, .data = p.data };
      link_arrive (&the_link, lp, VNET_HDR, p.due_ns);
      continue;
    }
    if (write (p.out_fd, p.data, p.len) < 0 && errno != EAGAIN)
      perror ("bwss-delay: write");
    free (p.data);
  }
  if (have_link)
    link_service (&the_link, now_ns ());
}

/* Returns the upper bound of the lateness bin holding quantile @q, µs
 * (the histogram's end when it is beyond). */
static uint64_t
quantile_us (double q)
{
  uint64_t want = (uint64_t) (q * (double) st_packets), seen = 0;
  for (int b = 0; b <= LATE_BINS; b++) {
    seen += st_late[b];
    if (seen > want)
      return (uint64_t) (b + 1) * LATE_BIN_NS / 1000;
  }
  return 0;
}

static void
write_stats (const char *path)
{
  if (path == NULL)
    return;
  FILE *f = fopen (path, "w");
  if (f == NULL) {
    perror ("bwss-delay: --stats");
    return;
  }
  fprintf (f, "{\"packets\": %llu, \"bytes\": %llu, \"drops\": %llu, \"late_p50_us\": %llu, "
              "\"late_p99_us\": %llu, \"late_max_us\": %llu",
           (unsigned long long) st_packets, (unsigned long long) st_bytes,
           (unsigned long long) st_drops, (unsigned long long) quantile_us (0.5),
           (unsigned long long) quantile_us (0.99), (unsigned long long) (st_max_late_ns / 1000));
  if (have_link) {
    fprintf (f, ", \"bottleneck\": {");
    link_write_stats (&the_link, f);
    fprintf (f, "}");
  }
  fprintf (f, "}\n");
  fclose (f);
}

static void
on_signal (int sig)
{
  if (sig == SIGUSR1)
    start_trace = 1;
  else
    stop = 1;
}

static void
usage (void)
{
  fprintf (stderr, "usage: bwss-delay --client-tun NAME --server-tun NAME [--default-ms MS] "
                   "[--delay ADDR=MS]... [--stats FILE] [--bottleneck droptail|codel|fq_codel "
                   "--rate-kbps KBPS [--queue-ms MS] [--trace FILE] [--priority ADDR]] "
                   "[--realtime PRIO]\n");
  exit (2);
}

static uint64_t
parse_ms (const char *s)
{
  char *end;
  errno = 0;
  double ms = strtod (s, &end);
  if (errno || end == s || *end || !(ms >= 0) || ms > 10000) {
    fprintf (stderr, "bwss-delay: '%s' is not a delay in ms (0..10000)\n", s);
    exit (2);
  }
  return (uint64_t) (ms * 1e6);
}

static double
parse_positive (const char *opt, const char *s)
{
  char *end;
  errno = 0;
  double v = strtod (s, &end);
  if (errno || end == s || *end || !(v > 0) || v > 1e9) {
    fprintf (stderr, "bwss-delay: %s '%s' is not a number > 0\n", opt, s);
    exit (2);
  }
  return v;
}

/* The bottleneck from its options; exits 2 on a bad one. */
static void
setup_link (const char *kind, double rate_kbps, double queue_ms, const char *trace,
            const char *prio, int *out_fd)
{
  int k = aqm_kind_from_name (kind);
  if (k < 0 || !(rate_kbps > 0)) {
    fprintf (stderr, "bwss-delay: --bottleneck droptail|codel|fq_codel needs --rate-kbps\n");
    exit (2);
  }
  AqmConfig cfg = aqm_defaults ((AqmKind) k);
  if (k == AQM_DROPTAIL)
    cfg.limit_bytes = (uint64_t) (queue_ms / 1000.0 * rate_kbps * 1000.0 / 8.0);
  if (cfg.limit_bytes < 3000)
    cfg.limit_bytes = 3000;                  /* two packets, as tbf's burst */
  LinkRatePoint *pts = NULL;
  size_t n = 0;
  if (trace && (pts = link_trace_load (trace, &n)) == NULL)
    exit (2);
  struct in_addr pa = { 0 };
  if (prio && inet_pton (AF_INET, prio, &pa) != 1) {
    fprintf (stderr, "bwss-delay: --priority '%s' is not an IPv4 address\n", prio);
    exit (2);
  }
  if (!link_init (&the_link, &cfg, rate_kbps * 1000.0, pts, n, pa.s_addr, link_write, out_fd)) {
    fprintf (stderr, "bwss-delay: out of memory\n");
    exit (1);
  }
  have_link = true;
}

int
main (int argc, char **argv)
{
  const char *ctun = NULL, *stun = NULL, *stats = NULL;
  const char *bottleneck = NULL, *trace = NULL, *prio = NULL;
  double rate_kbps = 0, queue_ms = 150, rt_prio = 0;
  static int client_fd = -1;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc)
      usage ();
    if (strcmp (argv[i], "--client-tun") == 0) {
      ctun = argv[++i];
    } else if (strcmp (argv[i], "--server-tun") == 0) {
      stun = argv[++i];
    } else if (strcmp (argv[i], "--stats") == 0) {
      stats = argv[++i];
    } else if (strcmp (argv[i], "--default-ms") == 0) {
      default_ns = parse_ms (argv[++i]);
    } else if (strcmp (argv[i], "--bottleneck") == 0) {
      bottleneck = argv[++i];
    } else if (strcmp (argv[i], "--rate-kbps") == 0) {
      rate_kbps = parse_positive ("--rate-kbps", argv[++i]);
    } else if (strcmp (argv[i], "--queue-ms") == 0) {
      queue_ms = parse_positive ("--queue-ms", argv[++i]);
    } else if (strcmp (argv[i], "--trace") == 0) {
      trace = argv[++i];
    } else if (strcmp (argv[i], "--priority") == 0) {
      prio = argv[++i];
    } else if (strcmp (argv[i], "--realtime") == 0) {
      rt_prio = parse_positive ("--realtime", argv[++i]);
    } else if (strcmp (argv[i], "--delay") == 0) {
      char *spec = argv[++i], *eq = strchr (spec, '=');
      if (eq == NULL || n_delays == MAX_DELAYS)
        usage ();
      *eq = '\0';
      if (inet_pton (AF_INET, spec, &delays[n_delays].addr) != 1) {
        fprintf (stderr, "bwss-delay: '%s' is not an IPv4 address\n", spec);
        return 2;
      }
      delays[n_delays++].delay_ns = parse_ms (eq + 1);
    } else {
      usage ();
    }
  }
  if (ctun == NULL || stun == NULL)
    usage ();
  if (bottleneck)
    setup_link (bottleneck, rate_kbps, queue_ms, trace, prio, &client_fd);
  else if (trace || prio || rate_kbps > 0)
    usage ();
  prctl (PR_SET_TIMERSLACK, 1ul);            /* departures to the µs, not 50 µs late */
  if (rt_prio > 0) {
    struct sched_param sp = { .sched_priority = rt_prio > 99 ? 99 : (int) rt_prio };
    if (sched_setscheduler (0, SCHED_FIFO, &sp) < 0)
      perror ("bwss-delay: --realtime (left at normal priority)");
    /* no page fault on the way to a departure (the machine's other work
     * may press its memory) */
    if (mlockall (MCL_CURRENT | MCL_FUTURE) < 0)
      perror ("bwss-delay: mlockall (pages left unlocked)");
  }

  uint8_t *buf = malloc (MAX_FRAME);
  if (buf == NULL) {
    fprintf (stderr, "bwss-delay: out of memory\n");
    return 1;
  }
  int cfd = tun_attach (ctun, true), sfd = tun_attach (stun, !have_link);
  client_fd = cfd;
  if (cfd < 0 || sfd < 0) {
    fprintf (stderr, "bwss-delay: cannot attach to %s / %s: %s\n", ctun, stun, strerror (errno));
    return 1;
  }
  int tfd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  int ep = epoll_create1 (EPOLL_CLOEXEC);
  struct epoll_event ev = { .events = EPOLLIN };
  ev.data.fd = cfd;
  epoll_ctl (ep, EPOLL_CTL_ADD, cfd, &ev);
  ev.data.fd = sfd;
  epoll_ctl (ep, EPOLL_CTL_ADD, sfd, &ev);
  ev.data.fd = tfd;
  epoll_ctl (ep, EPOLL_CTL_ADD, tfd, &ev);
  struct sigaction sa = { .sa_handler = on_signal };
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGUSR1, &sa, NULL);

  while (!stop) {
    if (start_trace && have_link && the_link.t0_ns == 0)
      link_start (&the_link, now_ns ());
    struct epoll_event evs[8];
    int n = epoll_wait (ep, evs, 8, 1000);
    release_due ();                          /* the due ones first, then the reads */
    for (int i = 0; i < n; i++) {
      if (evs[i].data.fd == cfd)
        drain (cfd, sfd, true, buf);
      else if (evs[i].data.fd == sfd)
        drain (sfd, cfd, false, buf);
      else {
        uint64_t ticks;
        if (read (tfd, &ticks, sizeof ticks) < 0 && errno != EAGAIN)
          perror ("bwss-delay: timer");
      }
    }
    release_due ();
    arm (tfd);
  }
  write_stats (stats);
  if (have_link)
    link_free (&the_link);
  return 0;
}
