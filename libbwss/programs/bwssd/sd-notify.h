/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sd-notify.h — bwssd tells its service manager how it is doing: the few
 * lines of systemd's notification protocol (sd_notify(3)), without
 * libsystemd: one datagram of "KEY=VALUE" lines to the AF_UNIX socket named
 * by $NOTIFY_SOCKET (a path, or an abstract name written with a leading
 * '@').  The unit is Type=notify: systemd counts bwssd as started once it
 * says READY=1, i.e. once the domain is open, the adopter scans and the
 * rules are watched — not merely once the process exists.
 *
 * Without $NOTIFY_SOCKET (bwssd started by hand, by a test, by another
 * service manager) it does nothing.
 */
#pragma once

/* Sends @state (e.g. "READY=1", "STOPPING=1") to $NOTIFY_SOCKET.  Returns 1
 * if it was sent, 0 if there is no $NOTIFY_SOCKET, -errno if it could not
 * be sent (the caller logs it; a notification never stops bwssd). */
int bwssd_notify (const char *state);
