/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* srcprops.c — bwsshttpsrc's properties (see srcprops.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "srclimits.h"
#include "srcprops.h"

GST_DEBUG_CATEGORY_EXTERN (bwss_http_src_debug);
#define GST_CAT_DEFAULT bwss_http_src_debug

enum {
  PROP_0,
  PROP_LOCATION,
  PROP_USER_AGENT,
  PROP_AUTOMATIC_REDIRECT,
  PROP_PROXY,
  PROP_USER_ID,
  PROP_USER_PW,
  PROP_PROXY_ID,
  PROP_PROXY_PW,
  PROP_COOKIES,
  PROP_IS_LIVE,
  PROP_TIMEOUT,
  PROP_EXTRA_HEADERS,
  PROP_IRADIO_MODE,
  PROP_HTTP_LOG_LEVEL,
  PROP_COMPRESS,
  PROP_KEEP_ALIVE,
  PROP_SSL_STRICT,
  PROP_SSL_CA_FILE,
  PROP_SSL_USE_SYSTEM_CA_FILE,
  PROP_TLS_DATABASE,
  PROP_TLS_INTERACTION,
  PROP_RETRIES,
  PROP_METHOD,
  PROP_TYPEFIND,
  PROP_RETRY_BACKOFF_FACTOR,   /* GStreamer >= 1.26 */
  PROP_RETRY_BACKOFF_MAX,      /* GStreamer >= 1.26 */
  /* bwss */
  PROP_PRIORITY,
  PROP_WEIGHT,
  PROP_MIN_RATE,
  PROP_RATE_HEADROOM,
  PROP_BITRATE,
  PROP_STATS_INTERVAL,
  PROP_STATS,
  PROP_CONNECTIONS,
  PROP_STRIPING,
};

/* souphttpsrc's defaults.  The user agent takes the form of the souphttpsrc
 * built with the same GStreamer: from 1.24 "{VERSION}" stands for the
 * version (httpclient.c replaces it in the header), before it the version
 * is in the default itself. */
#if GST_CHECK_VERSION(1, 24, 0)
#define DEFAULT_USER_AGENT             "GStreamer bwsshttpsrc {VERSION} "
#else
#define DEFAULT_USER_AGENT             "GStreamer bwsshttpsrc " PACKAGE_VERSION " "
#endif
#define DEFAULT_AUTOMATIC_REDIRECT     TRUE
#define DEFAULT_PROXY                  ""
#define DEFAULT_IS_LIVE                FALSE
#define DEFAULT_TIMEOUT                15
#define DEFAULT_IRADIO_MODE            TRUE
#define DEFAULT_HTTP_LOG_LEVEL         LSOUP_LOGGER_LOG_HEADERS
#define DEFAULT_COMPRESS               FALSE
#define DEFAULT_KEEP_ALIVE             TRUE
#define DEFAULT_SSL_STRICT             TRUE
#define DEFAULT_SSL_USE_SYSTEM_CA_FILE TRUE
#define DEFAULT_RETRIES                3
#define DEFAULT_RETRY_BACKOFF_FACTOR   0.0     /* s; 0 = retry at once */
#define DEFAULT_RETRY_BACKOFF_MAX      60.0    /* s */
#define DEFAULT_BLOCKSIZE              4096
/* bwss */
#define DEFAULT_PRIORITY               VIDEO_FLOW_PRIORITY   /* the video's policy: abrrule.h */
#define DEFAULT_WEIGHT                 VIDEO_FLOW_WEIGHT
#define DEFAULT_MIN_RATE               0       /* automatic */
#define DEFAULT_RATE_HEADROOM          VIDEO_RATE_HEADROOM
#define DEFAULT_BITRATE                0
#define DEFAULT_STATS_INTERVAL         GST_SECOND
/* three: in the fluid model's two drop-tail household cells the video over
 * three connections is at its minimum in 99.6-100 % of the seconds and this
 * machine at 95 % of plain TCP's total; over two 97.6-99.5 % and 92-94 %
 * (docs/household.md, "the frontier") */
#define DEFAULT_CONNECTIONS            3
#define DEFAULT_STRIPING               STRIPING_AUTO

/* ---- defaults ------------------------------------------------------------------ */

