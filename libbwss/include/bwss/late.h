/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss/late.h — late packets and required prebuffer of a constant-rate stream.
 *
 * The paper's streaming metric (Sec. VI-C, Fig. 7c): the stream is cut into
 * packets of @packet_bytes played at @rate_bps, so packet k (k = 0, 1, …) has
 * media time k·Δ with Δ = 8·packet_bytes/rate.  t0 is the arrival of the
 * first byte.  With P seconds of prebuffering, packet k is due at
 * t0 + P + k·Δ; it is late if it completes after that.  A packet completes
 * when the cumulative byte count reaches (k+1)·packet_bytes.
 *
 * Fraction for P, observed at time `now`:
 *     due(P)    = packets whose deadline is <= now
 *     counted   = max(arrived, due(P))
 *     late(P)   = arrived-late packets + (due(P) − arrived if positive)
 *     fraction  = late(P) / counted          (0 when counted = 0)
 * Packets that have not arrived by their deadline count as late, so a stalled
 * stream shows up before its data does.  After bwss_late_finish() (end of
 * stream) missing packets are no longer expected.
 *
 * Required prebuffer: the smallest P with no late packet, i.e.
 * max_k (arrival_k − t0 − k·Δ) over arrived packets (and the wait of the next
 * packet, while the stream is not finished), never negative.
 *
 * Pure and incremental: memory is O(number of thresholds), not O(packets).
 */
#ifndef BWSS_LATE_H
#define BWSS_LATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <bwss/base.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BWSS_LATE_MAX_THRESHOLDS 16
/* The paper's packet size and the prebuffers reported everywhere. */
#define BWSS_LATE_DEFAULT_PACKET_BYTES 1000u
BWSS_API extern const double bwss_late_default_prebuffers_s[5]; /* 0.5 1 2 4 8 */

typedef struct {
  double   rate_bps;
  uint32_t packet_bytes;
  size_t   n_thresholds;
  double   thresholds_s[BWSS_LATE_MAX_THRESHOLDS];
  uint64_t late_count[BWSS_LATE_MAX_THRESHOLDS]; /* arrived after their deadline */
  bool     started;
  bool     finished;
  uint64_t t0_us;
  uint64_t bytes;           /* cumulative bytes seen */
  uint64_t arrived;         /* completed packets */
  uint64_t last_us;         /* time of the latest sample */
  double   max_lateness_s;  /* max (arrival_k − t0 − kΔ) */
} BwssLate;

/* Prepares @l for a stream at @rate_bps (> 0) in packets of @packet_bytes
 * (> 0) with @n prebuffer thresholds (seconds, >= 0, n <= 16; NULL/0 = the
 * defaults).  Returns 0 or BWSS_EINVAL (l untouched). */
BWSS_API int bwss_late_init (BwssLate *l, double rate_bps, uint32_t packet_bytes,
                             const double *thresholds_s, size_t n);

/* Records that the cumulative byte count is @bytes at @now_us.  The first
 * call with bytes > 0 sets t0.  Counts that go backwards are ignored. */
BWSS_API void bwss_late_add (BwssLate *l, uint64_t now_us, uint64_t bytes);

/* Marks the end of the stream: no more packets are expected. */
BWSS_API void bwss_late_finish (BwssLate *l);

/* Returns the late fraction for threshold index @i observed at @now_us
 * (0..1), or a negative value if @i is out of range. */
BWSS_API double bwss_late_fraction (const BwssLate *l, size_t i, uint64_t now_us);

/* Returns the prebuffer needed for no late packet, seconds, at @now_us. */
BWSS_API double bwss_late_required_prebuffer (const BwssLate *l, uint64_t now_us);

#ifdef __cplusplus
}
#endif

#endif /* BWSS_LATE_H */
