/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * decision-line.h — one decision of the delay loop as a line of text
 * (bwss_controller_last_decision()), the same for bwssd's $BWSS_DECISIONS
 * and the model's runs, so the lab's reader (tests/lab/bwsslab/decisions.py)
 * reads both:
 *   <t s> phase=P rule=R sigma=bit/s u=bit/s q=µs qt=µs seen=foreign|ours|neither|-
 *         score=S missing=a,b|- bulk=N floored=N lost=N short=N overrun=N
 * "missing": the conditions of a foreign queue the decision lacked
 * (BWSS_DETECT_* in their order: no-bulk, unfloored, overrun, short-min,
 * has-link, no-queue, held).  Each flow's state at that decision follows
 * it, a line each (decision_flow_line()).
 */
#ifndef DECISION_LINE_H
#define DECISION_LINE_H

#include <stddef.h>
#include <bwss/control.h>

/* Writes the line of flow @id's state @st at that decision (its end
 * included), after the decision's own:
 *   <t s> flow id=N min=bit/s target=bit/s rate=bit/s window=bytes pace=bit/s rtt=µs
 * (rate negative: no estimate yet; pace 0: read freely); returns its
 * length, or 0 if it did not fit. */
size_t decision_flow_line (char *buf, size_t len, uint64_t at_us, uint64_t zero_us, uint64_t id,
                           const BwssFlowState *st);

/* Writes @d's line (its end included) into @buf of @len bytes, its time
 * @d->at_us less @zero_us, s; returns its length, or 0 if it did not fit. */
size_t decision_line (char *buf, size_t len, const BwssDecision *d, uint64_t zero_us);

#endif
