/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * params.c — the tunables of the control laws and their defaults.
 *
 * Values marked "paper" are the ones of Mehra, De Vleeschouwer and Zakhor
 * (Sec. IV and V); the others fill what the paper leaves open, each with the
 * reason beside it.  Two sets: the delay loop (the default) and the paper's
 * loop, which keeps the FCS exactly as it ran with it.
 */
#include <math.h>
#include <string.h>
#include <bwss/control.h>

/* FCS (Sec. IV) */
#define DEFAULT_ALPHA            0.05  /* rate slack: ±5 % desired interval; below
                                        * one MSS/RTT step at the windows we see
                                        * (4–64 segments), so the law settles */
#define DEFAULT_BETA             0.7   /* paper: stability factor of eq. (4) */
#define DEFAULT_EPSILON          0.3   /* paper: EWMA weight of the old R */
#define DEFAULT_PHI_RTTS         2.0   /* paper: φ = 2·RTT */
#define DEFAULT_WAIT_PHIS        3.0   /* paper: no adjustment before RTT + 3φ */
#define DEFAULT_MIN_PHI_US       10000 /* 10 ms: the control period, the one owner of
                                        * it (the domain dispatches, and so ticks the
                                        * controller, this often while flows run), and
                                        * φ's floor: a shorter period would be mostly
                                        * jitter of the tick */
#define DEFAULT_MIN_WINDOW       1     /* paper: w >= 1 so every RTT moves data */
#define DEFAULT_MAX_WINDOW_FACTOR 4.0  /* anti-windup: a flow that cannot reach T
                                        * (limited elsewhere) must not grow w without
                                        * bound; 4× the model leaves room for RTT
                                        * estimates that undershoot by 4× */
#define DEFAULT_MSS              1448  /* Ethernet MSS with timestamps, bytes */
#define DELAY_MIN_WINDOW_BYTES   1152  /* delay loop: a window below one segment.  The
                                        * kernel clamps TCP_WINDOW_CLAMP at SOCK_MIN_RCVBUF/2
                                        * (~1140 bytes); a clamp under one segment makes the
                                        * sender send sub-MSS segments, less than half a
                                        * segment per RTT (docs/sockets.md, "A window below
                                        * one segment"), so a flow held at its floor takes
                                        * less than half the link a one-segment floor takes
                                        * at 960 kbit/s */
#define DEFAULT_SUB_WINDOW_YIELD 0.5   /* ... about 610 of its 1152 bytes per RTT (same
                                        * measurement): what "held by its window" and the
                                        * allocation's need (capacity-model.c) expect of it */
#define PAPER_RESTART_FRACTION   0.5   /* paper loop: when σ falls because the link is
                                        * congested, eq. (3) steps spaced by RTT + 3φ of
                                        * a queue-inflated RTT take tens of seconds; the
                                        * new target is known now.  Half: the loop's own
                                        * steps (10 %, 1 − γ = 20 %) never move that far */