void
src_props_init (GstBwssHttpSrc *src)
{
  HttpConfig *h = &src->http;
  h->user_agent = g_strdup (DEFAULT_USER_AGENT);
  h->automatic_redirect = DEFAULT_AUTOMATIC_REDIRECT;
  h->proxy = g_strdup (DEFAULT_PROXY);
  h->timeout = DEFAULT_TIMEOUT;
  h->iradio_mode = DEFAULT_IRADIO_MODE;
  h->log_level = DEFAULT_HTTP_LOG_LEVEL;
  h->log = gst_debug_category_get_threshold (GST_CAT_DEFAULT) >= GST_LEVEL_TRACE;
  h->compress = DEFAULT_COMPRESS;
  h->keep_alive = DEFAULT_KEEP_ALIVE;
  h->ssl_strict = DEFAULT_SSL_STRICT;
  h->ssl_use_system_ca_file = DEFAULT_SSL_USE_SYSTEM_CA_FILE;
  src->is_live = DEFAULT_IS_LIVE;
  src->retries = DEFAULT_RETRIES;
  src->retry_backoff_factor = DEFAULT_RETRY_BACKOFF_FACTOR;
  src->retry_backoff_max = DEFAULT_RETRY_BACKOFF_MAX;
  g_mutex_init (&src->prefs_lock);
  src->priority = DEFAULT_PRIORITY;
  src->weight = DEFAULT_WEIGHT;
  src->min_rate = DEFAULT_MIN_RATE;
  src->rate_headroom = DEFAULT_RATE_HEADROOM;
  src->bitrate = DEFAULT_BITRATE;
  src->stats_interval = DEFAULT_STATS_INTERVAL;
  src->connections = DEFAULT_CONNECTIONS;
  src->striping = DEFAULT_STRIPING;
  gst_base_src_set_blocksize (GST_BASE_SRC (src), DEFAULT_BLOCKSIZE);
}

/* ---- installation: class_init's steps, in the order of the ids ---------------- */

/* What is fetched and how: location, user-agent, automatic-redirect. */
void
src_props_install_resource (GObjectClass *gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location", "Location to read from", "", rw));
  g_object_class_install_property (gobject_class, PROP_USER_AGENT,
      g_param_spec_string ("user-agent", "User-Agent",
          "Value of the User-Agent HTTP request header field", DEFAULT_USER_AGENT, rw));
  g_object_class_install_property (gobject_class, PROP_AUTOMATIC_REDIRECT,
      g_param_spec_boolean ("automatic-redirect", "automatic-redirect",
          "Automatically follow HTTP redirects (HTTP Status Code 3xx)", DEFAULT_AUTOMATIC_REDIRECT, rw));
}

/* The proxy and the credentials: proxy, user-id, user-pw, proxy-id,
 * proxy-pw, cookies. */
void
src_props_install_auth (GObjectClass *gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  g_object_class_install_property (gobject_class, PROP_PROXY,
      g_param_spec_string ("proxy", "Proxy", "HTTP proxy server URI", DEFAULT_PROXY, rw));
  g_object_class_install_property (gobject_class, PROP_USER_ID,
      g_param_spec_string ("user-id", "user-id", "HTTP location URI user id for authentication", "", rw));
  g_object_class_install_property (gobject_class, PROP_USER_PW,
      g_param_spec_string ("user-pw", "user-pw", "HTTP location URI user password for authentication", "", rw));
  g_object_class_install_property (gobject_class, PROP_PROXY_ID,
      g_param_spec_string ("proxy-id", "proxy-id", "HTTP proxy URI user id for authentication", "", rw));
  g_object_class_install_property (gobject_class, PROP_PROXY_PW,
      g_param_spec_string ("proxy-pw", "proxy-pw", "HTTP proxy URI user password for authentication", "", rw));
  g_object_class_install_property (gobject_class, PROP_COOKIES,
      g_param_spec_boxed ("cookies", "Cookies", "HTTP request cookies", G_TYPE_STRV, rw));
}

/* How the requests are made and the source behaves: is-live, timeout,
 * extra-headers, iradio-mode, http-log-level, compress, keep-alive. */
