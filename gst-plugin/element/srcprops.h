/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * srcprops.h — bwsshttpsrc's properties: their ids, defaults, installation,
 * set and get.
 *
 * Every property of the souphttpsrc of the GStreamer built against (1.22
 * to 1.26: GST_CHECK_VERSION), with its name, type, range, flags and
 * default, then the BWSS ones (ranges: srclimits.h).  class_init installs
 * them in named steps, in the order of their ids (the order gst-inspect
 * shows): the resource, the proxy and credentials, the requests, TLS,
 * reading, the flow's BWSS preferences, the statistics, reading over n
 * connections.  A BWSS preference
 * set while playing goes to the flow at once; the others apply from the
 * next request.  Which lock guards which: gstbwsshttpsrc-private.h.
 */
#ifndef BWSS_SRC_PROPS_H
#define BWSS_SRC_PROPS_H

#include "gstbwsshttpsrc-private.h"

/* Gives @src every property's default (and souphttpsrc's blocksize). */
void     src_props_init (GstBwssHttpSrc *src);

/* class_init's steps, in this order */
void     src_props_install_resource (GObjectClass *gobject_class);
void     src_props_install_auth (GObjectClass *gobject_class);
void     src_props_install_request (GObjectClass *gobject_class);
void     src_props_install_tls (GObjectClass *gobject_class);
void     src_props_install_reading (GObjectClass *gobject_class);
void     src_props_install_bwss (GObjectClass *gobject_class);
void     src_props_install_stats (GObjectClass *gobject_class);
void     src_props_install_striping (GObjectClass *gobject_class);
/* The striping property's enum (StripingPolicy). */
GType    gst_bwss_striping_get_type (void);

/* GObject's set_property and get_property. */
void     src_props_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec);
void     src_props_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec);

/* The location, for the property and the URI handler: refused while PAUSED
 * or PLAYING, NULL clears it, icy:// and icyx:// become http://. */
gboolean src_props_set_location (GstBwssHttpSrc *src, const gchar *uri, GError **error);

/* The settings of the next request: a copy of the properties, taken under
 * the object lock (@req's previous ones are freed). */
void     src_props_take_request (GstBwssHttpSrc *src, SrcRequest *req);
void     src_request_clear (SrcRequest *req);

/* The streaming thread learned @learned from the bitrate sources: settled
 * with the BWSS properties of now, it goes to the flow and the statistics
 * (under prefs_lock, as a setter's change does). */
void     src_props_apply_learned (GstBwssHttpSrc *src, const BitrateChoice *learned);
/* A request opened or ended (@fetching), the player's buffer seen full or
 * not: the flow's preferences follow (player_prefs, abrrule.h), under
 * prefs_lock. */
void     src_props_set_player (GstBwssHttpSrc *src, gboolean fetching, PlayerBuffer buffer);
/* The bitrate property (prefs_lock), the stats interval and the striping
 * properties (object lock), for the streaming thread. */
guint64  src_props_bitrate_hint (GstBwssHttpSrc *src);
guint64  src_props_stats_interval (GstBwssHttpSrc *src);
void     src_props_striping (GstBwssHttpSrc *src, StripingPolicy *policy, guint *connections);

#endif
