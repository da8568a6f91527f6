/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* demux2flows.c — adaptivedemux2's connections in the domain (demux2flows.h). */
#include <string.h>
#include <sys/stat.h>
#include <gst/gst.h>
#include <bwss/domain.h>
#include "abrrule.h"
#include "adaptivewatch.h"
#include "demux2flows.h"
#include "ownsockets.h"

GST_DEBUG_CATEGORY_EXTERN (bwss_watch_debug);
#define GST_CAT_DEFAULT bwss_watch_debug

/* A name's addresses are looked up again after this long, µs. */
#define RESOLVE_TTL_US    (60 * G_USEC_PER_SEC)

typedef struct {
  BwssFlow *flow;           /* NULL: registered by someone else in this process */
  guint64   inode;
  guint64   last_bytes;
  double    min_rate;
  double    weight;
  gboolean  seen;           /* still there at this look */
} Tracked;

typedef struct {
  GPtrArray *addrs;         /* GInetSocketAddress* */
  gint64     at;
} Resolved;

static BwssDomain *domain;
static gboolean    no_domain;
static GHashTable *tracked;    /* fd → Tracked* */
static GHashTable *resolved;   /* "host:port" → Resolved* */
static GHashTable *previous;   /* demuxer → variant chosen last (bit/s) */

static void
resolved_free (Resolved *r)
{
  g_ptr_array_free (r->addrs, TRUE);
  g_free (r);
}

static void
tracked_free (Tracked *t)
{
  if (t->flow)
    bwss_flow_unregister (t->flow);
  g_free (t);
}

/* Appends the socket addresses of @server ("host:port") to @peers. */
static void
add_peers (const char *server, GPtrArray *peers)
{
  gint64 now = g_get_monotonic_time ();
  Resolved *r = g_hash_table_lookup (resolved, server);
  if (r == NULL || now - r->at > RESOLVE_TTL_US) {
    const char *colon = strrchr (server, ':');
    if (colon == NULL)
      return;
    g_autofree char *host = g_strndup (server, (gsize) (colon - server));
    guint16 port = (guint16) g_ascii_strtoull (colon + 1, NULL, 10);
    r = g_new0 (Resolved, 1);
    r->addrs = g_ptr_array_new_with_free_func (g_object_unref);
    r->at = now;
    GResolver *res = g_resolver_get_default ();
    GList *list = g_resolver_lookup_by_name (res, host, NULL, NULL);
    for (GList *l = list; l; l = l->next)
      g_ptr_array_add (r->addrs, g_inet_socket_address_new (l->data, port));
    g_resolver_free_addresses (list);
    g_object_unref (res);
    g_hash_table_replace (resolved, g_strdup (server), r);
  }
  for (guint i = 0; i < r->addrs->len; i++)
    g_ptr_array_add (peers, g_object_ref (r->addrs->pdata[i]));
}

static gboolean
ensure_domain (void)
{
  if (domain)
    return TRUE;
  if (no_domain)
    return FALSE;
  int err = bwss_domain_open (NULL, BWSS_DOMAIN_THREAD, &domain);
  if (err) {
    GST_INFO ("no BWSS domain (%s): adaptivedemux2 connections are not shared", bwss_strerror (err));
    no_domain = TRUE;
    domain = NULL;
    return FALSE;
  }
  return TRUE;
}

/* The σ the ABR rule may use, bit/s, or -1. */
static double
domain_sigma (void)
{
  BwssDomainStats ds;
  if (domain && bwss_domain_get_stats (domain, &ds) == 0)
    return abr_usable_sigma (&ds);
  return -1.0;
}

/* Registers, updates and unregisters flows for @socks; the busiest gets
 * what player_prefs() makes of @min_rate and @buffer. */
