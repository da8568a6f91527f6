/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manifest.c — bitrate ladders from HLS and DASH manifests (manifest.h). */
#include <string.h>
#include "manifest.h"

/* Largest BANDWIDTH taken, bit/s: a ladder entry above 1 Tbit/s is junk. */
#define MAX_BANDWIDTH G_GUINT64_CONSTANT (1000000000000)

static gint
cmp_u64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

/* Sorts the ladder ascending and drops duplicates. */
static void
normalise (GArray *ladder)
{
  g_array_sort (ladder, cmp_u64);
  guint out = 0;
  for (guint i = 0; i < ladder->len; i++)
    if (out == 0 || g_array_index (ladder, guint64, i) != g_array_index (ladder, guint64, out - 1))
      g_array_index (ladder, guint64, out++) = g_array_index (ladder, guint64, i);
  g_array_set_size (ladder, out);
}

/* Returns the decimal value of @s's leading digits if it is a valid
 * bandwidth, 0 otherwise. */
static guint64
bandwidth_value (const char *s, gsize len)
{
  guint64 v = 0;
  gsize i = 0;
  for (; i < len && g_ascii_isdigit (s[i]); i++) {
    if (i >= 13)
      return 0;
    v = v * 10 + (guint64) (s[i] - '0');
  }
  return i > 0 && v <= MAX_BANDWIDTH ? v : 0;
}

/* The BANDWIDTH attribute of an attribute list (quoted values may hold
 * commas), 0 if absent or invalid. */
