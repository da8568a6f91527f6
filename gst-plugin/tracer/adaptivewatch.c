/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adaptivewatch.c — per-demuxer state (see adaptivewatch.h).  One table,
 * one lock; an entry goes when its demuxer is finalized (weak reference).
 */
#include <string.h>
#include "adaptivewatch.h"
#include "manifest.h"

GST_DEBUG_CATEGORY_EXTERN (bwss_watch_debug);
#define GST_CAT_DEFAULT bwss_watch_debug

/* A manifest is text; one larger than this is not read for a ladder. */
#define MANIFEST_MAX_BYTES (4 * 1024 * 1024)

typedef struct {
  GstElement *demux;         /* not a reference: the entry dies with it */
  GWeakRef    ref;           /* the same, for other threads */
  gboolean    v2;
  GByteArray *manifest;      /* being received, NULL once parsed */
  GArray     *ladder;
  guint64     first_listed;
  guint64     current;
  gchar      *uri;           /* the manifest's URI (redirected if it was) */
  GPtrArray  *named;         /* URIs the manifest names, as written */
} Entry;

static GMutex lock;
static GHashTable *entries;   /* GstElement* → Entry* */

static void
entry_free (Entry *e)
{
  g_weak_ref_clear (&e->ref);
  if (e->manifest)
    g_byte_array_free (e->manifest, TRUE);
  g_array_free (e->ladder, TRUE);
  g_free (e->uri);
  g_ptr_array_free (e->named, TRUE);
  g_free (e);
}

static void
on_demux_gone (gpointer data, GObject *where_the_object_was)
{
  g_mutex_lock (&lock);
  if (entries)
    g_hash_table_remove (entries, where_the_object_was);
  g_mutex_unlock (&lock);
}

gboolean
adaptive_is_demuxer (GstElement *e, gboolean *v2)
{
  for (GType t = G_OBJECT_TYPE (e); t; t = g_type_parent (t)) {
    const char *name = g_type_name (t);
    if (strcmp (name, "GstAdaptiveDemux") == 0 || strcmp (name, "GstAdaptiveDemux2") == 0) {
      if (v2)
        *v2 = name[16] == '2';
      return TRUE;
    }
    if (t == GST_TYPE_BIN || t == GST_TYPE_ELEMENT)
      break;
  }
  return FALSE;
}

GstElement *
adaptive_demuxer_of_source (GstElement *src)
{
  GstObject *bin = gst_object_get_parent (GST_OBJECT (src));
  if (bin == NULL)
    return NULL;
  GstObject *demux = NULL;
  g_autofree char *name = gst_object_get_name (bin);
  gboolean v2 = FALSE;
  if (name && g_str_has_prefix (name, "srcbin-")) {
    demux = gst_object_get_parent (bin);
    if (demux && !(GST_IS_ELEMENT (demux) && adaptive_is_demuxer (GST_ELEMENT (demux), &v2) && !v2))
      gst_clear_object (&demux);
  }
  gst_object_unref (bin);
  return demux ? GST_ELEMENT (demux) : NULL;
}

/* Lock held. */
static Entry *
lookup (GstElement *demux)
{
  return entries ? g_hash_table_lookup (entries, demux) : NULL;
}

/* The manifest is complete: its ladder and named URIs.  Lock held. */
static void
parse_manifest (Entry *e)
{
  Manifest *m = manifest_parse ((const char *) e->manifest->data, e->manifest->len);
  g_array_set_size (e->ladder, 0);
  g_array_append_vals (e->ladder, m->ladder->data, m->ladder->len);
  e->first_listed = m->first_listed;
  g_ptr_array_set_size (e->named, 0);
  for (guint i = 0; i < m->uris->len; i++)
    g_ptr_array_add (e->named, g_strdup (m->uris->pdata[i]));
  /* both HLS demuxers start on the first variant listed (1.22,
   * process_manifest) unless connection-speed (kbit/s) says otherwise */
  guint speed = 0;
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (e->demux), "connection-speed"))
    g_object_get (e->demux, "connection-speed", &speed, NULL);
  e->current = m->kind == MANIFEST_HLS ? m->first_listed : 0;
  if (m->kind == MANIFEST_HLS && speed > 0 && e->ladder->len) {
    e->current = g_array_index (e->ladder, guint64, 0);
    for (guint i = 0; i < e->ladder->len; i++)
      if (g_array_index (e->ladder, guint64, i) <= (guint64) speed * 1000)
        e->current = g_array_index (e->ladder, guint64, i);
  }
  GST_INFO_OBJECT (e->demux, "manifest: %u variants, starting on %" G_GUINT64_FORMAT " bit/s",
                   e->ladder->len, e->current);
  manifest_free (m);
  g_byte_array_free (e->manifest, TRUE);
  e->manifest = NULL;
}