#define DELAY_RESCALE_THRESHOLD  0.10  /* delay loop: a σ decision that moves a target
                                        * by more than 10 % acts on the window at once
                                        * (w·T'/T, one RTT), so a cut empties the queue
                                        * within RTTs; smaller moves are the closed
                                        * loop's (eq. 3/4), which knows the flow */

/* Read pacing (delay loop, slow links).  A window is whole segments, and
 * the smallest one the kernel offers carries 0.4-1.4 segments per RTT
 * depending on the sender (tests/socket/measure-knobs --fractions, 960
 * kbit/s, 30 ms: a 1158-byte clamp moved 162 kbit/s from a BBR sender, 546
 * from CUBIC): at 1 Mbit/s a segment per RTT is 40 % of the link, and two
 * bulk flows at their floors leave a video no room once cross traffic
 * comes.  There the receiver reads at the target with a receive buffer the
 * size of the window: the window closes when the buffer is full, and each
 * read reopens it by what it took (measured: 40 kbit/s paced reads moved
 * 38.8 kbit/s over the link, the buffer at 4096). */
#define DELAY_PACE_MIN_BPS       8000.0 /* a segment every 1.4 s: the connection stays
                                         * alive under servers' idle timeouts */
#define DELAY_PACE_MAX_LINK_BPS  10e6   /* SO_RCVBUF ends receive-buffer autotuning for
                                         * good; restored, the buffer is at most
                                         * net.core.rmem_max (208 KiB on Debian, a
                                         * window for 10 Mbit/s at 150 ms).  Above
                                         * 10 Mbit/s a segment per RTT is a few % of the
                                         * link and the floor does no harm */
#define DELAY_PACE_RCVBUF_BYTES  4096   /* at least: the kernel doubles it, ~2-3
                                         * segments of window before the reads bind */
#define DELAY_PACE_BURST_SEGMENTS 2.0   /* one read may take two segments, so the
                                         * window reopens by at least one */
#define DELAY_PACE_WINDOW_SEGMENTS 2    /* over paced reads: a window that carries more
                                         * than one segment per RTT (delayed ACKs: 80 %
                                         * of the model at 2 MSS) */

/* Rate meter */
#define DEFAULT_METER_STEP_US    25000 /* 25 ms: 128 entries cover 3.2 s, half the
                                        * paper loop's longest settle interval; the
                                        * delay loop's windows (>= 100 ms) are
                                        * interpolated within a step */

/* The paper's σ loop (Sec. V-C) */
#define DEFAULT_GAMMA            0.8   /* paper */
#define DEFAULT_RAISE_STEP       0.10  /* +10 % per probe: from a 2× underestimate
                                        * the raise phase reaches the link in ~8 probes */
#define DEFAULT_RAISE_FLOOR_BPS  64000.0 /* so σ can leave 0 (idle start) */
#define DEFAULT_RISE_THRESHOLD   0.03  /* U must grow by 3 %: above the FCS slack
                                        * noise (α = 5 % split over several flows) */
#define PAPER_RELEASE_US         2000000 /* 2 s of plain TCP to measure U: ~20 RTTs
                                          * at 100 ms, enough for slow start to end */
#define DEFAULT_PROBE_MIN_US     500000  /* 0.5 s */
#define DEFAULT_PROBE_MAX_US     5000000 /* 5 s: FCS settling at 350 ms RTT */
#define DEFAULT_REINIT_PERIOD_US (300ull * 1000000ull) /* paper: "a few minutes" */
#define DEFAULT_SETTLE_CYCLES    2     /* each increase closes β = 70 % of the gap:
                                        * two FCS cycles come within γ of a new target */
#define DEFAULT_CONGESTED_PROBE_SETTLES 8 /* after link congestion, wait 8 settle
                                           * intervals before probing for room */
#define DEFAULT_CONGESTED_PROBE_MAX_US (32ull * 1000000ull) /* a permanently smaller
                                        * link costs one probe every half minute */

/* The delay loop (capacity.c) */
#define DELAY_RELEASE_US         200000 /* 200 ms: the flows' first RTT samples (their
                                          * handshake's, at once) and a first U; the loop
                                          * finds the link itself.  Every ms of release is
                                          * plain TCP: at 960 kbit/s a first second of it
                                          * costs a video that starts with downloads 1-2.5 s
                                          * of media (docs/lab-results.md) */
#define DEFAULT_QUEUE_TARGET_MIN_US 10000 /* 10 ms: short enough for calls and games
                                        * sharing the link, long enough that the
                                        * kernel's ms-granular RTT sees it */
#define DEFAULT_QUEUE_TARGET_MAX_US 100000 /* 100 ms: only a bound (two packets of a
                                        * 232 kbit/s link) */
#define DEFAULT_QUEUE_TARGET_PACKETS 2.0 /* a queue of under two packets is empty half
                                        * the time: the link idles (at 960 kbit/s one
                                        * packet is 12 ms) */
#define DEFAULT_QUEUE_BAND       0.20  /* ±20 % of q_t: the RTT's ms granularity and
                                        * a segment of dither per flow */
#define DEFAULT_LINK_DECAY       0.1   /* C2's link rate: the U of one short interval
                                        * can be a burst's worth or nothing (at 960
                                        * kbit/s, docs/lab-results.md); cross traffic's
                                        * 33 % is taken in four decisions */
#define DEFAULT_DRAIN_HORIZON_RTTS 2.0 /* excess queue removed over two RTTs: the
                                        * queue answers σ within about one RTT, so a
                                        * loop gain of 1/2 (stable) */
#define DEFAULT_MAX_CUT          0.30  /* at most 30 % of U per decision: a burst of
                                        * cross traffic inflates the queue far beyond
                                        * what it takes from the link */
