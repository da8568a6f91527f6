/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-delay — the lab's delay stage: forwards IP packets between two TUN
 * devices, holding each for a one-way delay chosen by the server address it
 * goes to or comes from.  This kernel has no netem; the rate limit stays in
 * the kernel (tbf/htb on the router's client-side interface).
 *
 *   bwss-delay --client-tun NAME --server-tun NAME [--default-ms MS]
 *              [--delay ADDR=MS]…
 *
 * Packets read from the client-side TUN (client → server) are delayed by the
 * entry of their destination, packets read from the server-side TUN by the
 * entry of their source; each is written to the other TUN when due.  One
 * binary heap ordered by due time holds both directions, so different
 * delays never reorder packets of one flow (a flow has one delay).
 *
 * Runs until SIGTERM/SIGINT.  Built for the `fast` scenario: 100 Mbit/s is
 * ~8,300 packets/s each way, far below what one epoll loop moves.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_PACKET   2048       /* above the MTU (1500) of the lab links */
#define MAX_QUEUED   65536      /* 65,536 × 1.5 kB: 200 ms at 4 Gbit/s */
#define MAX_DELAYS   32

typedef struct {
  uint64_t due_ns;
  uint64_t seq;                 /* FIFO among equal due times */
  int      out_fd;
  uint16_t len;
  uint8_t  data[MAX_PACKET];
} Packet;

static Packet *pool;            /* MAX_QUEUED packets */
static uint32_t *heap;          /* indices into pool, min-heap on (due, seq) */
static uint32_t *free_list;
static uint32_t heap_n, free_n;
static uint64_t seq;

static struct { struct in_addr addr; uint64_t delay_ns; } delays[MAX_DELAYS];
static int n_delays;
static uint64_t default_ns;
static volatile sig_atomic_t stop;

static uint64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static bool
before (uint32_t a, uint32_t b)
{
  return pool[a].due_ns < pool[b].due_ns
      || (pool[a].due_ns == pool[b].due_ns && pool[a].seq < pool[b].seq);
}

static void
heap_push (uint32_t idx)
{
  uint32_t i = heap_n++;
  heap[i] = idx;
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!before (heap[i], heap[parent]))
      break;
    uint32_t t = heap[i];
    heap[i] = heap[parent];
    heap[parent] = t;
    i = parent;
  }
}

static uint32_t
heap_pop (void)
{
  uint32_t top = heap[0];
  heap[0] = heap[--heap_n];
  uint32_t i = 0;
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < heap_n && before (heap[l], heap[m]))
      m = l;
    if (r < heap_n && before (heap[r], heap[m]))
      m = r;
    if (m == i)
      break;
    uint32_t t = heap[i];
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
tun_attach (const char *name)
{
  int fd = open ("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct ifreq ifr;
  memset (&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  snprintf (ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
  if (ioctl (fd, TUNSETIFF, &ifr) < 0) {
    close (fd);
    return -1;
  }
  return fd;
}

/* Reads every packet waiting on @in and queues it for @out. */
static void
drain (int in, int out, bool from_client)
{
  for (;;) {
    if (free_n == 0) {           /* queue full: drop, like a full buffer */
      uint8_t sink[MAX_PACKET];
      if (read (in, sink, sizeof sink) < 0)
        return;
      continue;
    }
    uint32_t idx = free_list[free_n - 1];
    Packet *p = &pool[idx];
    ssize_t n = read (in, p->data, sizeof p->data);
    if (n <= 0)
      return;
    free_n--;
    p->len = (uint16_t) n;
    p->out_fd = out;
    uint64_t d = default_ns;
    if (n >= 20 && (p->data[0] >> 4) == 4) {
      struct in_addr a;
      memcpy (&a, p->data + (from_client ? 16 : 12), 4);   /* dst or src */
      d = delay_for (a);
    }
    p->due_ns = now_ns () + d;
    p->seq = seq++;
    heap_push (idx);
  }
}

static void
arm (int tfd)
{
  struct itimerspec its;
  memset (&its, 0, sizeof its);
  if (heap_n) {
    uint64_t due = pool[heap[0]].due_ns;
    its.it_value.tv_sec = (time_t) (due / 1000000000ull);
    its.it_value.tv_nsec = (long) (due % 1000000000ull);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
      its.it_value.tv_nsec = 1;
  }
  timerfd_settime (tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void
release_due (void)
{
  uint64_t now = now_ns ();
  while (heap_n && pool[heap[0]].due_ns <= now) {
    uint32_t idx = heap_pop ();
    Packet *p = &pool[idx];
    if (write (p->out_fd, p->data, p->len) < 0 && errno != EAGAIN)
      perror ("bwss-delay: write");
    free_list[free_n++] = idx;
  }
}

static void
on_signal (int sig)
{
  (void) sig;
  stop = 1;
}

static void
usage (void)
{
  fprintf (stderr, "usage: bwss-delay --client-tun NAME --server-tun NAME [--default-ms MS] "
                   "[--delay ADDR=MS]...\n");
  exit (2);
}

static uint64_t
parse_ms (const char *s)
{
  char *end;
  errno = 0;
  double ms = strtod (s, &end);
  if (errno || end == s || *end || ms < 0 || ms > 10000) {
    fprintf (stderr, "bwss-delay: '%s' is not a delay in ms (0..10000)\n", s);
    exit (2);
  }
  return (uint64_t) (ms * 1e6);
}

int
main (int argc, char **argv)
{
  const char *ctun = NULL, *stun = NULL;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc)
      usage ();
    if (strcmp (argv[i], "--client-tun") == 0) {
      ctun = argv[++i];
    } else if (strcmp (argv[i], "--server-tun") == 0) {
      stun = argv[++i];
    } else if (strcmp (argv[i], "--default-ms") == 0) {
      default_ns = parse_ms (argv[++i]);
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

  pool = malloc ((size_t) MAX_QUEUED * sizeof *pool);
  heap = malloc ((size_t) MAX_QUEUED * sizeof *heap);
  free_list = malloc ((size_t) MAX_QUEUED * sizeof *free_list);
  if (!pool || !heap || !free_list) {
    fprintf (stderr, "bwss-delay: out of memory\n");
    return 1;
  }
  for (uint32_t i = 0; i < MAX_QUEUED; i++)
    free_list[free_n++] = MAX_QUEUED - 1 - i;

  int cfd = tun_attach (ctun), sfd = tun_attach (stun);
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

  while (!stop) {
    struct epoll_event evs[8];
    int n = epoll_wait (ep, evs, 8, 1000);
    for (int i = 0; i < n; i++) {
      if (evs[i].data.fd == cfd)
        drain (cfd, sfd, true);
      else if (evs[i].data.fd == sfd)
        drain (sfd, cfd, false);
      else {
        uint64_t ticks;
        if (read (tfd, &ticks, sizeof ticks) < 0 && errno != EAGAIN)
          perror ("bwss-delay: timer");
      }
    }
    release_due ();
    arm (tfd);
  }
  return 0;
}
