/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adopter.h — bwssd's adoption of the user's TCP flows.
 *
 * Each scan (adopter_scan(): every ADOPT_SCAN_MS while the domain has flows,
 * else every ADOPT_IDLE_SCAN_US, on the idle domain's dispatch) reads the
 * namespace's TCP sockets with sock_diag and:
 *
 *   rule | condition                                         | action
 *   dead | a scan a second (and at start)                    | the ledger's records of dead
 *        |                                                   | daemons: clamps put back
 *   gone | an adopted socket is closed, or its owner no      | unregister it, close the
 *        | longer holds it (its fd now names something else) | duplicate, remove its record
 *   owned| another participant registered an adopted socket  | the same: its preferences win
 *   new  | a socket of this user, ESTABLISHED, not in the    | find its process in /proc,
 *        | domain, that has received ADOPT_MIN_BYTES and more| match the rules, duplicate
 *        | since the last scan, while the watchdog lives     | it (pidfd_getfd), claim it in
 *        |                                                   | the ledger, register it
 *   else | another bwssd (any domain) holds it in the ledger | list it with that bwssd; a
 *        |                                                   | candidate again once it is free
 *   no   | the duplicate, the claim or the registration      | list it with the reason until
 *        | fails, or the rule says adopt=false               | it closes; never retried
 *
 * Adopted flows go into bwssd's controller (ctl.h) under the owner's pid
 * and origin "rule NAME" or "default", controlled like the flows clients
 * hand over, their windows set through bwssd's duplicates.
 * The status (what was not adopted and why) goes to a JSON file next to the
 * domain's segment, which bwss-top shows.  The clamp each adopted socket had
 * is in the ledger (adopt-ledger.h) before bwssd touches it.
 */
#ifndef BWSS_ADOPTER_H
#define BWSS_ADOPTER_H

#include <glib.h>
#include <bwss/domain.h>
#include "adopt-ledger.h"
#include "ctl.h"
#include "adopt-rules.h"
#include "adopt-watchdog.h"

#define ADOPT_SCAN_MS 250            /* while the domain has flows: a flow is adopted within
                                      * two scans */
#define ADOPT_IDLE_SCAN_US G_USEC_PER_SEC /* with none: a download is adopted at the first
                                      * scan after its first 32 kB, within 1.5 s of its
                                      * start; the idle domain's period (its dispatch runs on
                                      * whole seconds of the monotonic clock: both in one
                                      * wakeup, bwss/domain.h) */
#define ADOPT_MIN_BYTES 32768        /* a flow that received less is not a download yet */
#define ADOPT_STATUS_MAX_REFUSED 1000 /* the status file lists at most this many (~250 kB) */

typedef struct Adopter Adopter;

/* Returns an adopter for the controller @ctl, writing its status to
 * @status_path (NULL: none) and its claims to @ledger.  Takes @rules.
 * @watchdog, @ledger and @ctl must outlive it. */
Adopter *adopter_new (Ctl *ctl, AdoptWatchdog *watchdog, AdoptLedger *ledger, AdoptRules *rules,
                      const char *status_path, const char *capability);

/* Replaces the rules (taking @rules) and applies them to the adopted flows. */
void adopter_set_rules (Adopter *a, AdoptRules *rules);

/* Returns the rules in force. */
const AdoptRules *adopter_rules (const Adopter *a);

/* One scan (the rule table above).  Returns TRUE while the domain has flows
 * (the next scan is due in ADOPT_SCAN_MS, else ADOPT_IDLE_SCAN_US). */
gboolean adopter_scan (Adopter *a);

/* Gives back the adopted socket @inode, if adopted (a client hands it
 * over: its owner's preferences win over the rules). */
void adopter_yield (Adopter *a, guint64 inode);

/* Returns the number of flows adopted now. */
guint adopter_count (const Adopter *a);

/* Writes the status file now (it is written after every scan too): a
 * bwssd that never scans (autostarted) is found by bwss-top all the same. */
void adopter_publish (Adopter *a);

/* Gives every adopted flow back (its clamp restored, its record removed),
 * removes the status file and frees @a. */
void adopter_free (Adopter *a);

#endif