#define DEFAULT_RAISE_GAIN       0.5   /* the mirror of the drain horizon */
#define DEFAULT_MAX_RAISE        0.25  /* +25 % per decision at most (the boost while
                                        * the queue stays empty doubles up to it) */
#define DEFAULT_DECISION_RTTS    2.0   /* a window change acts within an RTT, the queue
                                        * shows it within another */
#define DEFAULT_DECISION_SEGMENTS 16.0 /* the kernel's receiver RTT is an EWMA of gain
                                        * 1/8 per delayed ACK: 16 segments move it by
                                        * two thirds of a step */
#define DEFAULT_DECISION_MIN_US  100000  /* 100 ms */
#define DEFAULT_DECISION_MAX_US  1000000 /* 1 s */
#define DEFAULT_LOSS_DECISIONS   3     /* a window change needs an RTT to bite and the
                                        * kernel's RTT average another to show it */
#define DEFAULT_WINDOW_LIMITED   0.75  /* the kernel's knob table: at 2 MSS a flow
                                        * moves 80 % of window/RTT (delayed ACKs) */
#define DEFAULT_LOSS_RAISE       0.01  /* after losses said where the link is (an AQM
                                        * keeps the queue below any target), creep
                                        * back up by 1 % a decision, not by the
                                        * queue's ramp: the windows bind most of the
                                        * time, so the weights hold */
#define DEFAULT_LOSS_MEMORY_US   (10ull * 1000000ull)
#define DEFAULT_PROBE_WAIT_US    500000 /* a probe beyond the link seen busy that
                                        * finds no room costs a queue of a few ms: at
                                        * most two a second at first ... */
#define DEFAULT_PROBE_WAIT_MAX_US (2ull * 1000000ull) /* ... one every 2 s on a
                                        * link that stays as it is: flows whose reads are
                                        * paced keep no queue, so a probe is the only way
                                        * to see that cross traffic left (8 s held 3 of
                                        * 8 Mbit/s idle for that long in the model) */
#define DEFAULT_LINK_WINDOW_US   500000 /* the rate the link gives us is U over half a
                                        * second at least: a decision 60 ms after the
                                        * last (a queue that grew fast) can see 1.1
                                        * Mbit/s on a 960 kbit/s link (reads paced in
                                        * bursts of a window; docs/lab-results.md) */
#define DEFAULT_RESERVE_HOLD_US  (2ull * 1000000ull) /* a video below its minimum
                                        * for less than 2 s is the queue's victim (it
                                        * catches up when the queue drains: its
                                        * reserve stays); longer, its source sends less
                                        * (Fig. 5c: what it leaves goes to the others) */
#define DEFAULT_OWN_QUEUE_US     2000  /* a flow's own queue: its RTT excess over the
                                        * link's (the smallest) by 2 ms or more.  Under
                                        * fq_codel a flow that sends more than its fair
                                        * share holds CoDel's 5-ms target in its own
                                        * queue, the others' read ~0-2 ms (4.9 against
                                        * ~2 ms, docs/lab-results.md): below CoDel's
                                        * target, so the queue CoDel keeps shows; above
                                        * the kernel's 1-ms RTT samples and a segment of
                                        * 8 Mbit/s (1.5 ms), so one segment more in one
                                        * flow's queue is not "its own queue".  Under
                                        * FIFO every flow sees the one queue: 0. */
#define DEFAULT_OWN_QUEUE_MEMORY_US (2ull * 1000000ull) /* ... above the
                                        * largest queue of the link in the last 2 s:
                                        * the kernel's RTT of a video at 160 kbit/s
                                        * takes 7 samples a second, its 1/8 average
                                        * keeps 15 % of a drained queue 2 s later */
#define DEFAULT_DEMAND_HEADROOM  0.25  /* a flow its source holds (a video at its
                                        * bitrate) gets a quarter more than it used:
                                        * room to catch up after a stall, which it
                                        * shows by using it (then it is uncapped) */