/* The demuxer's sink pad: the manifest's bytes, the upstream source's
 * http-headers (its URI), and EOS (the manifest is complete). */
static GstPadProbeReturn
on_sink_data (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  GstElement *demux = data;
  g_mutex_lock (&lock);
  Entry *e = lookup (demux);
  if (e == NULL) {
    g_mutex_unlock (&lock);
    return GST_PAD_PROBE_REMOVE;
  }
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
    if (e->manifest == NULL)
      e->manifest = g_byte_array_new ();
    if (e->manifest->len + gst_buffer_get_size (buf) <= MANIFEST_MAX_BYTES) {
      GstMapInfo map;
      if (gst_buffer_map (buf, &map, GST_MAP_READ)) {
        g_byte_array_append (e->manifest, map.data, (guint) map.size);
        gst_buffer_unmap (buf, &map);
      }
    }
  } else if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
    GstEvent *ev = GST_PAD_PROBE_INFO_EVENT (info);
    const GstStructure *s = gst_event_get_structure (ev);
    if (GST_EVENT_TYPE (ev) == GST_EVENT_EOS && e->manifest) {
      parse_manifest (e);
    } else if (GST_EVENT_TYPE (ev) == GST_EVENT_FLUSH_STOP || GST_EVENT_TYPE (ev) == GST_EVENT_STREAM_START) {
      if (e->manifest)
        g_byte_array_set_size (e->manifest, 0);
    } else if (s && gst_structure_has_name (s, "http-headers")) {
      const char *uri = gst_structure_get_string (s, "redirection-uri");
      if (uri == NULL)
        uri = gst_structure_get_string (s, "uri");
      if (uri) {
        g_free (e->uri);
        e->uri = g_strdup (uri);
      }
    }
  }
  g_mutex_unlock (&lock);
  return GST_PAD_PROBE_OK;
}

void
adaptive_watch_add (GstElement *demux)
{
  gboolean v2 = FALSE;
  if (!adaptive_is_demuxer (demux, &v2))
    return;
  g_mutex_lock (&lock);
  if (entries == NULL)
    entries = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) entry_free);
  if (lookup (demux)) {
    g_mutex_unlock (&lock);
    return;
  }
  Entry *e = g_new0 (Entry, 1);
  e->demux = demux;
  g_weak_ref_init (&e->ref, demux);
  e->v2 = v2;
  e->ladder = g_array_new (FALSE, FALSE, sizeof (guint64));
  e->named = g_ptr_array_new_with_free_func (g_free);
  g_hash_table_insert (entries, demux, e);
  g_mutex_unlock (&lock);
  g_object_weak_ref (G_OBJECT (demux), on_demux_gone, NULL);
  GstPad *sink = gst_element_get_static_pad (demux, "sink");
  if (sink) {
    gst_pad_add_probe (sink, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                       on_sink_data, demux, NULL);
    gst_object_unref (sink);
  }
  GST_DEBUG_OBJECT (demux, "watching (%s)", v2 ? "adaptivedemux2" : "legacy adaptivedemux");
}

void
adaptive_watch_message (GstObject *src, GstMessage *msg)
{
  if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_ELEMENT || !GST_IS_ELEMENT (src))
    return;
  const GstStructure *s = gst_message_get_structure (msg);
  gint bitrate = 0;
  if (s == NULL || !gst_structure_has_name (s, "adaptive-streaming-statistics")
      || !gst_structure_get_int (s, "bitrate", &bitrate) || bitrate <= 0)
    return;
  g_mutex_lock (&lock);
  Entry *e = lookup (GST_ELEMENT (src));
  if (e) {
    e->current = (guint64) bitrate;
    GST_INFO_OBJECT (src, "switched to the %d bit/s variant", bitrate);
  }
  g_mutex_unlock (&lock);
}

/* Returns the demuxer's bandwidth-usage factor from its own property. */
static double
usage_factor (GstElement *demux)
{
  GObjectClass *klass = G_OBJECT_GET_CLASS (demux);
  const char *names[] = { "bandwidth-target-ratio", "bitrate-limit", "bandwidth-usage" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++) {
    GParamSpec *p = g_object_class_find_property (klass, names[i]);
    if (p && p->value_type == G_TYPE_FLOAT) {
      gfloat f = 0;
      g_object_get (demux, names[i], &f, NULL);
      if (f > 0 && f <= 1)
        return f;
    }
  }
  return 0.8;
}

