/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * deadline.h — cancels a GCancellable when a monotonic deadline passes.
 *
 * libsoup bounds each I/O operation by the session's timeout; a request is
 * several operations (connect, headers, body) and a read position may take
 * several requests, so only a deadline over all of them bounds what one
 * position may cost.  The deadline can be pushed later (progress was made)
 * without re-arming.  One process-wide timer thread serves every element.
 */
#ifndef BWSS_SRC_DEADLINE_H
#define BWSS_SRC_DEADLINE_H

#include <gio/gio.h>

typedef struct Deadline Deadline;

/* Cancels @cancellable at @at_us (g_get_monotonic_time() µs) unless
 * disarmed first.  Returns the handle. */
Deadline *deadline_arm (GCancellable *cancellable, gint64 at_us);
/* Moves the deadline to @at_us, which must not be earlier than before. */
void      deadline_move (Deadline *d, gint64 at_us);
/* TRUE once the deadline passed and cancelled. */
gboolean  deadline_fired (Deadline *d);
/* Disarms and frees @d (NULL is fine). */
void      deadline_disarm (Deadline *d);

#endif