static guint64
hls_bandwidth (const char *attrs)
{
  const char *p = attrs;
  while (*p) {
    const char *name = p;
    const char *eq = p;
    while (*eq && *eq != '=' && *eq != ',')
      eq++;
    if (*eq != '=')
      return 0;
    const char *v = eq + 1, *end = v;
    if (*v == '"') {
      end = strchr (v + 1, '"');
      if (end == NULL)
        return 0;
      end++;
    } else {
      while (*end && *end != ',')
        end++;
    }
    if (eq - name == 9 && strncmp (name, "BANDWIDTH", 9) == 0)
      return bandwidth_value (v, (gsize) (end - v));
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}

static void
parse_hls (Manifest *m, const char *text, gsize len)
{
  g_autofree char *copy = g_strndup (text, len);
  g_auto (GStrv) lines = g_strsplit (copy, "\n", -1);
  guint64 pending = 0;
  gboolean in_stream = FALSE;
  for (gchar **l = lines; *l; l++) {
    char *line = g_strstrip (*l);
    if (g_str_has_prefix (line, "#EXT-X-STREAM-INF:")) {
      pending = hls_bandwidth (line + strlen ("#EXT-X-STREAM-INF:"));
      in_stream = TRUE;
    } else if (*line && *line != '#' && in_stream) {
      if (pending) {
        g_array_append_val (m->ladder, pending);
        if (m->first_listed == 0)
          m->first_listed = pending;
        g_ptr_array_add (m->uris, g_strdup (line));
      }
      in_stream = FALSE;
    }
  }
  normalise (m->ladder);
}

/* ---- DASH ---- */

typedef struct {
  Manifest *m;
  GArray   *all;            /* every Representation's bandwidth */
  GArray   *video;          /* those known to be video */
  gboolean  set_video;      /* the enclosing AdaptationSet is video */
  gboolean  in_base_url;
  GString  *text;
} MpdState;

static gboolean
is_video_attr (const gchar **names, const gchar **values)
{
  for (guint i = 0; names[i]; i++)
    if ((strcmp (names[i], "mimeType") == 0 && g_str_has_prefix (values[i], "video/"))
        || (strcmp (names[i], "contentType") == 0 && strcmp (values[i], "video") == 0))
      return TRUE;
  return FALSE;
}

static const char *
local_name (const gchar *element)
{
  const char *colon = strrchr (element, ':');
  return colon ? colon + 1 : element;
}

static void
mpd_start (GMarkupParseContext *ctx, const gchar *element, const gchar **names, const gchar **values,
           gpointer data, GError **error)
{
  MpdState *st = data;
  const char *name = local_name (element);
  if (strcmp (name, "AdaptationSet") == 0) {
    st->set_video = is_video_attr (names, values);
  } else if (strcmp (name, "Representation") == 0) {
    for (guint i = 0; names[i]; i++)
      if (strcmp (names[i], "bandwidth") == 0) {
        guint64 bw = bandwidth_value (values[i], strlen (values[i]));
        if (bw) {
          g_array_append_val (st->all, bw);
          if (st->set_video || is_video_attr (names, values))
            g_array_append_val (st->video, bw);
        }
      }
  } else if (strcmp (name, "BaseURL") == 0) {
    st->in_base_url = TRUE;
    g_string_truncate (st->text, 0);
  }
}

static void
mpd_end (GMarkupParseContext *ctx, const gchar *element, gpointer data, GError **error)
{
  MpdState *st = data;
  const char *name = local_name (element);
  if (strcmp (name, "AdaptationSet") == 0) {
    st->set_video = FALSE;
  } else if (strcmp (name, "BaseURL") == 0 && st->in_base_url) {
    st->in_base_url = FALSE;
    g_autofree char *url = g_strstrip (g_strdup (st->text->str));
    if (strstr (url, "://"))
      g_ptr_array_add (st->m->uris, g_steal_pointer (&url));
  }
}

static void
mpd_text (GMarkupParseContext *ctx, const gchar *text, gsize len, gpointer data, GError **error)
{
  MpdState *st = data;
  if (st->in_base_url && st->text->len < 4096)
    g_string_append_len (st->text, text, (gssize) len);
}

static void
parse_dash (Manifest *m, const char *text, gsize len)
{
  MpdState st = { .m = m, .all = g_array_new (FALSE, FALSE, sizeof (guint64)),
                  .video = g_array_new (FALSE, FALSE, sizeof (guint64)), .text = g_string_new (NULL) };
  static const GMarkupParser parser = { mpd_start, mpd_end, mpd_text, NULL, NULL };
  GMarkupParseContext *ctx = g_markup_parse_context_new (&parser, G_MARKUP_IGNORE_QUALIFIED, &st, NULL);
  /* an XML declaration is fine for GMarkup; a broken document keeps what
   * was read before the error */
  g_markup_parse_context_parse (ctx, text, (gssize) len, NULL);
  g_markup_parse_context_free (ctx);
  GArray *use = st.video->len ? st.video : st.all;
  g_array_append_vals (m->ladder, use->data, use->len);
  normalise (m->ladder);
  g_array_free (st.all, TRUE);
  g_array_free (st.video, TRUE);
  g_string_free (st.text, TRUE);
}

Manifest *
manifest_parse (const char *text, gsize len)
{
  Manifest *m = g_new0 (Manifest, 1);
  m->ladder = g_array_new (FALSE, FALSE, sizeof (guint64));
  m->uris = g_ptr_array_new_with_free_func (g_free);
  if (text == NULL || len == 0 || !g_utf8_validate (text, (gssize) len, NULL))
    return m;
  /* skip a UTF-8 byte order mark and leading blanks */
  if (len >= 3 && memcmp (text, "\xEF\xBB\xBF", 3) == 0) {
    text += 3;
    len -= 3;
  }
  while (len && g_ascii_isspace (*text)) {
    text++;
    len--;
  }
  if (len >= 7 && memcmp (text, "#EXTM3U", 7) == 0) {
    m->kind = MANIFEST_HLS;
    parse_hls (m, text, len);
  } else if (g_strstr_len (text, (gssize) MIN (len, 4096), "<MPD") != NULL) {
    m->kind = MANIFEST_DASH;
    parse_dash (m, text, len);
  }
  return m;
}

void
manifest_free (Manifest *m)
{
  if (m == NULL)
    return;
  g_array_free (m->ladder, TRUE);
  g_ptr_array_free (m->uris, TRUE);
  g_free (m);
}