/* Beside traffic the loop does not control (capacity-compete.c) */
#define DEFAULT_COMPETE_DETECT_US 1500000 /* 1.5 s: a queue of our own that
                                        * stands above its target is drained by the cut
                                        * within a second (max_cut a decision, the
                                        * kernel's RTT average behind it); one that
                                        * stands for seconds while σ holds the downloads
                                        * at their floor is refilled by someone else.
                                        * 1 s: UDP overfilling a 960-kbit/s link beside
                                        * a video read as a neighbour in 11 % of the
                                        * seconds (the model); 2 s: the neighbour's
                                        * onset cost 2 points more */
#define DEFAULT_COMPETE_ENTER    0.75  /* three quarters of the detector's memory with
                                        * the queue standing: ~2 s from the first
                                        * decision that held the downloads down */
#define DEFAULT_COMPETE_HEADROOM 0.5   /* windows half again above what a flow moves:
                                        * its congestion window, not ours, holds it
                                        * (a Reno sawtooth swings ±33 % around its mean) */
#define DEFAULT_COMPETE_YIELD    2.0   /* a FIFO shares what our downloads give up
                                        * among every flow still sending: the video
                                        * takes about half of it beside one neighbour */
#define DEFAULT_COMPETE_PROBE_US (45ull * 1000000ull) /* the drain that asks whether
                                        * the queue is ours again, at least this often
                                        * (a neighbour there from the start: no link
                                        * known to see its share come back).  Each one
                                        * hands the neighbour room its window keeps and
                                        * costs the video an overflow when ours come
                                        * back: every 8 s cost this host 20 % of
                                        * plain TCP's total in the model, every 30 s 7 % */
#define DEFAULT_COMPETE_PROBE_RISE 0.15 /* U within 15 % of the link this host had alone:
                                        * the neighbour's share came back (one of four
                                        * flows is 25 %); beside it, U stays below
                                        * (the model: 6.0 of 8 Mbit/s at most) */
#define DEFAULT_COMPETE_DRAIN_US 800000 /* a 150-ms buffer of our own drains in two
                                        * RTTs of 190 ms after our windows close, and
                                        * the kernel's RTT average shows it ~100 ms
                                        * later */
#define DEFAULT_PROGRESS_BYTES   65536.0 /* 64 KiB: a third of a 192-KiB send buffer —
                                        * a sender waiting for room (nginx) is woken
                                        * when a third of its buffer has gone */
