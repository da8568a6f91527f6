/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tool-json.h — JSON values for the tools' output that json-glib's writer
 * turns into valid JSON whatever the input.
 */
#ifndef BWSS_TOOL_JSON_H
#define BWSS_TOOL_JSON_H

#include <stddef.h>
#include <json-glib/json-glib.h>

/* Adds @v, as the object's member @member (NULL: an array's next value):
 * null if not finite, an integer if it is one (below 2^53), else a double
 * json-glib writes as a valid JSON number. */
void tool_json_add_number (JsonBuilder *b, const char *member, double v);

/* Adds the text of @s (up to a NUL or @max bytes), with invalid UTF-8
 * replaced by U+FFFD, as the member @member (NULL: an array's value). */
void tool_json_add_string (JsonBuilder *b, const char *member, const char *s, size_t max);

/* Returns the builder's root as one line of JSON (free it with g_free()). */
char *tool_json_to_string (JsonBuilder *b);

#endif
