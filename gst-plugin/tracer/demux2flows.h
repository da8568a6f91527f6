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

/* 100 ms: a fragment's request gets its minimum back within a look (at
 * 200 ms the first fifth of a 1.5-s fragment runs on the share alone, and
 * the demuxer measures too little to keep its variant;
 * docs/lab-results.md); a look reads /proc/self/fd and a TCP_INFO per
 * socket of the servers, a few hundred system calls a second. */
#define DEMUX2_TICK_MS 100
/* A connection that sent a request or received data this recently is
 * fetching, ms: a fragment is never judged idle between two of its own
 * segments (a segment of a 60 kbit/s variant at 200 ms of RTT is ~200 ms
 * apart). */
#define DEMUX2_FETCH_MS 400

/* Starts the thread (once; later calls do nothing). */
void demux2_flows_start (void);

#endif