/* A guint64 property of @e, or @fallback if it has none. */
static guint64
u64_property (GstElement *e, const char *name, guint64 fallback)
{
  GParamSpec *p = g_object_class_find_property (G_OBJECT_GET_CLASS (e), name);
  if (p == NULL || p->value_type != G_TYPE_UINT64)
    return fallback;
  guint64 v = 0;
  g_object_get (e, name, &v, NULL);
  return v;
}

/* The buffered level and target of an adaptivedemux2 demuxer. */
static void
buffer_of (GstElement *demux, AdaptiveState *out)
{
  out->level_ns = -1;
  out->target_ns = 0;
  if (!out->v2)
    return;
  guint64 video = u64_property (demux, "current-level-time-video", G_MAXUINT64);
  guint64 audio = u64_property (demux, "current-level-time-audio", G_MAXUINT64);
  if (video != G_MAXUINT64 && video > 0)
    out->level_ns = (gint64) MIN (video, (guint64) G_MAXINT64);
  else if (audio != G_MAXUINT64)
    out->level_ns = (gint64) MIN (audio, (guint64) G_MAXINT64);
  out->target_ns = u64_property (demux, "high-watermark-time", 0);
  if (out->target_ns == 0)
    out->target_ns = u64_property (demux, "max-buffering-time", 0);
}

/* "host:port" of @uri, or NULL. */
static char *
server_of (const char *uri)
{
  g_autoptr (GUri) u = g_uri_parse (uri, G_URI_FLAGS_NONE, NULL);
  if (u == NULL || g_uri_get_host (u) == NULL)
    return NULL;
  const char *scheme = g_uri_get_scheme (u);
  gint port = g_uri_get_port (u);
  if (port < 0)
    port = g_ascii_strcasecmp (scheme, "https") == 0 ? 443 : 80;
  return g_strdup_printf ("%s:%d", g_uri_get_host (u), port);
}

/* Every server the demuxer downloads from, as far as the manifest tells.
 * Lock held. */
static gchar **
servers_of (Entry *e)
{
  GPtrArray *out = g_ptr_array_new ();
  if (e->uri) {
    char *s = server_of (e->uri);
    if (s)
      g_ptr_array_add (out, s);
    for (guint i = 0; i < e->named->len; i++) {
      g_autofree char *abs = g_uri_resolve_relative (e->uri, e->named->pdata[i], G_URI_FLAGS_NONE, NULL);
      char *t = abs ? server_of (abs) : NULL;
      gboolean dup = FALSE;
      for (guint j = 0; t && j < out->len; j++)
        dup |= strcmp (out->pdata[j], t) == 0;
      if (t && !dup)
        g_ptr_array_add (out, t);
      else
        g_free (t);
    }
  }
  g_ptr_array_add (out, NULL);
  return (gchar **) g_ptr_array_free (out, FALSE);
}

gboolean
adaptive_watch_get (GstElement *demux, AdaptiveState *out)
{
  memset (out, 0, sizeof *out);
  g_mutex_lock (&lock);
  Entry *e = lookup (demux);
  if (e) {
    out->v2 = e->v2;
    out->ladder = g_array_copy (e->ladder);
    out->current = e->current;
    out->servers = servers_of (e);
  }
  g_mutex_unlock (&lock);
  if (e == NULL)
    return FALSE;
  out->usage = usage_factor (demux);
  out->active = GST_STATE (demux) >= GST_STATE_PAUSED;
  buffer_of (demux, out);
  return TRUE;
}

void
adaptive_state_clear (AdaptiveState *st)
{
  if (st->ladder)
    g_array_free (st->ladder, TRUE);
  g_strfreev (st->servers);
  memset (st, 0, sizeof *st);
}

GPtrArray *
adaptive_watch_list_v2 (void)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (gst_object_unref);
  g_mutex_lock (&lock);
  if (entries) {
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init (&it, entries);
    while (g_hash_table_iter_next (&it, &key, &value)) {
      Entry *e = value;
      GstElement *d = e->v2 ? g_weak_ref_get (&e->ref) : NULL;
      if (d)
        g_ptr_array_add (out, d);
    }
  }
  g_mutex_unlock (&lock);
  return out;
}
