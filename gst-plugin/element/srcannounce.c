/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* srcannounce.c — what bwsshttpsrc announces of a response (see srcannounce.h). */
#include "srcannounce.h"

static void
headers_to_structure (const char *name, const char *value, gpointer data)
{
  GstStructure *s = data;
  if (!g_utf8_validate (name, -1, NULL) || !g_utf8_validate (value, -1, NULL))
    return;                             /* a hostile server gets no field, no crash */
  const GValue *old = gst_structure_get_value (s, name);
  if (old == NULL) {
    gst_structure_set (s, name, G_TYPE_STRING, value, NULL);
  } else {
    /* repeated header: an array of strings, like souphttpsrc */
    GValue arr = G_VALUE_INIT, v = G_VALUE_INIT;
    g_value_init (&arr, GST_TYPE_ARRAY);
    if (G_VALUE_HOLDS_STRING (old))
      gst_value_array_append_value (&arr, old);
    else
      g_value_copy (old, &arr);
    g_value_init (&v, G_TYPE_STRING);
    g_value_set_string (&v, value);
    gst_value_array_append_and_take_value (&arr, &v);
    gst_structure_take_value (s, name, &arr);
  }
}

void
src_announce_headers (GstBwssHttpSrc *src, SoupMessage *msg)
{
  GstStructure *req = gst_structure_new_empty ("request-headers");
  GstStructure *resp = gst_structure_new_empty ("response-headers");
  lsoup_message_headers_foreach (lsoup_message_get_request_headers (msg), headers_to_structure, req);
  lsoup_message_headers_foreach (lsoup_message_get_response_headers (msg), headers_to_structure, resp);
  GstStructure *s = gst_structure_new ("http-headers",
      "uri", G_TYPE_STRING, src->req.location,
      "http-status-code", G_TYPE_UINT, lsoup_message_get_status (msg),
      "request-headers", GST_TYPE_STRUCTURE, req,
      "response-headers", GST_TYPE_STRUCTURE, resp, NULL);
  if (src->redirection_uri)
    gst_structure_set (s, "redirection-uri", G_TYPE_STRING, src->redirection_uri, NULL);
  gst_structure_free (req);
  gst_structure_free (resp);
  gst_element_post_message (GST_ELEMENT (src),
      gst_message_new_element (GST_OBJECT (src), gst_structure_copy (s)));
  gst_pad_push_event (GST_BASE_SRC_PAD (src), gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM_STICKY, s));
}

void
src_announce_icy (GstBwssHttpSrc *src, SoupMessageHeaders *rh)
{
  if (!src->req.http.iradio_mode)
    return;
  const char *metaint = lsoup_message_headers_get_one (rh, "icy-metaint");
  gint64 interval = metaint ? g_ascii_strtoll (metaint, NULL, 10) : 0;
  if (interval > 0 && interval <= G_MAXINT) {
    GstCaps *caps = gst_caps_new_simple ("application/x-icy", "metadata-interval", G_TYPE_INT,
                                         (gint) interval, NULL);
    gst_base_src_set_caps (GST_BASE_SRC (src), caps);
    gst_caps_unref (caps);
  }
  GstTagList *tags = NULL;
  static const struct { const char *header; const char *tag; } map[] = {
    { "icy-name", GST_TAG_ORGANIZATION }, { "icy-genre", GST_TAG_GENRE },
    { "icy-url", GST_TAG_LOCATION },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (map); i++) {
    const char *v = lsoup_message_headers_get_one (rh, map[i].header);
    if (v == NULL || !*v || !g_utf8_validate (v, -1, NULL))
      continue;
    if (tags == NULL)
      tags = gst_tag_list_new_empty ();
    gst_tag_list_add (tags, GST_TAG_MERGE_REPLACE, map[i].tag, v, NULL);
  }
  if (tags)
    gst_pad_push_event (GST_BASE_SRC_PAD (src), gst_event_new_tag (tags));
}

void
src_announce_size (GstBwssHttpSrc *src, guint64 size)
{
  GstBaseSrc *bsrc = GST_BASE_SRC (src);
  GST_OBJECT_LOCK (src);
  gboolean changed = !src->have_size || src->content_size != size;
  src->content_size = size;
  src->have_size = TRUE;
  bsrc->segment.duration = (gint64) size;
  GST_OBJECT_UNLOCK (src);
  if (changed)
    gst_element_post_message (GST_ELEMENT (src), gst_message_new_duration_changed (GST_OBJECT (src)));
}