#define DEFAULT_PROGRESS_PERIOD_US (30ull * 1000000ull) /* ... per 30 s, the shortest
                                        * common stall timeout (clients'); half of
                                        * nginx's send_timeout (60 s): 17.5 kbit/s, the
                                        * slowest any flow is read.  Per 15 s (35 kbit/s)
                                        * cost the 960-kbit/s streaming video a second
                                        * more below its minimum in the model */

const char *
bwss_loop_name (BwssLoop loop)
{
  switch (loop) {
    case BWSS_LOOP_DELAY: return "delay";
    case BWSS_LOOP_PAPER: return "paper";
    default:              return NULL;
  }
}

int
bwss_loop_parse (const char *text, BwssLoop *out)
{
  if (text == NULL || out == NULL)
    return BWSS_EINVAL;
  if (strcmp (text, "delay") == 0)
    *out = BWSS_LOOP_DELAY;
  else if (strcmp (text, "paper") == 0)
    *out = BWSS_LOOP_PAPER;
  else
    return BWSS_EINVAL;
  return BWSS_OK;
}

int
bwss_params_init_for (BwssParams *p, BwssLoop loop)
{
  if (p == NULL || bwss_loop_name (loop) == NULL)
    return BWSS_EINVAL;
  p->loop = loop;
  p->alpha = DEFAULT_ALPHA;
  p->beta = DEFAULT_BETA;
  p->epsilon = DEFAULT_EPSILON;
  p->phi_rtts = DEFAULT_PHI_RTTS;
  p->wait_phis = DEFAULT_WAIT_PHIS;
  p->min_phi_us = DEFAULT_MIN_PHI_US;
  p->min_window_segments = DEFAULT_MIN_WINDOW;
  p->min_window_bytes = loop == BWSS_LOOP_PAPER ? 0 : DELAY_MIN_WINDOW_BYTES;
  p->sub_window_yield = DEFAULT_SUB_WINDOW_YIELD;
  p->max_window_factor = DEFAULT_MAX_WINDOW_FACTOR;
  p->default_mss = DEFAULT_MSS;
  p->meter_step_us = DEFAULT_METER_STEP_US;
  p->pace_min_bps = DELAY_PACE_MIN_BPS;
  p->pace_max_link_bps = DELAY_PACE_MAX_LINK_BPS;
  p->pace_rcvbuf_bytes = DELAY_PACE_RCVBUF_BYTES;
  p->pace_burst_segments = DELAY_PACE_BURST_SEGMENTS;
  p->pace_window_segments = DELAY_PACE_WINDOW_SEGMENTS;
  p->gamma = DEFAULT_GAMMA;
  p->raise_step = DEFAULT_RAISE_STEP;
  p->raise_floor_bps = DEFAULT_RAISE_FLOOR_BPS;
  p->rise_threshold = DEFAULT_RISE_THRESHOLD;
  p->probe_min_us = DEFAULT_PROBE_MIN_US;
  p->probe_max_us = DEFAULT_PROBE_MAX_US;
  p->settle_cycles = DEFAULT_SETTLE_CYCLES;
  p->congested_probe_settles = DEFAULT_CONGESTED_PROBE_SETTLES;
  p->congested_probe_max_us = DEFAULT_CONGESTED_PROBE_MAX_US;
  p->queue_target_min_us = DEFAULT_QUEUE_TARGET_MIN_US;
  p->queue_target_max_us = DEFAULT_QUEUE_TARGET_MAX_US;
  p->queue_target_packets = DEFAULT_QUEUE_TARGET_PACKETS;
  p->queue_band = DEFAULT_QUEUE_BAND;
  p->link_decay = DEFAULT_LINK_DECAY;
  p->drain_horizon_rtts = DEFAULT_DRAIN_HORIZON_RTTS;
  p->max_cut = DEFAULT_MAX_CUT;
  p->raise_gain = DEFAULT_RAISE_GAIN;
  p->max_raise = DEFAULT_MAX_RAISE;
  p->decision_rtts = DEFAULT_DECISION_RTTS;
  p->decision_segments = DEFAULT_DECISION_SEGMENTS;
  p->decision_min_us = DEFAULT_DECISION_MIN_US;
  p->decision_max_us = DEFAULT_DECISION_MAX_US;
  p->loss_decisions = DEFAULT_LOSS_DECISIONS;
  p->window_limited_fraction = DEFAULT_WINDOW_LIMITED;
  p->loss_raise = DEFAULT_LOSS_RAISE;
  p->loss_memory_us = DEFAULT_LOSS_MEMORY_US;
  p->demand_headroom = DEFAULT_DEMAND_HEADROOM;
  p->reserve_hold_us = DEFAULT_RESERVE_HOLD_US;
  p->own_queue_us = DEFAULT_OWN_QUEUE_US;
  p->own_queue_memory_us = DEFAULT_OWN_QUEUE_MEMORY_US;
  p->link_window_us = DEFAULT_LINK_WINDOW_US;
  p->probe_wait_us = DEFAULT_PROBE_WAIT_US;
  p->probe_wait_max_us = DEFAULT_PROBE_WAIT_MAX_US;
  p->compete_detect_us = DEFAULT_COMPETE_DETECT_US;
  p->compete_enter = DEFAULT_COMPETE_ENTER;
  p->compete_headroom = DEFAULT_COMPETE_HEADROOM;
  p->compete_yield = DEFAULT_COMPETE_YIELD;
  p->compete_probe_us = DEFAULT_COMPETE_PROBE_US;
  p->compete_probe_rise = DEFAULT_COMPETE_PROBE_RISE;
  p->compete_drain_us = DEFAULT_COMPETE_DRAIN_US;
  p->progress_bytes = DEFAULT_PROGRESS_BYTES;
  p->progress_period_us = DEFAULT_PROGRESS_PERIOD_US;
  if (loop == BWSS_LOOP_PAPER) {
    p->release_us = PAPER_RELEASE_US;
    p->reinit_period_us = DEFAULT_REINIT_PERIOD_US;
    p->restart_fraction = PAPER_RESTART_FRACTION;
    p->rescale_threshold = 0.0;
    p->pace_reads = false;
    p->dither = false;
  } else {
    p->release_us = DELAY_RELEASE_US;
    p->reinit_period_us = 0;            /* the loop follows the link all the time */
    p->restart_fraction = 0.0;
    p->rescale_threshold = DELAY_RESCALE_THRESHOLD;
    p->pace_reads = true;
    p->dither = true;                   /* see fcs.c: a short queue leaves windows of a
                                         * few segments, a segment is 20-50 % of a share */
  }
  return BWSS_OK;
}

void
bwss_params_init (BwssParams *p)
{
  bwss_params_init_for (p, BWSS_LOOP_DELAY);
}

static bool
in_open_range (double v, double lo, double hi)
{
  return isfinite (v) && v > lo && v < hi;
}

#define CHECK(cond, name) \
  do { if (!(cond)) { if (field) *field = (name); return BWSS_EINVAL; } } while (0)

#define MAX_US (600ull * 1000000ull)    /* ten minutes bounds every duration */

int
bwss_params_validate (const BwssParams *p, const char **field)
{
  if (field)
    *field = NULL;
  CHECK (p != NULL, "params");
  CHECK (bwss_loop_name (p->loop) != NULL, "loop");
  CHECK (in_open_range (p->alpha, 0.0, 1.0), "alpha");
  CHECK (isfinite (p->beta) && p->beta > 0.0 && p->beta <= 1.0, "beta");
  CHECK (isfinite (p->epsilon) && p->epsilon >= 0.0 && p->epsilon < 1.0, "epsilon");
  CHECK (isfinite (p->phi_rtts) && p->phi_rtts > 0.0 && p->phi_rtts <= 100.0, "phi_rtts");
  CHECK (isfinite (p->wait_phis) && p->wait_phis >= 1.0 && p->wait_phis <= 100.0, "wait_phis");
  CHECK (p->min_phi_us <= 10000000, "min_phi_us");
  CHECK (p->min_window_segments >= 1 && p->min_window_segments <= 65535, "min_window_segments");
  CHECK (p->min_window_bytes <= 65535, "min_window_bytes");
  CHECK (isfinite (p->sub_window_yield) && p->sub_window_yield > 0.0 && p->sub_window_yield <= 1.0,
         "sub_window_yield");
  CHECK (isfinite (p->max_window_factor) && p->max_window_factor >= 1.0
         && p->max_window_factor <= 1000.0, "max_window_factor");
  CHECK (p->default_mss >= 64 && p->default_mss <= 65535, "default_mss");
  CHECK (isfinite (p->restart_fraction) && p->restart_fraction >= 0.0
         && p->restart_fraction < 1.0, "restart_fraction");
  CHECK (isfinite (p->rescale_threshold) && p->rescale_threshold >= 0.0
         && p->rescale_threshold < 1.0, "rescale_threshold");
  CHECK (p->meter_step_us >= 1000 && p->meter_step_us <= 10000000, "meter_step_us");
  CHECK (isfinite (p->pace_min_bps) && p->pace_min_bps > 0.0, "pace_min_bps");
  CHECK (isfinite (p->pace_max_link_bps) && p->pace_max_link_bps >= 0.0, "pace_max_link_bps");
  CHECK (p->pace_rcvbuf_bytes >= 1024 && p->pace_rcvbuf_bytes <= (1u << 24), "pace_rcvbuf_bytes");
  CHECK (isfinite (p->pace_burst_segments) && p->pace_burst_segments >= 1.0
         && p->pace_burst_segments <= 1000.0, "pace_burst_segments");
  CHECK (p->pace_window_segments >= 1 && p->pace_window_segments <= 64, "pace_window_segments");
  CHECK (in_open_range (p->gamma, 0.0, 1.0), "gamma");
  CHECK (isfinite (p->raise_step) && p->raise_step > 0.0 && p->raise_step <= 10.0, "raise_step");
  CHECK (isfinite (p->raise_floor_bps) && p->raise_floor_bps >= 0.0, "raise_floor_bps");
  CHECK (isfinite (p->rise_threshold) && p->rise_threshold > 0.0 && p->rise_threshold < 1.0,
         "rise_threshold");
  CHECK (p->release_us >= 1000 && p->release_us <= MAX_US, "release_us");
  CHECK (p->probe_min_us >= 1000 && p->probe_min_us <= p->probe_max_us, "probe_min_us");
  CHECK (p->probe_max_us <= MAX_US, "probe_max_us");
  CHECK (p->reinit_period_us == 0 || p->reinit_period_us >= 1000000, "reinit_period_us");
  CHECK (p->settle_cycles >= 1 && p->settle_cycles <= 100, "settle_cycles");
  CHECK (p->congested_probe_settles >= 1 && p->congested_probe_settles <= 1000,
         "congested_probe_settles");
  CHECK (p->congested_probe_max_us >= 1000 && p->congested_probe_max_us <= MAX_US,
         "congested_probe_max_us");
  CHECK (p->queue_target_min_us >= 1000 && p->queue_target_min_us <= p->queue_target_max_us,
         "queue_target_min_us");
  CHECK (p->queue_target_max_us <= 10000000, "queue_target_max_us");
  CHECK (isfinite (p->queue_target_packets) && p->queue_target_packets >= 0.0
         && p->queue_target_packets <= 1000.0, "queue_target_packets");
  CHECK (in_open_range (p->queue_band, 0.0, 1.0), "queue_band");
  CHECK (isfinite (p->link_decay) && p->link_decay >= 0.0 && p->link_decay < 1.0, "link_decay");
  CHECK (isfinite (p->drain_horizon_rtts) && p->drain_horizon_rtts > 0.0
         && p->drain_horizon_rtts <= 1000.0, "drain_horizon_rtts");
  CHECK (in_open_range (p->max_cut, 0.0, 1.0), "max_cut");
  CHECK (isfinite (p->raise_gain) && p->raise_gain > 0.0 && p->raise_gain <= 100.0, "raise_gain");
  CHECK (isfinite (p->max_raise) && p->max_raise > 0.0 && p->max_raise <= 10.0, "max_raise");
  CHECK (isfinite (p->decision_rtts) && p->decision_rtts > 0.0 && p->decision_rtts <= 1000.0,
         "decision_rtts");
  CHECK (isfinite (p->decision_segments) && p->decision_segments >= 0.0
         && p->decision_segments <= 1e6, "decision_segments");
  CHECK (p->decision_min_us >= 1000 && p->decision_min_us <= p->decision_max_us,
         "decision_min_us");
  CHECK (p->decision_max_us <= MAX_US, "decision_max_us");
  CHECK (p->loss_decisions >= 1 && p->loss_decisions <= 1000, "loss_decisions");
  CHECK (isfinite (p->window_limited_fraction) && p->window_limited_fraction > 0.0
         && p->window_limited_fraction <= 1.0, "window_limited_fraction");
  CHECK (isfinite (p->loss_raise) && p->loss_raise > 0.0 && p->loss_raise <= 1.0, "loss_raise");
  CHECK (p->loss_memory_us <= MAX_US, "loss_memory_us");
  CHECK (p->probe_wait_us <= p->probe_wait_max_us, "probe_wait_us");
  CHECK (p->probe_wait_max_us <= MAX_US, "probe_wait_max_us");
  CHECK (p->reserve_hold_us <= MAX_US, "reserve_hold_us");
  CHECK (p->link_window_us <= MAX_US, "link_window_us");
  CHECK (p->own_queue_us <= MAX_US, "own_queue_us");
  CHECK (p->own_queue_memory_us <= MAX_US, "own_queue_memory_us");
  CHECK (p->compete_detect_us >= 1000 && p->compete_detect_us <= MAX_US, "compete_detect_us");
  CHECK (isfinite (p->compete_enter) && p->compete_enter > 0.0 && p->compete_enter <= 1.0,
         "compete_enter");
  CHECK (isfinite (p->compete_headroom) && p->compete_headroom > 0.0
         && p->compete_headroom <= 100.0, "compete_headroom");
  CHECK (isfinite (p->compete_yield) && p->compete_yield > 0.0 && p->compete_yield <= 100.0,
         "compete_yield");
  CHECK (p->compete_probe_us >= 1000 && p->compete_probe_us <= MAX_US, "compete_probe_us");
  CHECK (isfinite (p->compete_probe_rise) && p->compete_probe_rise > 0.0
         && p->compete_probe_rise <= 100.0, "compete_probe_rise");
  CHECK (p->compete_drain_us >= 1000 && p->compete_drain_us <= MAX_US, "compete_drain_us");
  CHECK (isfinite (p->progress_bytes) && p->progress_bytes > 0.0 && p->progress_bytes <= 1e9,
         "progress_bytes");
  CHECK (p->progress_period_us >= 1000 && p->progress_period_us <= MAX_US, "progress_period_us");
  CHECK (isfinite (p->demand_headroom) && p->demand_headroom >= 0.0 && p->demand_headroom <= 100.0,
         "demand_headroom");
  return BWSS_OK;
}
