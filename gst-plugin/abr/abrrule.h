/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * abrrule.h — the minimum rate of an adaptive stream's flow (pure).
 *
 * GStreamer's adaptive demuxers (hlsdemux/dashdemux, and hlsdemux2/
 * dashdemux2 alike, 1.22) pick, after each fragment, the highest variant
 * whose declared bandwidth B is at most f × R, where R is the lower of the
 * last fragment's download rate and the mean of the last three, and f the
 * demuxer's bandwidth-usage factor (bitrate-limit / bandwidth-usage /
 * bandwidth-target-ratio, 0.8 by default).  There is no hysteresis: to stay
 * on a variant the download must run at B / f just as to step up to it.
 *
 * So the need of variant v is  need(v) = B_v / f × ABR_MARGIN,  the rate a
 * fragment download must reach as the demuxer measures it (from the request
 * to the last byte, while the flow dithers around its target); ABR_MARGIN
 * is 1.10.  (The paper's 520 kbit/s for 450 kbit/s, a factor 1.156, is below
 * 1 / 0.8 = 1.25: it can hold no variant with this player rule.)
 *
 * The rule: the minimum is the need of the variant in use, or of a higher
 * one when σ, the domain's estimate of the link, covers its need:
 *   - when σ covers the next variant up, its need is the minimum, so the
 *     player's own rule steps up (the demuxer measures B_next / f);
 *   - the variant in use keeps its need whatever σ says.  The player steps
 *     down by its own rule, from what its fragment measured, and the
 *     minimum follows it there.  σ below need(current) is no verdict on
 *     the link: a delay loop that finds a queue cuts σ to the sum of the
 *     minima, so σ is this minimum (and less, for as long as a cut
 *     undershoots); a minimum lowered from that σ lowers the sum, the next
 *     cut follows it down, and the fragments, served at the lower need,
 *     measure too little for the variant the link could carry: the
 *     player steps down for as long as the cuts hold σ there;
 *   - with the variant in use unknown (DASH posts no switches), the
 *     highest variant whose need σ covers, the lowest when none fits.
 * Hysteresis: moving the minimum up to a variant above the one chosen last
 * takes σ ≥ need × ABR_UP_MARGIN (1.05), so a σ hovering at one need does
 * not flip the minimum at every evaluation.  After the player stepped down
 * by its own rule, the variant chosen last is the one above: σ covering its
 * need keeps that need the minimum, and the player's next fragment measures
 * enough to step back up.
 * With no usable σ (abr_usable_sigma) the minimum holds the current
 * variant, or the lowest when the current one is not known.
 *
 * What the flow asks the domain for: player_prefs(), the one function that
 * turns a stream's minimum into the flow's preferences (the element and the
 * tracer both call it; docs/element.md, "What the video asks for").  The
 * allocation gives a flow its minimum plus its weighted share of the rest
 * (eq. 6); a player whose buffer is full needs its minimum and no more:
 *   - fetching, buffer low or unknown: minimum m and the flow's weight —
 *     the rest of the link refills the buffer (and an ABR player measures
 *     the rate that lets it step up);
 *   - fetching, buffer full: minimum m and weight 0, so its target is m
 *     exactly (eq. 6 with w = 0) and its window holds it there: an ABR
 *     player gets need(v), the rate its own rule needs to hold (or step up
 *     to) the variant; a progressive player's read-ahead is its bitrate
 *     times the headroom, the margin of its minimum (Sammy, SIGCOMM 2023:
 *     pace a full buffer's downloads at what the ABR needs, and the others'
 *     latency falls with no loss of quality);
 *   - not fetching, buffer full (between an ABR player's fragments):
 *     minimum 0 and weight 0 — the flow asks for nothing it does not use:
 *     a reservation, or a share the loop would only find unused at its next
 *     decision, is the others' at once; both come back with the next
 *     request (its minimum restarts its window, eq. 1);
 *   - not fetching, buffer low or unknown: minimum 0 and its weight — a
 *     player short of media asks again at once, and its share keeps its
 *     window open for that request.
 * A minimum the application set (the min-rate property) is its own: it
 * stays while fetching whatever the buffer, only the weight follows the
 * buffer.
 */
#ifndef BWSS_SRC_ABRRULE_H
#define BWSS_SRC_ABRRULE_H

#include <glib.h>
#include <bwss/domain.h>

#define ABR_MARGIN     1.10
#define ABR_UP_MARGIN  1.05

typedef struct {
  const guint64 *ladder;   /* declared bandwidths, bit/s, ascending, no zero */
  guint          n;
  guint64        current;  /* the variant in use (one of the ladder), 0 = unknown */
  double         usage;    /* the demuxer's bandwidth-usage factor, in (0, 1] */
  double         sigma;    /* bit/s; negative = unknown */
  guint64        previous; /* the variant chosen last time, 0 = none */
} AbrInput;

/* The σ the rule may use, bit/s: the domain's σ while its controller tracks
 * the link (delay loop: TRACK; paper loop: REACTIVE, LINK_CONGESTED); -1
 * without a live controller and during its initialisation (IDLE, START,
 * RELEASE, RAISE), when σ is still the minima or the usage being measured,
 * not the link. */
double abr_usable_sigma (const BwssDomainStats *ds);
/* Returns need(@bandwidth) in bit/s for usage factor @usage (clamped to
 * [0.05, 1]). */
double abr_need (guint64 bandwidth, double usage);
/* Applies the rule: returns the minimum in bit/s (0 if the ladder is
 * empty) and the variant it is the need of in *chosen. */
double abr_min_rate (const AbrInput *in, guint64 *chosen);

/* The player's buffer, as the element or the tracer sees it. */
typedef enum {
  PLAYER_BUFFER_UNKNOWN = 0,  /* treated as low: never starve a player we cannot see */
  PLAYER_BUFFER_LOW,
  PLAYER_BUFFER_FULL,
} PlayerBuffer;

/* An adaptivedemux2 buffer is full from this fraction of the demuxer's own
 * buffering target up (high-watermark-time, else max-buffering-time): it
 * then waits between fragments, as a full buffer does. */
#define PLAYER_FULL_FRACTION  0.5
/* ... and the target when the demuxer sets neither, ns. */
#define PLAYER_DEFAULT_TARGET_NS  (10 * G_GUINT64_CONSTANT (1000000000))

/* The video flow's defaults, the element's and the tracer's alike: served
 * before the downloads beside it (bwss-run's default priority is 0), an
 * equal weight, and a minimum from a bitrate with the paper's margin (its
 * 520 kbit/s for a 450-kbit/s stream). */
#define VIDEO_FLOW_PRIORITY  10
#define VIDEO_FLOW_WEIGHT    1.0
#define VIDEO_RATE_HEADROOM  (520.0 / 450.0)

typedef struct {
  double       min_rate;   /* the stream's minimum, bit/s (abr_min_rate, the
                            * min-rate property, bitrate × headroom); 0 unknown */
  gint32       priority;   /* the flow's priority (VIDEO_FLOW_PRIORITY unless set) */
  double       weight;     /* the flow's weight (VIDEO_FLOW_WEIGHT unless set) */
  PlayerBuffer buffer;
  gboolean     fetching;   /* a request is being served on the flow */
} PlayerInput;

/* The preferences the video flow registers (the rule above). */
void player_prefs (const PlayerInput *in, BwssPrefs *out);

/* The buffer of an adaptivedemux2 demuxer: its video level against its
 * target (@level_ns < 0: unknown). */
PlayerBuffer player_buffer_of_level (gint64 level_ns, guint64 target_ns);

/* Seen only from its socket (the tracer), a connection is fetching while
 * data came or a request went within the fetch hold: the longest silence a
 * fragment in flight has, twice the longer of
 *   - its round trip: a flow held by its window receives a window per RTT
 *     (its receiver RTT, @rtt_us), and a request waits an RTT for its
 *     first byte;
 *   - one segment (@mss bytes) at its minimum (@min_rate bit/s): a flow
 *     served at its minimum gets no more;
 * at least PLAYER_FETCH_HOLD_MIN_MS.  Every millisecond of the hold after a
 * fragment's last byte keeps the minimum reserved and unused, so the hold
 * follows the flow instead of the slowest case: a constant 400 ms (the
 * lowest variant, 60 kbit/s, on a 200-ms path) held a 450-kbit/s player's
 * minimum through most of its idle time between 2-s fragments at 960
 * kbit/s (the fluid model, tests/unit/test-player.c).  Without an RTT or a
 * minimum: PLAYER_FETCH_HOLD_MAX_MS, that slowest case. */
#define PLAYER_FETCH_HOLD_MIN_MS  50.0
#define PLAYER_FETCH_HOLD_MAX_MS  400.0
double player_fetch_hold_ms (guint32 rtt_us, guint32 mss, double min_rate);

#endif
