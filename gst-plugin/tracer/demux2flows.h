/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * demux2flows.h — BWSS flows for adaptivedemux2's own connections.
 *
 * hlsdemux2 and dashdemux2 (GStreamer 1.22, what playbin3, uridecodebin3
 * and GstPlay use) download with a libsoup session of their own: no source
 * element sees the fragments.  While such a demuxer is PAUSED or PLAYING, a
 * thread of the plugin looks every DEMUX2_TICK_MS for this process's
 * established TCP connections to the servers its manifest names
 * (ownsockets.c), registers them in the user's domain with the video
 * flow's preferences (abrrule.h, as bwsshttpsrc), and gives the ABR-aware
 * minimum of the variant in use
 * (abrrule.h) to the connection that is downloading (the one whose received
 * byte count grew most since the last look; the others get no minimum).
 * Flows go when their connection closes or no such demuxer is left.
 * A connection bwsshttpsrc registered itself (the manifest's) is left to it.
 */
#ifndef BWSS_SRC_DEMUX2FLOWS_H
#define BWSS_SRC_DEMUX2FLOWS_H

#include <glib.h>

/* 50 ms: a fragment's request gets its minimum back within a look, and a
 * fragment that ended gives it up within a look after its fetch hold
 * (player_fetch_hold_ms(), abrrule.h).  In the fluid model's adaptive3
 * (tests/unit/test-player.c, 2-s fragments fetched at the minimum, 10 %
 * above what the demuxer needs to keep its variant) a look of up to 100 ms
 * at each request's start made 3 to 5 of 78 fragments too slow for the
 * demuxer, 50 ms 2 (the player's own view, 1 to 2).  A look reads
 * /proc/self/fd and a TCP_INFO per socket of the servers. */
#define DEMUX2_TICK_MS 50

/* Starts the thread (once; later calls do nothing). */
void demux2_flows_start (void);

#endif