void
src_props_install_request (GObjectClass *gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  g_object_class_install_property (gobject_class, PROP_IS_LIVE,
      g_param_spec_boolean ("is-live", "is-live", "Act like a live source", DEFAULT_IS_LIVE, rw));
  g_object_class_install_property (gobject_class, PROP_TIMEOUT,
      g_param_spec_uint ("timeout", "timeout",
          "Value in seconds to timeout a blocking I/O (0 = No timeout).", 0, 3600, DEFAULT_TIMEOUT, rw));
  g_object_class_install_property (gobject_class, PROP_EXTRA_HEADERS,
      g_param_spec_boxed ("extra-headers", "Extra Headers",
          "Extra headers to append to the HTTP request", GST_TYPE_STRUCTURE, rw));
  g_object_class_install_property (gobject_class, PROP_IRADIO_MODE,
      g_param_spec_boolean ("iradio-mode", "iradio-mode",
          "Enable internet radio mode (ask server to send shoutcast/icecast metadata interleaved with the actual stream data)",
          DEFAULT_IRADIO_MODE, rw));
  g_object_class_install_property (gobject_class, PROP_HTTP_LOG_LEVEL,
      g_param_spec_enum ("http-log-level", "HTTP log level", "Set log level for soup's HTTP session log",
          lsoup_logger_log_level_get_type (), DEFAULT_HTTP_LOG_LEVEL, rw));
  g_object_class_install_property (gobject_class, PROP_COMPRESS,
      g_param_spec_boolean ("compress", "Compress", "Allow compressed content encodings",
          DEFAULT_COMPRESS, rw));
  g_object_class_install_property (gobject_class, PROP_KEEP_ALIVE,
      g_param_spec_boolean ("keep-alive", "keep-alive", "Use HTTP persistent connections",
          DEFAULT_KEEP_ALIVE, rw));
}

/* TLS: ssl-strict, ssl-ca-file, ssl-use-system-ca-file, tls-database,
 * tls-interaction.  From 1.24 souphttpsrc marks the two CA file properties
 * GST_PARAM_DOC_SHOW_DEFAULT. */
void
src_props_install_tls (GObjectClass *gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
#if GST_CHECK_VERSION(1, 24, 0)
  const GParamFlags ca = rw | GST_PARAM_DOC_SHOW_DEFAULT;
#else
  const GParamFlags ca = rw;
#endif
  g_object_class_install_property (gobject_class, PROP_SSL_STRICT,
      g_param_spec_boolean ("ssl-strict", "SSL Strict", "Strict SSL certificate checking",
          DEFAULT_SSL_STRICT, rw));
  g_object_class_install_property (gobject_class, PROP_SSL_CA_FILE,
      g_param_spec_string ("ssl-ca-file", "SSL CA File", "Location of a SSL anchor CA file to use",
          NULL, ca));
  g_object_class_install_property (gobject_class, PROP_SSL_USE_SYSTEM_CA_FILE,
      g_param_spec_boolean ("ssl-use-system-ca-file", "Use System CA File", "Use system CA file",
          DEFAULT_SSL_USE_SYSTEM_CA_FILE, ca));
  g_object_class_install_property (gobject_class, PROP_TLS_DATABASE,
      g_param_spec_object ("tls-database", "TLS database",
          "TLS database with anchor certificate authorities used to validate the server certificate",
          G_TYPE_TLS_DATABASE, rw));
  g_object_class_install_property (gobject_class, PROP_TLS_INTERACTION,
      g_param_spec_object ("tls-interaction", "TLS interaction",
          "A GTlsInteraction object to be used when the connection or certificate database need to interact with the user.",
          G_TYPE_TLS_INTERACTION, rw));
}

/* Reading: retries, method, typefind (deprecated, non-functional), and from
 * GStreamer 1.26 retry-backoff-factor and retry-backoff-max (the wait
 * before a retry: srcattempt.c). */
