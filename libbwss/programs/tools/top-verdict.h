/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * top-verdict.h — the first line of bwss-top: is the video safe?  A pure
 * function of one snapshot (no I/O, no clock).
 *
 * The "video" is every flow with a minimum rate (bwsshttpsrc registers its
 * stream with one; a download has none unless a rule or bwss-run gives it
 * one); the "downloads" are the others.  With V the video flows' measured
 * rate, M the sum of their minimums and T the sum of their targets:
 *
 *   V >= M             OK            (the video gets what it needs)
 *   V <  M <= T        OK, reads less (offered its minimum, the player
 *                                     takes less: its buffer is full)
 *   T <  M             SHORT         (the link cannot give the minimum)
 *
 * e.g. "video 4.1 of 3.5 Mbit/s needed — OK; 3 downloads share 4.2 Mbit/s".
 * Then what the loop does (bwss_phase_mode()): "keeping the queue short",
 * or "sharing the link with traffic bwss does not control" — the
 * downloads are as fast as plain TCP would make them, beside a neighbour
 * that fills the queue.  Without a controller, or with sharing suspended,
 * nobody allocates and the line says so instead of judging.
 */
#ifndef BWSS_TOP_VERDICT_H
#define BWSS_TOP_VERDICT_H

#include <stddef.h>
#include <bwss/domain.h>

/* Writes the verdict on @ds and its @n flows @rows into @buf (@len bytes,
 * NUL-terminated, truncated if need be); @utf8: the dash is "—", else "-". */
void top_verdict (char *buf, size_t len, const BwssDomainStats *ds, const BwssFlowInfo *rows,
                  size_t n, int utf8);

#endif
