/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stripes.h — the video over n connections: which byte range a connection
 * fetches next, the order the bytes go downstream in, and when the element
 * reads over n connections or over one.  Pure: no I/O, no clock of its own,
 * no lock (the caller's: srcstripes.c).
 *
 * The model (docs/household.md, "the frontier"; docs/architecture.md, "What
 * any receiver policy can reach there").  Beside an elastic neighbour on
 * one drop-tail queue, a video fetched over one TCP connection is short
 * after each loss of its own: its source-limited CUBIC sender keeps 0.7 of
 * its window and the backlog waits behind the hole, and no receiver window
 * raises a sender's.  Over n connections a loss takes 0.3/n of the video's
 * window and holds back 1/n of its backlog, and the n connections hold n
 * shares of the queue where one held one.  In the fluid model (two cells:
 * one neighbour flow beside a 2-Mbit/s video, three beside a 1-Mbit/s one;
 * means over ten tick phases) the video is at its minimum in 85-89 % of the
 * seconds over one connection, 97.6-99.5 % over two, 99.6-100 % over three,
 * and this machine gets 65-78 % of plain TCP's total over one, 92-96 % over
 * two or three.  Alone on a link, under flow queues, or beside inelastic
 * traffic a second connection buys nothing and costs a handshake, so the
 * element stripes only while the loop says the link is shared with traffic
 * bwss does not control (its COMPETE phase).
 *
 * Chunks, eq. (1).  From the offset a where striping starts to the end S of
 * the resource, chunk k is [a + kB, min (a + (k + 1) B, S)), fetched with a
 * bounded Range by whichever connection is free, and
 *
 *   B = max (B_min, min (B_max, T_chunk × r / 8))                       (1)
 *
 * with r the stream's rate (bit/s: the bitrate the element uses, else the
 * rate measured).  T_chunk = 0.1 s, because of a live source: its bytes
 * exist only as the stream is made, so consecutive ranges are served in
 * turn, each connection carrying the whole rate for T_chunk and idle for
 * (n - 1) T_chunk.  The model's connections each carry 1/n of it all the
 * time, each with its own window and backlog; turns shorter than a round
 * trip come to that (a chunk leaves in one window's burst, a loss delays
 * that chunk, not the stream), and an idle gap under the sender's
 * retransmission timeout (at least 200 ms on Linux, plus the RTT) keeps
 * its window: after a longer one TCP halves it per timeout elapsed
 * (RFC 5681, 4.1), and each turn would start short of the rate.  With the
 * default n = 3 the gap is 0.2 s.  A stored resource is served as fast as
 * a connection takes it: the idle round trip between two of a connection's
 * chunks then bounds it to B / RTT, 25 kB / 180 ms = 1.1 Mbit/s for a
 * 2-Mbit/s stream behind a full 150-ms queue, 3.3 over three connections.
 * B_min = 16 kB: under it the request and response headers (about 0.5 kB)
 * are a large part of a chunk.  B_max = 4 MB: the reorder buffer (eq. 2)
 * stays bounded for any bitrate.
 *
 * The window, eq. (2).  A connection takes chunk k only while
 *
 *   k < h + W,   W = 2n                                                  (2)
 *
 * with h the head: the oldest chunk not yet gone downstream whole.  The
 * reorder buffer holds at most W chunks (W × B bytes, 2n × 0.1 s of the
 * stream: the player's own buffer is downstream).  W = 2n lets each
 * connection start its next chunk while the head's is still arriving, so a
 * slow connection holds the others back only once it is a whole round of
 * chunks behind; beyond that the others wait for it (the video is as late
 * as its slowest connection, and more buffer would not change that).
 *
 * Order, eq. (3).  Bytes go downstream in offset order: the head chunk's as
 * they arrive, another chunk's once it is the head.  A chunk has two
 * owners, its connection (from stripe_plan_take to stripe_plan_done or
 * stripe_plan_give_back) and the order (until it went downstream whole);
 * it is freed when both are done with it, whichever is last.  Every byte of [a, e)
 * goes out once, where e is where assigning stopped (S, or where the
 * element narrowed: stripe_plan_narrow); after e one connection reads on.
 *
 * The hand-over, eq. (4).  Widening while one connection is reading, the
 * chunks start L bytes ahead of it, and it reads on to there:
 *
 *   L = W × B                                                            (4)
 *
 * so the n connections' handshakes and first round trips (two RTTs, 0.36 s
 * behind a full 150-ms queue) overlap the W × T_chunk seconds of the stream
 * it still brings (0.6 s for n = 3), and the switch costs the stream no
 * gap.  Dropping it at once and starting the chunks from its byte left the
 * video short for the second of the switch, and beside a neighbour the
 * loop reads such a second as the video's minimum not met.  Narrowing goes
 * the other way without a hand-over: the chunks finish, then one request
 * asks for the rest (the regime leaves MANY only with the short queue back,
 * where a round trip is short).
 *
 * The regime (StripeRegime), a state with its entry and exit:
 *   ONE  → MANY  (auto) the loop in COMPETE for T_enter = 1 s without a
 *                 break; or the median of the queue it read over the last
 *                 T_long = 3 s at least Q_long = 5 × its target: a queue
 *                 the loop cannot drain, others refill it.  The detector
 *                 weighs the same queue but withholds COMPETE while a video
 *                 is short of its minimum — the video over one connection
 *                 beside the neighbour, the very case the connections are
 *                 for (the detector then lacks "short-min" and may never
 *                 enter COMPETE);
 *                 the loop's TRACK holds the queue at about its target, 1-2
 *                 × it without a neighbour.  Or at once: "always";
 *   MANY → ONE   (auto) the loop out of COMPETE for T_exit = 10 s without a
 *                 break (and in MANY as long), with the median over that
 *                 stretch of the queue it reads at most q_short = 25 ms
 *                 (the household's short queue): the neighbour is gone.
 *                 Not against the loop's target: beside a neighbour it
 *                 grows toward the neighbour's queue, so q / q_target can
 *                 fall under 2 with the neighbour still there.  Out of
 *                 COMPETE alone is not enough: the loop leaves it when a
 *                 probe fails and holds TRACK for tens of seconds beside a
 *                 neighbour still there, whose queue the median sees; and
 *                 the phase flickers (a drain, a probe), which T_exit
 *                 rides out.  Or at once: striping set to "never";
 *   any  → NEVER  a server that answered a range with the whole resource
 *                 (no ranges): one connection for good.
 * MANY is what the regime asks for; the element stripes only when the
 * resource allows it too (stripe_possible).
 */
#ifndef BWSS_SRC_STRIPES_H
#define BWSS_SRC_STRIPES_H

#include <glib.h>

#define STRIPE_CHUNK_S        0.1                   /* T_chunk, s (eq. 1) */
#define STRIPE_CHUNK_MIN      (16 * 1024)           /* B_min, bytes */
#define STRIPE_CHUNK_MAX      (4 * 1024 * 1024)     /* B_max, bytes */
#define STRIPE_WINDOW_PER_CONNECTION 2              /* W / n (eq. 2) */
#define STRIPE_ENTER_US       (1 * G_USEC_PER_SEC)  /* T_enter, µs */
#define STRIPE_EXIT_US        (10 * G_USEC_PER_SEC) /* T_exit, µs */
#define STRIPE_SHORT_QUEUE_US 25000.0               /* q_short, µs */
#define STRIPE_LONG_QUEUE     5.0                   /* Q_long */
#define STRIPE_LONG_US        (3 * G_USEC_PER_SEC)  /* T_long, µs */
#define STRIPE_QUEUE_SAMPLES  64                    /* the medians' most recent readings */
#define STRIPE_CONNECTIONS_MAX 8                    /* the most connections */

/* B of eq. (1) for a stream of @rate_bps (<= 0: unknown, B_min). */
guint64 stripe_chunk_bytes (double rate_bps);

/* L of eq. (4) for chunks of @chunk bytes over @n connections. */
guint64 stripe_lead_bytes (guint64 chunk, guint n);

/* TRUE if a resource can be read over @n connections from @offset: more
 * than one connection asked for, its size @size known (@have_size), the
 * server known to take ranges (@ranges), and at least two chunks of @chunk
 * bytes left. */
gboolean stripe_possible (guint n, gboolean have_size, guint64 size, gboolean ranges,
                          guint64 offset, guint64 chunk);

/* ---- chunks, the window and the order (eqs. 1-3) ---- */

typedef struct {
  guint64  start, end;     /* [start, end) of the resource, bytes */
  guint64  filled;         /* bytes of it arrived (from start) */
  guint64  pushed;         /* bytes of it gone downstream (from start) */
  gboolean taken;          /* a connection is fetching it */
  gboolean out;            /* gone downstream whole: out of the plan's list */
  guint8  *data;           /* end - start bytes */
} StripeChunk;

typedef struct {
  guint64  size;           /* S */
  guint64  chunk;          /* B */
  guint    window;         /* W */
  guint64  next;           /* the first byte no chunk holds yet */
  guint64  stop;           /* no chunk starts at or after it (S, or narrowed) */
  GQueue   chunks;         /* StripeChunk *, in offset order, the head first */
} StripePlan;

/* Stripes [@from, @size) in chunks of @chunk bytes over @n connections. */
void         stripe_plan_init (StripePlan *p, guint64 from, guint64 size, guint64 chunk, guint n);
/* Frees every chunk; no connection may hold one any more. */
void         stripe_plan_clear (StripePlan *p);
/* The next chunk for a free connection (taken), or NULL: none left before
 * the stop, or the window (eq. 2) is full. */
StripeChunk *stripe_plan_take (StripePlan *p);
/* @c's connection gave it up: another may take it, from what arrived. */
void         stripe_plan_give_back (StripePlan *p, StripeChunk *c);
/* @c's connection fetched it whole and lets go of it (@c may be freed). */
void         stripe_plan_done (StripePlan *p, StripeChunk *c);
/* The first chunk no connection fetches (given back), or NULL. */
StripeChunk *stripe_plan_untaken (StripePlan *p);
/* @n more bytes of @c arrived (written at data + filled). */
void         stripe_plan_filled (StripePlan *p, StripeChunk *c, gsize n);
/* The head's bytes ready to go downstream: a pointer to them and their
 * count (0: none yet, or nothing left); *@offset their place in the
 * resource. */
gsize        stripe_plan_ready (StripePlan *p, const guint8 **data, guint64 *offset);
/* @n (0 or more) of the ready bytes went downstream; a chunk gone whole
 * leaves the list (and is freed, unless its connection still holds it). */
void         stripe_plan_pushed (StripePlan *p, gsize n);
/* No chunk is assigned after those already made (the regime went to ONE). */
void         stripe_plan_narrow (StripePlan *p);
/* The next byte to go downstream. */
guint64      stripe_plan_offset (const StripePlan *p);
/* TRUE once every byte before the stop went downstream. */
gboolean     stripe_plan_finished (const StripePlan *p);

/* ---- the regime ---- */

typedef enum {
  STRIPING_AUTO,           /* over n connections while the loop is in COMPETE */
  STRIPING_NEVER,          /* one connection */
  STRIPING_ALWAYS,         /* over n connections whenever the resource allows */
} StripingPolicy;

typedef enum {
  STRIPE_ONE,
  STRIPE_MANY,
  STRIPE_NEVER,            /* the server takes no ranges: one, for good */
} StripeRegime;

typedef struct {
  StripeRegime regime;
  gboolean     compete;    /* the loop's side at the last update */
  gint64       since_us;   /* on that side since, µs; 0 = no update yet */
  gint64       regime_us;  /* in this regime since, µs */
  double       queue[STRIPE_QUEUE_SAMPLES];  /* q / q_target read, a ring */
  double       queue_abs[STRIPE_QUEUE_SAMPLES]; /* q, µs */
  gint64       queue_us[STRIPE_QUEUE_SAMPLES]; /* when */
  guint        n_queue, next_queue;
} StripeMode;

void         stripe_mode_init (StripeMode *m);
/* The loop is in COMPETE (@compete) or not at @now_us (µs, any monotonic
 * clock), reading the queue @queue_us (µs) and @queue_ratio (q / q_target;
 * negative unknown: taken for short, the phase alone decides): the regime
 * after it, under @policy. */
StripeRegime stripe_mode_update (StripeMode *m, StripingPolicy policy, gboolean compete,
                                 double queue_ratio, double queue_us, gint64 now_us);
/* The server answered a range with the whole resource. */
void         stripe_mode_refuse (StripeMode *m);
const char  *stripe_regime_name (StripeRegime r);

#endif