void
src_props_install_reading (GObjectClass *gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  g_object_class_install_property (gobject_class, PROP_RETRIES,
      g_param_spec_int ("retries", "Retries", "Maximum number of retries until giving up (-1=infinite)",
          -1, G_MAXINT, DEFAULT_RETRIES, rw));
  g_object_class_install_property (gobject_class, PROP_METHOD,
      g_param_spec_string ("method", "HTTP method", "The HTTP method to use (GET, HEAD, OPTIONS, etc)",
          NULL, rw));
  g_object_class_install_property (gobject_class, PROP_TYPEFIND,
      g_param_spec_boolean ("typefind", "Typefind", "Run typefind before negotiating (deprecated, non-functional)",
          FALSE, rw | G_PARAM_DEPRECATED));
#if GST_CHECK_VERSION(1, 26, 0)
  g_object_class_install_property (gobject_class, PROP_RETRY_BACKOFF_FACTOR,
      g_param_spec_double ("retry-backoff-factor", "Backoff Factor",
          "Exponential retry backoff factor in seconds", 0.0, G_MAXDOUBLE,
          DEFAULT_RETRY_BACKOFF_FACTOR, rw));
  g_object_class_install_property (gobject_class, PROP_RETRY_BACKOFF_MAX,
      g_param_spec_double ("retry-backoff-max", "Maximum retry Backoff delay",
          "Maximum backoff delay in seconds", 0.0, G_MAXDOUBLE,
          DEFAULT_RETRY_BACKOFF_MAX, rw));
#endif
}

/* The flow's preferences in the BWSS domain (ranges: srclimits.h):
 * priority, weight, min-rate, rate-headroom, bitrate; settable while
 * playing. */