static void
update_flows (GArray *socks, double min_rate, PlayerBuffer buffer)
{
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, tracked);
  while (g_hash_table_iter_next (&it, &key, &value))
    ((Tracked *) value)->seen = FALSE;
  int busiest = -1;
  guint64 most = 0;
  guint32 least_idle = G_MAXUINT32;
  gboolean fetching = FALSE;
  for (guint i = 0; i < socks->len; i++) {
    OwnSocket *s = &g_array_index (socks, OwnSocket, i);
    Tracked *t = g_hash_table_lookup (tracked, GINT_TO_POINTER (s->fd));
    if (t && t->inode != s->inode) {
      g_hash_table_remove (tracked, GINT_TO_POINTER (s->fd));   /* the fd was reused */
      t = NULL;
    }
    if (t == NULL) {
      t = g_new0 (Tracked, 1);
      t->inode = s->inode;
      t->last_bytes = s->bytes_received;
      t->weight = VIDEO_FLOW_WEIGHT;
      /* not fetching yet: the video's preferences with no minimum */
      PlayerInput idle = { .priority = VIDEO_FLOW_PRIORITY, .weight = VIDEO_FLOW_WEIGHT };
      BwssPrefs p;
      player_prefs (&idle, &p);
      int err = bwss_flow_register_as (domain, s->fd, &p, "bwsshttpsrc demux2", 0, &t->flow);
      if (err) {
        t->flow = NULL;
        if (err != BWSS_EEXIST)
          GST_WARNING ("cannot register fd %d: %s", s->fd, bwss_strerror (err));
      } else {
        GST_INFO ("adaptivedemux2 connection fd %d registered", s->fd);
      }
      g_hash_table_insert (tracked, GINT_TO_POINTER (s->fd), t);
    }
    t->seen = TRUE;
    guint64 grew = s->bytes_received - MIN (s->bytes_received, t->last_bytes);
    t->last_bytes = s->bytes_received;
    if (t->flow && (grew > most || (most == 0 && grew == 0 && s->idle_ms < least_idle))) {
      most = grew;
      least_idle = s->idle_ms;
      busiest = s->fd;
      double hold = player_fetch_hold_ms (s->rtt_us, s->mss, min_rate);
      fetching = grew > 0 || s->idle_ms < hold || s->sent_idle_ms < hold;
    }
  }
  g_hash_table_iter_init (&it, tracked);
  while (g_hash_table_iter_next (&it, &key, &value)) {
    Tracked *t = value;
    if (!t->seen) {
      GST_INFO ("adaptivedemux2 connection fd %d gone", GPOINTER_TO_INT (key));
      g_hash_table_iter_remove (&it);
      continue;
    }
    PlayerInput in = { .min_rate = min_rate, .priority = VIDEO_FLOW_PRIORITY,
                       .weight = VIDEO_FLOW_WEIGHT, .buffer = buffer,
                       .fetching = GPOINTER_TO_INT (key) == busiest && fetching };
    BwssPrefs p;
    player_prefs (&in, &p);
    if (t->flow && (p.min_rate_bps != t->min_rate || p.weight != t->weight)
        && bwss_flow_set_prefs (t->flow, &p) == 0) {
      t->min_rate = p.min_rate_bps;
      t->weight = p.weight;
      GST_DEBUG ("fd %d: minimum %.0f bit/s, weight %g", GPOINTER_TO_INT (key), p.min_rate_bps,
                 p.weight);
    }
  }
}

static gboolean
tick (gpointer data)
{
  GPtrArray *demuxers = adaptive_watch_list_v2 ();
  GPtrArray *peers = g_ptr_array_new_with_free_func (g_object_unref);
  gboolean any = FALSE;
  double min_rate = 0.0;
  PlayerBuffer buffer = PLAYER_BUFFER_UNKNOWN;
  gboolean all_full = TRUE;
  double sigma = domain_sigma ();
  for (guint i = 0; i < demuxers->len; i++) {
    GstElement *d = demuxers->pdata[i];
    AdaptiveState st;
    if (!adaptive_watch_get (d, &st))
      continue;
    if (st.active) {
      any = TRUE;
      for (gchar **s = st.servers; s && *s; s++)
        add_peers (*s, peers);
      AbrInput in = { .ladder = (const guint64 *) st.ladder->data, .n = st.ladder->len,
                      .current = st.current, .usage = st.usage, .sigma = sigma,
                      .previous = GPOINTER_TO_SIZE (g_hash_table_lookup (previous, d)) };
      guint64 chosen = 0;
      min_rate = MAX (min_rate, abr_min_rate (&in, &chosen));
      g_hash_table_replace (previous, d, GSIZE_TO_POINTER ((gsize) chosen));
      /* several demuxers share the busiest connection's minimum: full
       * only when every one is */
      all_full &= player_buffer_of_level (st.level_ns, st.target_ns) == PLAYER_BUFFER_FULL;
    }
    adaptive_state_clear (&st);
  }
  if (!any) {
    g_hash_table_remove_all (tracked);
    g_hash_table_remove_all (previous);
  } else if (ensure_domain ()) {
    GArray *socks = own_sockets_to (peers);
    buffer = all_full ? PLAYER_BUFFER_FULL : PLAYER_BUFFER_LOW;
    update_flows (socks, min_rate, buffer);
    g_array_free (socks, TRUE);
  }
  g_ptr_array_free (peers, TRUE);
  g_ptr_array_free (demuxers, TRUE);
  return G_SOURCE_CONTINUE;
}

static gpointer
thread_main (gpointer data)
{
  GMainContext *ctx = data;
  g_main_context_push_thread_default (ctx);
  GSource *t = g_timeout_source_new (DEMUX2_TICK_MS);
  g_source_set_callback (t, tick, NULL, NULL);
  g_source_attach (t, ctx);
  g_source_unref (t);
  GMainLoop *loop = g_main_loop_new (ctx, FALSE);
  g_main_loop_run (loop);                 /* for the life of the process */
  return NULL;
}

void
demux2_flows_start (void)
{
  static gsize started;
  if (g_once_init_enter (&started)) {
    tracked = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) tracked_free);
    resolved = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) resolved_free);
    previous = g_hash_table_new (NULL, NULL);
    g_thread_unref (g_thread_new ("bwss-demux2", thread_main, g_main_context_new ()));
    g_once_init_leave (&started, 1);
  }
}
