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
