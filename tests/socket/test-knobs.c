/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-knobs.c — the controller's view of sockets on real loopback TCP
 * sockets: a sock_diag dump finds them, and exact queries (knob_query())
 * for what a dump found see their bytes move and forget a closed one, and
 * both give back the arrays that held sockets now gone; a first window set
 * before connect() is what the handshake offers, with the window scale of
 * a plain socket, and ends with the kernel's buffer; a
 * clamp given back is at least the buffer autotuning has grown, and
 * exactly the one it came with where the application set the buffer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <glib.h>
#include "sys.h"

#define PAIRS 3

static int listener;
static struct sockaddr_in addr;

/* A connected loopback pair: *client (the receiver) and *server. */
static void
tcp_pair (int *client, int *server)
{
  *client = socket (AF_INET, SOCK_STREAM, 0);
  g_assert_cmpint (connect (*client, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  *server = accept (listener, NULL, NULL);
  g_assert_cmpint (*server, >=, 0);
}

/* Sends @n bytes from @server and reads them at @client. */
static void
move (int server, int client, size_t n)
{
  static char buf[65536];
  g_assert_cmpuint (n, <=, sizeof buf);
  g_assert_cmpint (write (server, buf, n), ==, (ssize_t) n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = read (client, buf, n - got);
    g_assert_cmpint (r, >, 0);
    got += (size_t) r;
  }
}

static void
test_query (void)
{
  int c[PAIRS], s[PAIRS];
  KnobInfo mine[PAIRS];
  for (int i = 0; i < PAIRS; i++) {
    tcp_pair (&c[i], &s[i]);
    move (s[i], c[i], 1000 * (i + 1));
    g_assert_cmpint (knob_read_info (c[i], &mine[i]), ==, 0);
  }
  KnobDump dump = { 0 }, known = { 0 }, answers = { 0 };
  g_assert_cmpint (knob_dump (&dump), ==, 0);
  for (int i = 0; i < PAIRS; i++) {
    const KnobInfo *k = knob_dump_find (&dump, mine[i].inode);
    g_assert_nonnull (k);
    g_assert_cmpuint (k->bytes_received, ==, 1000 * (i + 1));
    g_assert_cmpint (knob_dump_push (&known, k), ==, 0);
  }
  knob_dump_sort (&known);

  for (int i = 0; i < PAIRS; i++)
    move (s[i], c[i], 20000);
  g_assert_cmpint (knob_query (&known, &answers), ==, 0);
  g_assert_cmpuint (answers.n, ==, PAIRS);
  for (int i = 0; i < PAIRS; i++) {
    const KnobInfo *k = knob_dump_find (&answers, mine[i].inode);
    g_assert_nonnull (k);
    g_assert_cmpuint (k->bytes_received, ==, 1000 * (i + 1) + 20000);   /* moved since the dump */
    g_assert_cmpint (k->state, ==, 1);
    g_assert_cmpstr (k->remote, ==, knob_dump_find (&dump, mine[i].inode)->remote);
  }

  close (c[1]);                          /* the receiver's socket is gone */
  close (s[1]);
  g_assert_cmpint (knob_query (&known, &answers), ==, 0);
  g_assert_cmpuint (answers.n, ==, PAIRS - 1);
  g_assert_null (knob_dump_find (&answers, mine[1].inode));
  g_assert_nonnull (knob_dump_find (&answers, mine[0].inode));
  g_assert_nonnull (knob_dump_find (&answers, mine[2].inode));

  KnobDump none = { 0 };
  g_assert_cmpint (knob_query (&none, &answers), ==, 0);
  g_assert_cmpuint (answers.n, ==, 0);
  for (int i = 0; i < PAIRS; i++)
    if (i != 1) {
      close (c[i]);
      close (s[i]);
    }
  knob_dump_clear (&dump);
  knob_dump_clear (&known);
  knob_dump_clear (&answers);
}

/* More sockets than one batch of queries holds (64). */
static void
test_query_batches (void)
{
  enum { N = 150 };
  int c[N], s[N];
  KnobDump dump = { 0 }, known = { 0 }, answers = { 0 };
  for (int i = 0; i < N; i++)
    tcp_pair (&c[i], &s[i]);
  g_assert_cmpint (knob_dump (&dump), ==, 0);
  for (int i = 0; i < N; i++) {
    KnobInfo me;
    g_assert_cmpint (knob_read_info (c[i], &me), ==, 0);
    const KnobInfo *k = knob_dump_find (&dump, me.inode);
    g_assert_nonnull (k);
    g_assert_cmpint (knob_dump_push (&known, k), ==, 0);
  }
  knob_dump_sort (&known);
  g_assert_cmpint (knob_query (&known, &answers), ==, 0);
  g_assert_cmpuint (answers.n, ==, N);
  for (int i = 0; i < N; i++) {
    close (c[i]);
    close (s[i]);
  }
  knob_dump_clear (&dump);
  knob_dump_clear (&known);
  knob_dump_clear (&answers);
}

/* A dump and a query that held many sockets give their arrays back once
 * the sockets are gone: a caller that keeps its arrays from scan to scan
 * (bwssd's adopter) holds memory for the sockets there are, not the most
 * there ever were. */
static void
test_dump_gives_back (void)
{
  enum { N = 300 };                      /* 600 sockets: arrays of 1024 entries */
  int c[N], s[N];
  KnobDump dump = { 0 }, answers = { 0 }, none = { 0 };
  for (int i = 0; i < N; i++)
    tcp_pair (&c[i], &s[i]);
  g_assert_cmpint (knob_dump (&dump), ==, 0);
  g_assert_cmpuint (dump.n, >=, 2 * N);
  g_assert_cmpint (knob_query (&dump, &answers), ==, 0);
  g_assert_cmpuint (answers.n, >=, 2 * N);
  size_t held = dump.cap;
  const struct linger reset = { .l_onoff = 1, .l_linger = 0 };   /* no FIN_WAIT left behind */
  for (int i = 0; i < N; i++) {
    setsockopt (c[i], SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    close (c[i]);
    close (s[i]);
  }
  g_assert_cmpint (knob_dump (&dump), ==, 0);
  g_test_message ("dump: %zu entries in an array of %zu, was %zu", dump.n, dump.cap, held);
  g_assert_cmpuint (dump.cap, <=, MAX (64, 4 * dump.n));
  g_assert_cmpint (knob_query (&none, &answers), ==, 0);
  g_assert_cmpuint (answers.n, ==, 0);
  g_assert_cmpuint (answers.cap, <=, 64);
  knob_dump_clear (&dump);
  knob_dump_clear (&answers);
}

static int
opt (int fd, int level, int name)
{
  int v = 0;
  socklen_t len = sizeof v;
  g_assert_cmpint (getsockopt (fd, level, name, &v, &len), ==, 0);
  return v;
}

/* What @server's peer offered (its window after scaling, bytes) and the
 * peer's window scale, as @server sees them. */
static void
offered (int server, unsigned *window, unsigned *wscale)
{
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  memset (&ti, 0, sizeof ti);
  g_assert_cmpint (getsockopt (server, IPPROTO_TCP, TCP_INFO, &ti, &len), ==, 0);
  *window = ti.tcpi_snd_wnd;
  *wscale = ti.tcpi_snd_wscale;
}

static void
test_first_window (void)
{
  int kernel_buf = -1, small_buf = -1;
  /* not TCP, or a buffer the program set: an error, nothing changed */
  int udp = socket (AF_INET, SOCK_DGRAM, 0), own = socket (AF_INET, SOCK_STREAM, 0), v = 100000;
  int udp_buf = opt (udp, SOL_SOCKET, SO_RCVBUF);
  g_assert_cmpint (knob_first_window_begin (udp, 2896, &kernel_buf, &small_buf), ==, -EPROTOTYPE);
  g_assert_cmpint (opt (udp, SOL_SOCKET, SO_RCVBUF), ==, udp_buf);
  g_assert_cmpint (setsockopt (own, SOL_SOCKET, SO_RCVBUF, &v, sizeof v), ==, 0);
  int own_buf = opt (own, SOL_SOCKET, SO_RCVBUF);
  g_assert_cmpint (knob_first_window_begin (own, 2896, &kernel_buf, &small_buf), ==, -EBUSY);
  g_assert_cmpint (opt (own, SOL_SOCKET, SO_RCVBUF), ==, own_buf);
  g_assert_cmpint (kernel_buf, ==, -1);
  close (udp);
  close (own);

  /* a plain pair: the kernel's first window and scale */
  int pc, ps;
  unsigned plain_window, plain_scale, window, scale;
  tcp_pair (&pc, &ps);
  offered (ps, &plain_window, &plain_scale);
  g_test_message ("plain: the handshake offers %u bytes, window scale %u", plain_window, plain_scale);
  g_assert_cmpuint (plain_scale, >, 0);

  /* the first window: a few kB offered, the same scale */
  int c = socket (AF_INET, SOCK_STREAM, 0), sv;
  int plain_buf = opt (c, SOL_SOCKET, SO_RCVBUF);
  g_assert_cmpint (knob_first_window_begin (c, 2896, &kernel_buf, &small_buf), ==, 0);
  g_assert_cmpint (kernel_buf, ==, plain_buf);
  g_assert_cmpint (small_buf, <, plain_buf);
  g_assert_cmpint (opt (c, SOL_SOCKET, SO_BUF_LOCK) & 2, ==, 0);
  g_assert_cmpint (connect (c, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  sv = accept (listener, NULL, NULL);
  g_assert_cmpint (sv, >=, 0);
  offered (sv, &window, &scale);
  g_test_message ("first window 2896: the handshake offers %u bytes, window scale %u (buffer %d, the kernel's %d)",
                  window, scale, small_buf, kernel_buf);
  g_assert_cmpuint (window, >, 0);
  g_assert_cmpuint (window, <=, 8192);
  g_assert_cmpuint (window, <, plain_window / 4);
  g_assert_cmpuint (scale, ==, plain_scale);

  /* data came: the kernel's buffer, unlocked, the clamp at the scale's largest */
  move (sv, c, 1000);
  g_assert_cmpint (knob_first_window_end (c, kernel_buf, small_buf), ==, 0);
  g_assert_cmpint (opt (c, SOL_SOCKET, SO_RCVBUF), ==, kernel_buf);
  g_assert_cmpint (opt (c, SOL_SOCKET, SO_BUF_LOCK) & 2, ==, 0);
  g_assert_cmpint (opt (c, IPPROTO_TCP, TCP_WINDOW_CLAMP), ==, (int) (65535u << plain_scale));
  move (sv, c, 65536);
  /* once ended, or on a socket whose buffer is not the small one: left alone */
  g_assert_cmpint (knob_first_window_end (c, kernel_buf, small_buf), ==, -ESTALE);
  g_assert_cmpint (knob_first_window_end (pc, kernel_buf, small_buf), ==, -ESTALE);
  g_assert_cmpint (opt (pc, SOL_SOCKET, SO_RCVBUF), ==, plain_buf);
  close (c);
  close (sv);
  close (pc);
  close (ps);
}

/* A clamp given back is the free clamp, 65535 << the socket's receive
 * window scale, whether the buffer is autotuning's (grown here, past the
 * clamp the socket came with) or one we set (pacing's, @buffer_ours); with
 * a buffer the application set, the clamp it came with exactly.  No data
 * moves between the give-back and its read: the kernel's own writes of the
 * clamp come with data (sys.h). */
static void
test_give_back (void)
{
  int client, server;
  tcp_pair (&client, &server);
  uint32_t orig, now, free_clamp;
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  g_assert_cmpint (getsockopt (client, IPPROTO_TCP, TCP_INFO, &ti, &len), ==, 0);
  g_assert_cmpint (knob_free_clamp (client, &free_clamp), ==, 0);
  g_assert_cmpuint (free_clamp, ==, 65535u << ti.tcpi_rcv_wscale);
  g_assert_cmpint (knob_get_clamp (client, &orig), ==, 0);
  for (int i = 0; i < 256; i++)          /* 16 MiB read: autotuning grows the buffer */
    move (server, client, 65536);
  int buf = opt (client, SOL_SOCKET, SO_RCVBUF);
  g_assert_cmpint (knob_set_clamp (client, 4096), ==, 0);
  g_assert_cmpint (knob_give_back_clamp (client, orig, false), ==, 0);
  g_assert_cmpint (knob_get_clamp (client, &now), ==, 0);
  g_test_message ("clamp at connect %u, buffer %d, given back %u (scale %u)", orig, buf, now,
                  (unsigned) ti.tcpi_rcv_wscale);
  g_assert_cmpuint (now, ==, free_clamp);
  g_assert_cmpuint (now, >, (uint32_t) buf);   /* the buffer bounds the window, not the clamp */
  g_assert_cmpuint (now, >, orig);

  /* pacing's buffer, given back with the clamp: the free clamp too */
  g_assert_cmpint (knob_set_rcvbuf (client, 65536), ==, 0);
  g_assert_cmpint (knob_set_clamp (client, 4096), ==, 0);
  g_assert_cmpint (knob_restore_rcvbuf (client), ==, 0);
  g_assert_cmpint (knob_give_back_clamp (client, orig, true), ==, 0);
  g_assert_cmpint (knob_get_clamp (client, &now), ==, 0);
  g_assert_cmpuint (now, ==, free_clamp);
  close (client);
  close (server);

  tcp_pair (&client, &server);
  int set = 32768;
  g_assert_cmpint (setsockopt (client, SOL_SOCKET, SO_RCVBUF, &set, sizeof set), ==, 0);
  g_assert_cmpint (knob_get_clamp (client, &orig), ==, 0);
  move (server, client, 65536);
  g_assert_cmpint (knob_set_clamp (client, 4096), ==, 0);
  g_assert_cmpint (knob_give_back_clamp (client, orig, false), ==, 0);
  g_assert_cmpint (knob_get_clamp (client, &now), ==, 0);
  g_assert_cmpuint (now, ==, orig);
  close (client);
  close (server);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  listener = socket (AF_INET, SOCK_STREAM, 0);
  addr = (struct sockaddr_in) { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof addr;
  g_assert_cmpint (bind (listener, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  g_assert_cmpint (listen (listener, 256), ==, 0);
  g_assert_cmpint (getsockname (listener, (struct sockaddr *) &addr, &len), ==, 0);
  g_test_add_func ("/knobs/query/follows-a-dump", test_query);
  g_test_add_func ("/knobs/query/batches", test_query_batches);
  g_test_add_func ("/knobs/dump/gives-back", test_dump_gives_back);
  g_test_add_func ("/knobs/first-window", test_first_window);
  g_test_add_func ("/knobs/give-back", test_give_back);
  return g_test_run ();
}
