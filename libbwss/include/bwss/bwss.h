/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss.h — receiver-driven bandwidth sharing for TCP (umbrella header).
 *
 * libbwss limits the advertised window of each TCP flow a host receives so
 * that the access link is shared the way the user wants (priority, minimum
 * rate, weight) instead of by RTT.  Including this header includes them all:
 *
 *   bwss/base.h     what they share: BWSS_API, the error codes and
 *                   bwss_strerror(), the one parser per unit and its limits,
 *                   the version.
 *   bwss/control.h  the controller: the control laws (FCS, target rate
 *                   allocation, the σ loops) behind one object, its
 *                   tunables, the preferences, the rate estimator.  No I/O,
 *                   no clock: measurements and time are inputs.
 *   bwss/late.h     the late-packet / prebuffer metric used by the element
 *                   and the lab.
 *   bwss/domain.h   the real-socket side: a per-user domain shared by every
 *                   participating process, flow registration, statistics.
 *
 * (bwss/bwss-glib.h, the GLib main-loop source, needs GLib: include it
 * yourself.)  The sub-headers include bwss/base.h and each other, never
 * this one.  Conventions: bwss/base.h.
 */
#ifndef BWSS_BWSS_H
#define BWSS_BWSS_H

#include <bwss/base.h>
#include <bwss/control.h>
#include <bwss/late.h>
#include <bwss/domain.h>

#endif /* BWSS_BWSS_H */
