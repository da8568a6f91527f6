/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-knobs.c — the controller's view of sockets on real loopback TCP
 * sockets: a sock_diag dump finds them, and exact queries (knob_query())
 * for what a dump found see their bytes move and forget a closed one.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
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
  return g_test_run ();
}
