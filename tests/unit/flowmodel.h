/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * flowmodel.h — a fluid model of TCP flows sharing one access link, with its
 * queue, for the pure unit tests of the control laws (not a network: the lab
 * has the real one).
 *
 * Time advances in fixed steps (model_step; 1 ms is what the tests use).
 *
 * The bottleneck: capacity C (bit/s) serving one FIFO buffer of at most
 * max_queue_s·C bits.  Unresponsive cross traffic (cross_bps) arrives and
 * queues like the rest.  Arrivals beyond the buffer are dropped (drop-tail),
 * from every arriving flow in proportion to what it brought, each of them
 * seeing a loss; or, with drop_packets, as a FIFO drops: the bits beyond
 * the buffer are whole segments, and each is one flow's loss, the flow
 * drawn at random in proportion to what each brought — an overflow is a
 * few segments, so it costs one or two flows a loss, and which ones is
 * chance: a flow that lost keeps a smaller window while the others' grow,
 * and shares drift apart for seconds (the lab's CUBIC video, 1.0-3.0
 * Mbit/s second by second beside three flows of its size); or, with an AQM
 * (aqm_target_s > 0), every flow with bits in the queue also sees a loss
 * while the queueing delay has stayed above the AQM's target for
 * aqm_interval_s (a CoDel-like dropper: short queue, losses instead).
 * Departures share C in proportion to each flow's bits in the buffer (FIFO);
 * an empty buffer passes arrivals through while they fit.  The queueing
 * delay is q = bits queued / C.
 *
 * Or, with fq set (fluid), fq_codel's bottleneck (sch_fq_codel.c): one queue
 * per flow and one for the cross traffic, served by deficit round robin —
 * fluid: C·dt split equally among the queues that hold bits, a queue that
 * holds less than its share leaving the rest to the others (max-min) — and
 * CoDel on each queue (target aqm_target_s, interval aqm_interval_s; none
 * if aqm_target_s is 0): once a queue's sojourn time (its bits over the
 * rate it is served at) has stayed above the target for an interval, it
 * drops a packet of that queue, the next interval/√count later while it
 * stays above (the control law of RFC 8289).  Beyond max_queue_s·C bits in
 * all, the fattest queue drops (fq_codel's overflow).  Each flow sees its
 * own queue's delay: a flow under its fair share has an empty queue while
 * the others' stand.
 *
 * Flow i:
 *   - base RTT b_i; its data spends b_i/2 between the server and the
 *     bottleneck, so what it sends at t arrives there at t + b_i/2;
 *   - the receiver's advertised window adv_i (bytes; 0 = unlimited); a
 *     window below one MSS moves sub_mss_yield of itself per RTT (0.5 by
 *     default: a BBR sender's sub-MSS segments; a CUBIC sender on a host
 *     whose window scale rounds the window up to 2048 bytes moves 1.4
 *     segments, ~1.8 of a 1152-byte clamp; measured, see params.c);
 *   - the receiver's reads: at most read_bps (0 = freely) with a receive
 *     buffer of a few segments, so the sender can send no faster;
 *   - the sender's congestion window cwnd_i: slow start (doubling per RTT)
 *     until the first loss, then +1 MSS per RTT; halved on a loss, at most
 *     once per RTT (ai_segments and md_keep make a sender more aggressive:
 *     a CUBIC sender keeps 0.7 of its window and regrows faster, so a
 *     shared drop-tail buffer overflows every few seconds, not every few
 *     tens; cubic: CUBIC's own window function, RFC 9438 as Linux's
 *     tcp_cubic.c — W(t) = C·(t − K)³ + W_max after a loss, concave up to the
 *     window it lost at, then convex — which regrows fast just after the
 *     loss and slowly near W_max: a video its source holds near its need is
 *     short for a second or more after each of its losses).  It grows only
 *     while it limits the flow (Linux's
 *     cwnd-limited test), so a flow held by adv_i does not build a cwnd it
 *     never used;
 *   - optionally a source rate (an application that sends no faster, e.g. a
 *     paced video) and a limit elsewhere on its path (path_limit_bps, with
 *     path_delay_s of queue there while the limit binds, Fig. 5c).
 *   Sending rate: s_i = min(min(adv_i, cwnd_i)·8 / RTT_i, source_i, path_i, read_i),
 *   RTT_i = b_i + q + (path queue): the usual fluid form of a
 *   window-limited sender.
 *
 * What the receiver sees of flow i: its received bytes, rcv_rtt — the
 * kernel's receiver RTT (tcpi_rcv_rtt) from samples RTT_i taken in whole
 * milliseconds (TCP timestamps), one per two received segments (one per
 * delayed ACK), 0 until its first sample: before Linux 6.16 an EWMA with
 * gain 1/8 (tcp_rcv_rtt_update); from 6.16 (rcv_rtt_latch) a sample below
 * the estimate replaces it at once and a higher one moves it by 1/8, so it
 * reads the troughs of an AQM's sawtooth — min_rtt, the RTT of its
 * handshake (tcpi_min_rtt of a socket that only sent its request): b_i plus
 * the queue when the flow was added — and ooopack (tcpi_rcv_ooopack): the
 * segments received after a hole, a window's worth per loss.
 *
 * With packets (packet level, where a segment takes longer to send than
 * CoDel's target: 12 ms at 960 kbit/s against 5 ms), the single CoDel queue
 * holds whole segments: what reaches the bottleneck becomes MSS-sized
 * packets, served one at a time in FIFO order from when the one before
 * has left, and RFC 8289's CoDel runs at each dequeue as the lab's stage
 * does (sojourn above target for an interval with more than one MTU
 * queued, then drops at interval/√count, a count resumed within 16
 * intervals).  A data segment's RTT then also holds its own transmission
 * at the bottleneck, which the handshake's small segments (the base) do
 * not (12 ms of "queue" on an idle 960-kbit/s link), and a
 * loss with fewer than two segments in flight is a tail loss: no later
 * segment tells the sender, and Linux's tail loss probe (one segment out)
 * fires 2·SRTT + TCP_RTO_MIN later; the flow delivers nothing until then.
 * A download its reads pace at a DSL rate has one segment in flight.  With
 * repair_holes, any other loss is repaired by a retransmission (SACK, fast
 * retransmit), and until it arrives the receiver's in-order bytes stand
 * still: the hole opens when the lost segment was due (the queue it met)
 * and closes an RTT later (the duplicate ACKs' way back, the
 * retransmission's way through the queue), when what arrived behind it is
 * delivered at once (tcpi_bytes_received, what a reader gets); segments
 * behind the hole give no RTT sample.  The sender goes on sending behind
 * the hole; the reader, and the video's lateness, wait.  The window the
 * SYN offered (64240 bytes, before any clamp) is never taken
 * back: until that much arrived the sender may send it, whatever the
 * clamp or the reads (the senders' initial windows in the first second).  And
 * a source (source_bps) writes into a large send buffer: what the sender
 * could not send yet (a loss, a probe's wait) leaves later, as the lab's
 * video source does; a source that writes less than a segment at a time
 * with source_gaps sends each write as a segment of source_packet bytes.
 *
 * With source_gaps, a sender its source holds (source_i binds: a paced
 * video) has no data when an ACK arrives; the first segment after it
 * leaves when the source produces one, echoing that ACK's timestamp, so
 * the receiver's sample (tcp_rcv_rtt_measure_ts: now − TSecr, once per new
 * TSecr) reads RTT_i plus that wait: half the segments' spacing at the
 * source's rate on average (the lab's video source: 1000-byte packets at
 * 496 kbit/s, 16 ms apart, +8 ms).  A window-limited or ACK-clocked sender
 * sends at the ACK: no gap.  With gap_spread each sample holds its own wait,
 * spread evenly over the spacing (0 to 16 ms for the lab's source): under
 * 6.16+ the estimate then reads the low ones, as the lab's 39-ms floor of a
 * 30-ms path (its 1066-byte frame's 8.9 ms and no wait) shows.
 *
 * With shim_reads (packets), a receiver paced at read_bps reads as the
 * lab's shim does: a read waits until its credit — read_bps, at most
 * MODEL_READ_BURST_SEGMENTS deep — covers a segment, then takes all that
 * waits; the window's right edge (what was read, and the window; never
 * taken back) reaches the sender b_i/2 later, and the sender sends what it
 * opened at once, within its congestion window (sent less received, the
 * dropped segments sent again).  At 960 kbit/s behind CoDel that is a
 * burst of the window (3-4 segments, 38-50 ms of the link) every few
 * hundred ms, where a fluid read rate spaces them evenly.  Every segment of
 * such a burst echoes the window update's timestamp: one RTT sample per
 * read that reopened the window, its first segment's.
 *
 * With handshake_queue, a flow's handshake RTT (min_rtt) holds the queue
 * its SYN-ACK met at the bottleneck b_i/2 after it was added (the others'
 * first windows, for a flow on a long path), not the queue when added.
 *
 * With fq and packets, the bottleneck is fq_codel packet by packet (RFC
 * 8290, as the lab's stage and Linux's sch_fq_codel.c): what reaches it
 * becomes whole packets as above (a flow's segments, its source's writes,
 * the cross traffic's datagrams), each flow's into a queue of its own and
 * the cross traffic's into one more; the queues are served by deficit
 * round robin with a quantum of one full frame (MODEL_FQ_QUANTUM bytes on
 * the wire) over two lists — a queue that was empty joins the new flows'
 * list with a quantum of credit and is served before any queue of the old
 * flows' list (a sparse flow's packet waits only for the packet in
 * service); a queue that spent its credit goes to the old list's end with
 * a quantum more; a new queue emptied goes once through the old list, an
 * old queue emptied leaves — and CoDel (RFC 8289, as above) runs at each
 * dequeue on the queue served, its "more than one MTU queued" asked of the
 * whole scheduler's backlog (Linux's).  Beyond fq_limit_packets packets
 * (Linux's and the lab's 10240) or MODEL_FQ_MEMORY bytes queued, the head
 * of the queue holding the most bytes is dropped.  A packet's length on
 * the wire (its payload and headers, wire_headers) is what the link
 * serialises, the credit counts and the limits hold.  The steps stay 1 ms:
 * arrivals enter at a step's start, the link serves packet after packet at
 * their own times within it — at 960 kbit/s a full frame takes 12.6 ms, so
 * the order at the bottleneck is the packets', and an arrival is late by
 * less than a tenth of a frame.
 */
#ifndef FLOWMODEL_H
#define FLOWMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* a domain's worth of flows: more than the laws measure at one instant
 * (a cell whose rounds spread, controller.c's "Rounds") */
#define MODEL_MAX_FLOWS 320
#define MODEL_MSS       1448
/* what a full segment carries besides its payload on an Ethernet link, bytes:
 * Ethernet 14, IPv4 20, TCP 20, the timestamp option 12 (a 1514-byte frame,
 * 12.6 ms at 960 kbit/s) */
#define MODEL_WIRE_HEADER 66
/* ... and a UDP datagram of the cross traffic: Ethernet 14, IPv4 20, UDP 8;
 * iperf3's datagrams carry MODEL_UDP_PAYLOAD bytes (the lab's cross traffic) */
#define MODEL_UDP_WIRE_HEADER 42
#define MODEL_UDP_PAYLOAD     1000
/* the read credit's depth of a paced receiver, segments (params.c's
 * pace_burst_segments: one read may take two segments) */
#define MODEL_READ_BURST_SEGMENTS 2.0
/* history of sending rates, one entry per step: b_i/2 must fit */
#define MODEL_PIPE_STEPS 2048

/* CoDel's state for one queue (RFC 8289). */
typedef struct {
  double   first_above_s;   /* sojourn above target since + interval; 0 = below */
  double   drop_next_s;
  uint32_t count;
  uint32_t lastcount;       /* packets: count when the last drop state was entered */
  bool     dropping;
} ModelCodel;

/* A packet in the single CoDel queue (packet-level: see model_step). */
typedef struct {
  uint32_t flow;            /* its flow, or the model's n for the cross traffic */
  double   bits;
  double   enq_s;
  double   wait_s;          /* what it waited there, once taken to send */
} ModelPacket;

#define MODEL_FIFO_PACKETS 4096
#define MODEL_SOJOURN_BINS 1000

/* fq_codel packet by packet (fq and packets): its limits as Linux's
 * defaults and the lab's stage (lab-aqm.c) — packets held at most, bytes
 * on the wire held at most — and the round robin's quantum, bytes: one
 * frame of a full segment (MODEL_MSS and MODEL_WIRE_HEADER) */
#define MODEL_FQ_LIMIT   10240
#define MODEL_FQ_MEMORY  (32.0 * 1024.0 * 1024.0)
#define MODEL_FQ_QUANTUM 1514.0

/* One queue of the fq_codel bottleneck, packet by packet. */
typedef struct {
  int32_t    head, tail;    /* its packets in ModelFq.pkt, linked by ModelFq.link; -1: none */
  uint32_t   n;
  double     bytes;         /* on the wire */
  double     deficit;       /* the round robin's credit, bytes */
  int32_t    next;          /* the next queue in its list, -1: the last */
  uint8_t    list;          /* MODEL_FQ_NONE, MODEL_FQ_NEW or MODEL_FQ_OLD */
  ModelCodel codel;
} ModelFqQueue;

enum { MODEL_FQ_NONE, MODEL_FQ_NEW, MODEL_FQ_OLD };

/* The fq_codel bottleneck's packets and queues: flow i's queue is q[i],
 * the cross traffic's q[MODEL_MAX_FLOWS]; the packets in a pool of one
 * more than the limit (a packet is queued before the limit drops one). */
typedef struct {
  ModelPacket  pkt[MODEL_FQ_LIMIT + 1];
  int32_t      link[MODEL_FQ_LIMIT + 1];   /* the next packet in its queue, or free */
  int32_t      free_head;
  ModelFqQueue q[MODEL_MAX_FLOWS + 1];
  int32_t      new_head, new_tail, old_head, old_tail;
  double       backlog_bytes;              /* on the wire, every queue */
  uint32_t     backlog_pkts;
} ModelFq;

typedef struct {
  bool     active;
  double   base_rtt_s;
  uint32_t window_bytes;    /* advertised window; 0 = unlimited */
  double   source_bps;      /* 0 = sends as fast as allowed */
  double   source_backlog_bits; /* packets: written by the source, not sent yet */
  double   read_bps;        /* the receiver reads no faster; 0 = freely */
  double   path_limit_bps;  /* 0 = none */
  double   path_delay_s;    /* queueing delay elsewhere while path_limit binds */
  /* sender state */
  double   cwnd_bytes;
  double   ssthresh_bytes;
  double   ai_segments;     /* congestion avoidance: segments per RTT (0: 1, Reno) */
  double   md_keep;         /* what a loss leaves of cwnd (0: 1/2, Reno; CUBIC 0.7) */
  bool     cubic;           /* CUBIC's window function (RFC 9438) instead of ai_segments:
                             * md_keep 0.7, the cubic from the last loss, Reno's estimate */
  double   cubic_wmax;      /* ... the window before the last loss, segments */
  double   cubic_k_s;       /* ... when the cubic is back at cubic_wmax, s after the loss */
  double   cubic_west;      /* ... the window Reno's AIMD would have now, segments */
  double   last_loss_s;
  double   stall_until_s;   /* a tail loss: nothing until its probe, s */
  /* packets, repair_holes: a loss the sender repairs (not a tail loss) is
   * a hole in the receiver's sequence from when the lost segment was due
   * until its retransmission arrives; what arrives meanwhile waits */
  double   hole_from_s, hole_until_s;
  double   held_bits;       /* received behind the hole, not yet in order */
  double   syn_window_bytes; /* packets: what its SYN offered (0: Linux's 64240) */
  /* packets: the receiver's own window before the first clamp is the
   * kernel's, which grows from the SYN's by two segments per segment
   * received (tcp_grow_window) up to Linux's 64240, and the right edge
   * it offered stays open after a clamp (offered_edge, bytes): a flow the
   * controller meets only after its first data (the shim registers a
   * socket at its first read); false: the SYN's window alone, clamped at
   * once */
  bool     kernel_window;
  double   offered_edge;
  uint32_t stalls;
  double   pipe[MODEL_PIPE_STEPS];  /* sending rate history, bit/s */
  /* shim_reads: the receiver's paced reads as the shim makes them */
  bool     shim_paced;      /* ... in force now (paced, a window of a segment or more) */
  double   unread_bytes;    /* ... received, not read yet */
  double   read_tokens;     /* ... the read credit, bytes */
  double   read_edge;       /* ... the window's right edge it offered, bytes */
  bool     ts_fresh;        /* ... a window update since its last RTT sample: the next
                             * segment echoes a new timestamp */
  double   sent_bytes;      /* sent so far, less what the bottleneck dropped */
  double   edge_pipe[MODEL_PIPE_STEPS];  /* ... the right edge's history: what the
                                          * sender sees b_i/2 later */
  /* bottleneck and receiver state */
  double   queued_bits;
  double   seg_credit;      /* received segments not yet sampled */
  double   ts_phase;        /* where in its ms tick the next sample's segment arrives, [0, 1) */
  double   gap_phase;       /* gap_spread: where in its source's spacing the next sample's
                             * segment was written, [0, 1) */
  double   rcv_rtt8_us;     /* the kernel's 8× scaled estimate */
  /* outputs */
  double   rate_bps;        /* departures over the last step */
  double   send_bps;        /* sending rate over the last step */
  bool     read_bound;      /* the receiver's reads are what limits it: data waits */
  bool     source_bound;    /* its source is what limits it: the sender waits for data */
  double   source_packet;   /* the source's write size, bytes (0: MODEL_MSS) */
  double   rtt_s;           /* the RTT its packets see now */
  uint32_t rcv_rtt_us;      /* what TCP_INFO would report */
  uint32_t min_rtt_us;      /* the handshake's RTT */
  double   added_s;         /* when it was added */
  bool     handshake_done;  /* handshake_queue: its SYN-ACK crossed the bottleneck */
  uint64_t bytes;           /* received so far */
  double   bits_frac;       /* sub-byte remainder of bytes */
  uint32_t losses;
  uint32_t drops;           /* packets: its packets the bottleneck dropped */
  uint32_t ooopack;         /* segments received after a hole (tcpi_rcv_ooopack) */
  double   queue_s;         /* the queueing delay its packets see now */
  ModelCodel codel;         /* fq: its queue's CoDel */
} ModelFlow;

typedef struct {
  double    capacity_bps;
  double    cross_bps;
  double    max_queue_s;
  double    aqm_target_s;   /* 0 = drop-tail only */
  double    aqm_interval_s;
  double    sub_mss_yield;  /* what a window below one MSS moves per RTT, of itself */
  bool      fq;             /* fq_codel: a queue per flow, DRR, CoDel per queue */
  bool      rcv_rtt_latch;  /* the receiver RTT of Linux >= 6.16: lower samples at once */
  bool      packets;        /* packet level: CoDel on whole segments, their transmission
                             * in the RTT, tail loss probes (model_step) */
  bool      source_gaps;    /* a source-bound sender's samples include its wait for data */
  bool      gap_spread;     /* ... each its own wait, spread over the source's spacing
                             * (false: the mean wait, half the spacing, in every sample) */
  bool      source_buffer;  /* fluid too: a source writes into a large send buffer, and
                             * what its sender could not send leaves later (as packets) */
  /* drop-tail, fluid: the bits beyond the buffer are whole segments, each
   * lost by one flow drawn at random in proportion to what each brought
   * (seeded by drop_seed) — a full FIFO drops the packets that happen to
   * arrive, so one overflow costs one or two flows a loss, not every flow
   * (false: every arriving flow sees a loss) */
  bool      drop_packets;
  uint64_t  drop_seed;
  /* packets, no AQM: a drop-tail FIFO of whole packets, this many bytes of
   * IP packets at most (the lab's stage: queue_ms at the nominal rate, at
   * least two full packets; a 12-ms buffer at 960 kbit/s holds two, and two
   * flows' packets that meet there overflow it where a fluid buffer of
   * 0.012·C would pass them); 0 = the fluid drop-tail above */
  double    fifo_limit_bytes;
  /* packets: a repaired loss holds the receiver's in-order bytes for an RTT
   * (the header, "With repair_holes"); false: every byte arrives in order */
  bool      repair_holes;
  /* a single FIFO (fluid drop-tail, or packets): the link carries each
   * segment's headers besides its payload (MODEL_WIRE_HEADER a TCP
   * segment — a full one, or a write of source_packet bytes from a source
   * that holds its sender — MODEL_UDP_WIRE_HEADER a cross datagram of
   * MODEL_UDP_PAYLOAD), and its buffer and queueing delay count them: at
   * 960 kbit/s the payload room is ~918 kbit/s of full segments, 904 of the
   * video's 1000-byte ones; false: payload only (fq: always) */
  bool      wire_headers;
  /* packets: a receiver paced at read_bps reads as the shim does
   * (preload.c): a read waits until its credit (at read_bps, at most
   * MODEL_READ_BURST_SEGMENTS deep) covers a segment, then takes all that
   * waits; the window reopens by what was read, and its sender sends that
   * at once — a window's burst at the bottleneck, where a read rate moves
   * segments one by one (false: the sender sends at the read rate) */
  bool      shim_reads;
  /* the handshake's RTT (min_rtt) holds the queue its SYN-ACK met at the
   * bottleneck b_i/2 after the flow was added (false: the queue when added) */
  bool      handshake_queue;
  /* fq and packets: fq_codel's packet limit (0: MODEL_FQ_LIMIT, at most it) */
  uint32_t  fq_limit_packets;
  size_t    n;
  ModelFlow *f;             /* MODEL_MAX_FLOWS of them, from model_init() to model_free()
                             * (a domain's worth would not fit a test's stack) */
  /* state */
  double    now_s;
  double    dt_s;
  size_t    step;
  double    cross_queued_bits;
  double    above_since_s;  /* AQM: queue above its target since; < 0 if not */
  double    drop_credit_bits; /* drop_packets: dropped bits not yet a whole segment */
  uint64_t  rng;            /* drop_packets: the draw's state (xorshift64*) */
  ModelCodel cross_codel;   /* fq: the cross traffic's queue's CoDel */
  /* the single CoDel queue, packet by packet */
  ModelPacket fifo[MODEL_FIFO_PACKETS];
  size_t    fifo_head, fifo_n;
  ModelPacket in_service;   /* bits 0: the link is idle */
  double    link_free_s;    /* when the packet in service has left */
  double    packet_credit[MODEL_MAX_FLOWS + 1];   /* arrived bits not yet a whole packet */
  ModelCodel codel;
  ModelFq  *fqp;            /* fq and packets: from the first step to model_free() */
  uint32_t  codel_drops;    /* packets it dropped (CoDel and the limit) */
  uint32_t  cross_drops;    /* ... of them the cross traffic's */
  uint32_t  sojourn_ms[MODEL_SOJOURN_BINS];  /* packets by their wait at the bottleneck,
                                              * 1-ms bins (the last: longer) */
  /* outputs */
  double    queue_s;        /* queueing delay at the bottleneck now */
  double    cross_rate_bps; /* cross traffic delivered over the last step */
  double    dropped_bits;
} Model;

/* A link of @capacity_bps with a buffer of @max_queue_s; steps of @dt_s. */
void   model_init (Model *m, double capacity_bps, double max_queue_s, double dt_s);
void   model_free (Model *m);
/* Adds a flow of base RTT @base_rtt_s, starting in slow start; returns its
 * index. */
size_t model_add (Model *m, double base_rtt_s);
/* Advances the model by one step. */
void   model_step (Model *m);
/* Bits of every kind queued at the bottleneck now (with wire_headers, as
 * the wire carries them). */
double model_queued_bits (const Model *m);

#endif
