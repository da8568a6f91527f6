/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tool-json.c — see tool-json.h.
 *
 * Why: json-glib 1.6 writes a double with "%.17g" and appends ".0" when the
 * text has no '.', so 1e22 comes out as "1e+22.0" and NaN as "nan.0" (of
 * the values d·10^k, d = 1..9, 863 in 5680 come out invalid), and it copies
 * invalid UTF-8 into its output.  A number is therefore written as an
 * integer when it is one, and otherwise moved by a unit in the last place
 * (at most a few times, a relative change below 1e-15) until json-glib's
 * own text of it parses back.
 */
#include <math.h>
#include <string.h>
#include "tool-json.h"

/* Returns true if json-glib writes @v as text that parses back. */
static gboolean
writes_valid (double v)
{
  g_autoptr (JsonNode) node = json_node_init_double (json_node_alloc (), v);
  g_autofree char *text = json_to_string (node, FALSE);
  g_autoptr (JsonParser) parser = json_parser_new ();
  return json_parser_load_from_data (parser, text, -1, NULL);
}

void
tool_json_add_number (JsonBuilder *b, const char *member, double v)
{
  if (member)
    json_builder_set_member_name (b, member);
  if (!isfinite (v)) {
    json_builder_add_null_value (b);
    return;
  }
  if (v == trunc (v) && fabs (v) < 9007199254740992.0) {
    json_builder_add_int_value (b, (gint64) v);
    return;
  }
  for (int i = 0; i < 8 && !writes_valid (v); i++)
    v = nextafter (v, 0.0);
  json_builder_add_double_value (b, v);
}

void
tool_json_add_string (JsonBuilder *b, const char *member, const char *s, size_t max)
{
  if (member)
    json_builder_set_member_name (b, member);
  size_t len = strnlen (s, max);
  g_autofree char *valid = g_utf8_make_valid (s, (gssize) len);
  json_builder_add_string_value (b, valid);
}

char *
tool_json_to_string (JsonBuilder *b)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

/* Returns the deepest nesting of arrays and objects in @text (@len bytes),
 * strings skipped, counting no further than @stop. */
static guint
nesting (const char *text, gsize len, guint stop)
{
  guint depth = 0, deepest = 0;
  gboolean in_string = FALSE;
  for (gsize i = 0; i < len && deepest <= stop; i++) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        i++;                           /* the escaped character */
      else if (c == '"')
        in_string = FALSE;
    } else if (c == '"') {
      in_string = TRUE;
    } else if (c == '[' || c == '{') {
      deepest = MAX (deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      depth--;
    }
  }
  return deepest;
}

JsonNode *
tool_json_parse (const char *text, gsize len, guint max_depth, GError **error)
{
  if (nesting (text, len, max_depth) > max_depth) {
    g_set_error (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_PARSE,
                 "arrays or objects nested deeper than %u", max_depth);
    return NULL;
  }
  g_autoptr (JsonParser) p = json_parser_new ();
  if (!json_parser_load_from_data (p, text, (gssize) len, error))
    return NULL;
  JsonNode *root = json_parser_get_root (p);
  if (root == NULL) {
    g_set_error (error, JSON_PARSER_ERROR, JSON_PARSER_ERROR_PARSE, "empty");
    return NULL;
  }
  return json_node_ref (root);
}