void
src_props_install_bwss (GObjectClass *gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  g_object_class_install_property (gobject_class, PROP_PRIORITY,
      g_param_spec_int ("priority", "BWSS priority",
          "Priority of this flow in the BWSS domain: minimum rates are served from the highest priority down",
          SRC_PRIORITY_MIN, SRC_PRIORITY_MAX, DEFAULT_PRIORITY, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_WEIGHT,
      g_param_spec_double ("weight", "BWSS weight",
          "Share of the link left after the minimum rates, relative to the other flows' weights",
          SRC_WEIGHT_MIN, SRC_WEIGHT_MAX, DEFAULT_WEIGHT, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_MIN_RATE,
      g_param_spec_uint64 ("min-rate", "BWSS minimum rate",
          "Minimum rate in bit/s (0 = automatic: from the variant played, or stream bitrate x rate-headroom)",
          0, SRC_RATE_MAX, DEFAULT_MIN_RATE, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_RATE_HEADROOM,
      g_param_spec_double ("rate-headroom", "Rate headroom",
          "Automatic minimum rate of a progressive stream = its bitrate x this (the paper used 520k for a 450k stream)",
          SRC_HEADROOM_MIN, SRC_HEADROOM_MAX, DEFAULT_RATE_HEADROOM, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_BITRATE,
      g_param_spec_uint64 ("bitrate", "Bitrate hint",
          "Stream bitrate in bit/s if known (0 = learn it: adaptive variant, bitrate query, Content-Length / duration, consumption)",
          0, SRC_RATE_MAX, DEFAULT_BITRATE, rw | GST_PARAM_MUTABLE_PLAYING));
}

GType
gst_bwss_striping_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    { STRIPING_AUTO, "Over n connections while the link is shared with traffic bwss does not control", "auto" },
    { STRIPING_NEVER, "One connection", "never" },
    { STRIPING_ALWAYS, "Over n connections whenever the server takes ranges", "always" },
    { 0, NULL, NULL },
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstBwssStriping", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* Reading over n connections (stripes.h): connections, striping; settable
 * while playing (they apply from the next buffer). */
void
src_props_install_striping (GObjectClass *gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
  g_object_class_install_property (gobject_class, PROP_CONNECTIONS,
      g_param_spec_uint ("connections", "Connections",
          "The most connections the resource is read over while the link is shared with traffic bwss "
          "does not control, each a byte range (1 = one connection; the default 3 is what the model "
          "needed to keep a video at its minimum beside a neighbour's downloads: docs/household.md)",
          1, STRIPE_CONNECTIONS_MAX, DEFAULT_CONNECTIONS, rw));
  g_object_class_install_property (gobject_class, PROP_STRIPING,
      g_param_spec_enum ("striping", "Striping",
          "When to read over several connections: auto (while bwss's loop shares the link with traffic "
          "it does not control), never, always (whenever the server takes ranges and the size is known)",
          gst_bwss_striping_get_type (), DEFAULT_STRIPING, rw));
}

/* The statistics: stats-interval, stats (read-only). */
void
src_props_install_stats (GObjectClass *gobject_class)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  g_object_class_install_property (gobject_class, PROP_STATS_INTERVAL,
      g_param_spec_uint64 ("stats-interval", "Stats interval",
          "Interval between bwss-stats element messages, ns (0 = only at EOS)",
          0, G_MAXUINT64, DEFAULT_STATS_INTERVAL, rw));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "bytes, mean-rate, current-rate, target-rate, min-rate, bitrate, sigma, rtt, window, "
          "connections, late-0.5 … late-8, required-prebuffer (see docs/element.md)",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

/* ---- set and get ----------------------------------------------------------------- */

gboolean
src_props_set_location (GstBwssHttpSrc *src, const gchar *uri, GError **error)
{
  gchar *location = NULL;
  gboolean valid = uri == NULL || gst_uri_is_valid (uri);
  /* icy:// and icyx:// are HTTP with another name */
  if (uri && g_str_has_prefix (uri, "icy://"))
    location = g_strdup_printf ("http://%s", uri + 6);
  else if (uri && g_str_has_prefix (uri, "icyx://"))
    location = g_strdup_printf ("http://%s", uri + 7);
  else if (valid)
    location = g_strdup (uri);
  GST_OBJECT_LOCK (src);
  if (GST_STATE (src) >= GST_STATE_PAUSED) {
    GST_OBJECT_UNLOCK (src);
    g_free (location);
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_STATE,
                 "Changing the location on a running source is not supported");
    return FALSE;
  }
  gchar *old_location = src->location, *old_redirection = src->redirection_uri;
  src->location = location;
  src->redirection_uri = NULL;
  GST_OBJECT_UNLOCK (src);
  g_free (old_location);
  g_free (old_redirection);
  if (!valid) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI, "Invalid URI '%s'", uri);
    return FALSE;
  }
  return TRUE;
}

/* A copy of @from whose strings, lists and objects are its own. */
static void
copy_http_config (const HttpConfig *from, HttpConfig *to)
{
  *to = *from;
  to->user_agent = g_strdup (from->user_agent);
  to->proxy = g_strdup (from->proxy);
  to->user_id = g_strdup (from->user_id);
  to->user_pw = g_strdup (from->user_pw);
  to->proxy_id = g_strdup (from->proxy_id);
  to->proxy_pw = g_strdup (from->proxy_pw);
  to->cookies = g_strdupv (from->cookies);
  to->extra_headers = from->extra_headers ? gst_structure_copy (from->extra_headers) : NULL;
  to->ssl_ca_file = g_strdup (from->ssl_ca_file);
  to->tls_database = from->tls_database ? g_object_ref (from->tls_database) : NULL;
  to->tls_interaction = from->tls_interaction ? g_object_ref (from->tls_interaction) : NULL;
}

void
src_props_take_request (GstBwssHttpSrc *src, SrcRequest *req)
{
  src_request_clear (req);
  GST_OBJECT_LOCK (src);
  copy_http_config (&src->http, &req->http);
  req->location = g_strdup (src->location);
  req->method = g_strdup (src->method);
  req->retries = src->retries;
  req->retry_backoff_factor = src->retry_backoff_factor;
  req->retry_backoff_max = src->retry_backoff_max;
  GST_OBJECT_UNLOCK (src);
}

void
src_request_clear (SrcRequest *req)
{
  http_config_clear (&req->http);
  g_clear_pointer (&req->location, g_free);
  g_clear_pointer (&req->method, g_free);
}

/* Replaces a string property (the old one is freed outside the lock). */
static void
replace_string (GstBwssHttpSrc *src, gchar **field, const GValue *value)
{
  gchar *s = g_value_dup_string (value);
  GST_OBJECT_LOCK (src);
  gchar *old = *field;
  *field = s;
  GST_OBJECT_UNLOCK (src);
  g_free (old);
}

/* The bitrate learned, settled with the BWSS properties of now, goes to
 * the flow and the statistics.  prefs_lock held: whoever calls it last
 * (a setter or the streaming thread) applies the last values. */
static void
apply_prefs_locked (GstBwssHttpSrc *src)
{
  BitrateChoice c;
  bitrate_settle (&src->learned, src->bitrate, src->min_rate, src->rate_headroom, &c);
  PlayerInput in = { .min_rate = c.min_rate, .priority = src->priority, .weight = src->weight,
                     .buffer = src->buffer, .fetching = src->fetching };
  BwssPrefs p;
  player_prefs (&in, &p);
  src_flow_set_prefs (&src->flow, &p);
  src_stats_set_stream (&src->stats, c.bitrate, bitrate_source_name (c.source), c.min_rate);
}

void
src_props_apply_learned (GstBwssHttpSrc *src, const BitrateChoice *learned)
{
  g_mutex_lock (&src->prefs_lock);
  src->learned = *learned;
  apply_prefs_locked (src);
  g_mutex_unlock (&src->prefs_lock);
}

void
src_props_set_player (GstBwssHttpSrc *src, gboolean fetching, PlayerBuffer buffer)
{
  g_mutex_lock (&src->prefs_lock);
  if (src->fetching != fetching || src->buffer != buffer) {
    src->fetching = fetching;
    src->buffer = buffer;
    apply_prefs_locked (src);
  }
  g_mutex_unlock (&src->prefs_lock);
}

guint64
src_props_bitrate_hint (GstBwssHttpSrc *src)
{
  g_mutex_lock (&src->prefs_lock);
  guint64 v = src->bitrate;
  g_mutex_unlock (&src->prefs_lock);
  return v;
}

guint64
src_props_stats_interval (GstBwssHttpSrc *src)
{
  GST_OBJECT_LOCK (src);
  guint64 v = src->stats_interval;
  GST_OBJECT_UNLOCK (src);
  return v;
}

void
src_props_striping (GstBwssHttpSrc *src, StripingPolicy *policy, guint *connections)
{
  GST_OBJECT_LOCK (src);
  *policy = src->striping;
  *connections = src->connections;
  GST_OBJECT_UNLOCK (src);
}

/* Sets one BWSS preference (@prop_id's field) and applies them at once. */
static void
set_pref (GstBwssHttpSrc *src, guint prop_id, const GValue *value)
{
  g_mutex_lock (&src->prefs_lock);
  switch (prop_id) {
    case PROP_PRIORITY: src->priority = g_value_get_int (value); break;
    case PROP_WEIGHT: src->weight = g_value_get_double (value); break;
    case PROP_MIN_RATE: src->min_rate = g_value_get_uint64 (value); break;
    case PROP_RATE_HEADROOM: src->rate_headroom = g_value_get_double (value); break;
    case PROP_BITRATE: src->bitrate = g_value_get_uint64 (value); break;
    default: g_assert_not_reached ();
  }
  apply_prefs_locked (src);
  g_mutex_unlock (&src->prefs_lock);
}

/* Reads one BWSS preference. */
static void
get_pref (GstBwssHttpSrc *src, guint prop_id, GValue *value)
{
  g_mutex_lock (&src->prefs_lock);
  switch (prop_id) {
    case PROP_PRIORITY: g_value_set_int (value, src->priority); break;
    case PROP_WEIGHT: g_value_set_double (value, src->weight); break;
    case PROP_MIN_RATE: g_value_set_uint64 (value, src->min_rate); break;
    case PROP_RATE_HEADROOM: g_value_set_double (value, src->rate_headroom); break;
    case PROP_BITRATE: g_value_set_uint64 (value, src->bitrate); break;
    default: g_assert_not_reached ();
  }
  g_mutex_unlock (&src->prefs_lock);
}

/* src_props_set_property's steps.  Each returns FALSE for a property that
 * is not its own. */

/* The properties that own what they hold (strings, cookies, extra headers,
 * TLS objects): the new value is copied before the object lock and the old
 * one freed after it. */
static gboolean
set_owned (GstBwssHttpSrc *src, guint prop_id, const GValue *value)
{
  HttpConfig *h = &src->http;
  switch (prop_id) {
    case PROP_USER_AGENT: replace_string (src, &h->user_agent, value); return TRUE;
    case PROP_PROXY: replace_string (src, &h->proxy, value); return TRUE;
    case PROP_USER_ID: replace_string (src, &h->user_id, value); return TRUE;
    case PROP_USER_PW: replace_string (src, &h->user_pw, value); return TRUE;
    case PROP_PROXY_ID: replace_string (src, &h->proxy_id, value); return TRUE;
    case PROP_PROXY_PW: replace_string (src, &h->proxy_pw, value); return TRUE;
    case PROP_SSL_CA_FILE: replace_string (src, &h->ssl_ca_file, value); return TRUE;
    case PROP_METHOD: replace_string (src, &src->method, value); return TRUE;
    case PROP_COOKIES: {
      gchar **v = g_strdupv (g_value_get_boxed (value));
      GST_OBJECT_LOCK (src);
      gchar **old = h->cookies;
      h->cookies = v;
      GST_OBJECT_UNLOCK (src);
      g_strfreev (old);
      return TRUE;
    }
    case PROP_EXTRA_HEADERS: {
      const GstStructure *st = gst_value_get_structure (value);
      GstStructure *v = st ? gst_structure_copy (st) : NULL;
      GST_OBJECT_LOCK (src);
      GstStructure *old = h->extra_headers;
      h->extra_headers = v;
      GST_OBJECT_UNLOCK (src);
      if (old)
        gst_structure_free (old);
      return TRUE;
    }
    case PROP_TLS_DATABASE:
    case PROP_TLS_INTERACTION: {
      gpointer v = g_value_dup_object (value);
      gpointer *field = prop_id == PROP_TLS_DATABASE ? (gpointer *) &h->tls_database
                                                     : (gpointer *) &h->tls_interaction;
      GST_OBJECT_LOCK (src);
      gpointer old = *field;
      *field = v;
      GST_OBJECT_UNLOCK (src);
      if (old)
        g_object_unref (old);
      return TRUE;
    }
    default:
      return FALSE;
  }
}

/* The scalars: under the object lock. */
static gboolean
set_scalar (GstBwssHttpSrc *src, guint prop_id, const GValue *value)
{
  HttpConfig *h = &src->http;
  GST_OBJECT_LOCK (src);
  switch (prop_id) {
    case PROP_AUTOMATIC_REDIRECT: h->automatic_redirect = g_value_get_boolean (value); break;
    case PROP_TIMEOUT: h->timeout = g_value_get_uint (value); break;
    case PROP_IRADIO_MODE: h->iradio_mode = g_value_get_boolean (value); break;
    case PROP_HTTP_LOG_LEVEL: h->log_level = g_value_get_enum (value); break;
    case PROP_COMPRESS: h->compress = g_value_get_boolean (value); break;
    case PROP_KEEP_ALIVE: h->keep_alive = g_value_get_boolean (value); break;
    case PROP_SSL_STRICT: h->ssl_strict = g_value_get_boolean (value); break;
    case PROP_SSL_USE_SYSTEM_CA_FILE: h->ssl_use_system_ca_file = g_value_get_boolean (value); break;
    case PROP_RETRIES: src->retries = g_value_get_int (value); break;
    case PROP_TYPEFIND: src->typefind = g_value_get_boolean (value); break;
    case PROP_RETRY_BACKOFF_FACTOR: src->retry_backoff_factor = g_value_get_double (value); break;
    case PROP_RETRY_BACKOFF_MAX: src->retry_backoff_max = g_value_get_double (value); break;
    case PROP_STATS_INTERVAL: src->stats_interval = g_value_get_uint64 (value); break;
    case PROP_CONNECTIONS: src->connections = g_value_get_uint (value); break;
    case PROP_STRIPING: src->striping = g_value_get_enum (value); break;
    default:
      GST_OBJECT_UNLOCK (src);
      return FALSE;
  }
  GST_OBJECT_UNLOCK (src);
  return TRUE;
}

/* is-live: under the object lock, then told to the base class. */
static void
set_is_live (GstBwssHttpSrc *src, const GValue *value)
{
  gboolean live = g_value_get_boolean (value);
  GST_OBJECT_LOCK (src);
  src->is_live = live;
  GST_OBJECT_UNLOCK (src);
  gst_base_src_set_live (GST_BASE_SRC (src), live);
}

void
src_props_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (object);
  switch (prop_id) {
    case PROP_LOCATION: {
      g_autoptr (GError) err = NULL;
      if (!src_props_set_location (src, g_value_get_string (value), &err))
        GST_WARNING_OBJECT (src, "%s", err->message);
      return;
    }
    case PROP_IS_LIVE:
      set_is_live (src, value);
      return;
    case PROP_PRIORITY:
    case PROP_WEIGHT:
    case PROP_MIN_RATE:
    case PROP_RATE_HEADROOM:
    case PROP_BITRATE:
      set_pref (src, prop_id, value);
      return;
    default:
      break;
  }
  if (!set_owned (src, prop_id, value) && !set_scalar (src, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

void
src_props_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstBwssHttpSrc *src = GST_BWSS_HTTP_SRC (object);
  const HttpConfig *h = &src->http;
  switch (prop_id) {
    case PROP_PRIORITY:
    case PROP_WEIGHT:
    case PROP_MIN_RATE:
    case PROP_RATE_HEADROOM:
    case PROP_BITRATE:
      get_pref (src, prop_id, value);
      return;
    case PROP_STATS:
      /* any thread: a copy, built under the statistics' and the flow's locks */
      g_value_take_boxed (value, src_stats_get (&src->stats, &src->flow));
      return;
    default:
      break;
  }
  /* the rest: copied under the object lock (g_value_set_* only copies) */
  GST_OBJECT_LOCK (src);
  switch (prop_id) {
    case PROP_LOCATION: g_value_set_string (value, src->location); break;
    case PROP_USER_AGENT: g_value_set_string (value, h->user_agent); break;
    case PROP_AUTOMATIC_REDIRECT: g_value_set_boolean (value, h->automatic_redirect); break;
    case PROP_PROXY: g_value_set_string (value, h->proxy); break;
    case PROP_USER_ID: g_value_set_string (value, h->user_id); break;
    case PROP_USER_PW: g_value_set_string (value, h->user_pw); break;
    case PROP_PROXY_ID: g_value_set_string (value, h->proxy_id); break;
    case PROP_PROXY_PW: g_value_set_string (value, h->proxy_pw); break;
    case PROP_COOKIES: g_value_set_boxed (value, h->cookies); break;
    case PROP_IS_LIVE: g_value_set_boolean (value, src->is_live); break;
    case PROP_TIMEOUT: g_value_set_uint (value, h->timeout); break;
    case PROP_EXTRA_HEADERS: gst_value_set_structure (value, h->extra_headers); break;
    case PROP_IRADIO_MODE: g_value_set_boolean (value, h->iradio_mode); break;
    case PROP_HTTP_LOG_LEVEL: g_value_set_enum (value, h->log_level); break;
    case PROP_COMPRESS: g_value_set_boolean (value, h->compress); break;
    case PROP_KEEP_ALIVE: g_value_set_boolean (value, h->keep_alive); break;
    case PROP_SSL_STRICT: g_value_set_boolean (value, h->ssl_strict); break;
    case PROP_SSL_CA_FILE: g_value_set_string (value, h->ssl_ca_file); break;
    case PROP_SSL_USE_SYSTEM_CA_FILE: g_value_set_boolean (value, h->ssl_use_system_ca_file); break;
    case PROP_TLS_DATABASE: g_value_set_object (value, h->tls_database); break;
    case PROP_TLS_INTERACTION: g_value_set_object (value, h->tls_interaction); break;
    case PROP_RETRIES: g_value_set_int (value, src->retries); break;
    case PROP_METHOD: g_value_set_string (value, src->method); break;
    case PROP_TYPEFIND: g_value_set_boolean (value, src->typefind); break;
    case PROP_RETRY_BACKOFF_FACTOR: g_value_set_double (value, src->retry_backoff_factor); break;
    case PROP_RETRY_BACKOFF_MAX: g_value_set_double (value, src->retry_backoff_max); break;
    case PROP_STATS_INTERVAL: g_value_set_uint64 (value, src->stats_interval); break;
    case PROP_CONNECTIONS: g_value_set_uint (value, src->connections); break;
    case PROP_STRIPING: g_value_set_enum (value, src->striping); break;
    default:
      GST_OBJECT_UNLOCK (src);
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
  }
  GST_OBJECT_UNLOCK (src);
}
