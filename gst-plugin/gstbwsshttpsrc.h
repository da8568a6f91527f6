/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef GST_BWSS_HTTP_SRC_H
#define GST_BWSS_HTTP_SRC_H

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>
#include <libsoup/soup.h>
#include <bwss/domain.h>

G_BEGIN_DECLS

#define GST_TYPE_BWSS_HTTP_SRC (gst_bwss_http_src_get_type ())
G_DECLARE_FINAL_TYPE (GstBwssHttpSrc, gst_bwss_http_src, GST, BWSS_HTTP_SRC, GstPushSrc)

struct _GstBwssHttpSrc {
  GstPushSrc parent;

  /* properties (souphttpsrc's) */
  gchar *location;
  gchar *redirection_uri;
  gchar *user_agent;
  gboolean automatic_redirect;
  gchar *proxy;
  gchar *user_id, *user_pw, *proxy_id, *proxy_pw;
  gchar **cookies;
  gboolean is_live;
  guint timeout;
  GstStructure *extra_headers;
  gboolean iradio_mode;
  SoupLoggerLogLevel log_level;
  gboolean compress;
  gboolean keep_alive;
  gboolean ssl_strict;
  gchar *ssl_ca_file;
  gboolean ssl_use_system_ca_file;
  GTlsDatabase *tls_database;
  GTlsInteraction *tls_interaction;
  gint retries;
  gchar *method;
  gboolean typefind;

  /* properties (bwss) */
  gint priority;
  gdouble weight;
  guint64 min_rate;          /* bit/s, 0 = automatic */
  gdouble rate_headroom;
  guint64 bitrate;           /* hint, bit/s, 0 = unknown */
  guint64 stats_interval;    /* ns */

  /* connection */
  SoupSession *session;
  SoupMessage *msg;
  GInputStream *input;
  GCancellable *cancellable;
  guint64 offset;            /* next byte to read */
  guint64 request_start;     /* first byte asked in the current request */
  guint64 content_size;      /* 0 = unknown */
  gboolean have_size;
  gboolean seekable;
  gboolean know_seekable;
  gboolean got_headers;
  gint retry_count;
  guint64 seek_to;           /* pending seek, or G_MAXUINT64 */

  /* bwss */
  BwssDomain *domain;
  BwssFlow *flow;
  int flow_fd;
  guint64 flow_conn_id;      /* libsoup's id of the flow's connection, 0 = not known yet */
  int idle_fd;               /* keep-alive: the last flow's socket, while its */
  guint64 idle_conn_id;      /* connection waits in the session's pool */
  gboolean no_domain_logged;
  guint64 bitrate_in_use;    /* bit/s, from the chosen source */
  const gchar *bitrate_source;
  BwssLate late;
  gboolean late_on;
  guint64 bytes;
  gint64 start_time;         /* µs, first byte */
  gint64 next_stats;         /* µs */
  gint64 last_stats_time;
  guint64 last_stats_bytes;
  gdouble current_rate;
  GMutex stats_lock;
  GstStructure *stats;
};

G_END_DECLS

#endif
