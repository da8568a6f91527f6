/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-late-trace.c — the bwss-late trace reader and its JSON report
 * (libbwss/programs/tools/late-trace.c), as the tool runs them: any input ends
 * quickly (the driver fails an input that takes 2 s: a count of 2^64 took
 * hours before), and a trace that is read gives a report that is valid JSON
 * with finite numbers, fractions in [0, 1] and a prebuffer >= 0.
 *
 * Input: one byte choosing the stream (rate, packet size, thresholds,
 * whether the stream ended, and where the observation ends), then the
 * trace's text.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include "late-trace.h"

const char fuzz_target_name[] = "late-trace";
const char *const fuzz_dictionary[] = {
  "#", " ", "\t", "\n", "\r\n", "1e3", "-5", "18446744073709551616", "9007199254740992",
  "9007199254740991", "0.5", "inf", "nan", "0x10", "1000000000000", "1000000000000.5", NULL,
};

#define CHECK(cond) do { if (!(cond)) { fprintf (stderr, "fuzz-late-trace: not %s: %s\n", #cond, text ? text : ""); abort (); } } while (0)

static bool
number_ok (JsonObject *o, const char *name, double lo, double hi)
{
  JsonNode *n = json_object_get_member (o, name);
  if (n == NULL || json_node_get_value_type (n) == G_TYPE_INVALID)
    return false;
  double v = json_node_get_double (n);
  return isfinite (v) && v >= lo && v <= hi;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const double rates[] = { 496e3, 8e3, 1, 1e15 };
  static const uint32_t packets[] = { 1000, 1, 1500, 4294967295u };
  static const double ends[] = { 0, 0.5, 1e6, 1e12 };
  if (size == 0)
    return 0;
  uint8_t how = data[0];
  double th[3] = { 0, 0.5, 1e12 };
  BwssLate late;
  if (bwss_late_init (&late, rates[how & 3], packets[(how >> 2) & 3], how & 16 ? th : NULL,
                      how & 16 ? 3 : 0) != 0)
    abort ();
  FILE *in = fmemopen ((void *) (data + 1), size - 1 ? size - 1 : 1, "r");
  if (size == 1) {
    fclose (in);
    return 0;
  }
  LateTrace tr;
  late_trace_init (&tr, &late);
  GError *error = NULL;
  gboolean ok = late_trace_read (&tr, in, "fuzz", &error);
  fclose (in);
  char *text = NULL;
  if (!ok) {
    CHECK (error != NULL && strstr (error->message, "fuzz:") == error->message);
    g_error_free (error);
    return 0;
  }
  if (isnan (tr.t0))
    return 0;
  CHECK (tr.t0 >= 0 && tr.last >= tr.t0 && tr.last <= LATE_TRACE_MAX_TIME_S);
  if (how & 32)
    bwss_late_finish (&late);
  double end = fmin (tr.last + ends[(how >> 6) & 3], LATE_TRACE_MAX_TIME_S);
  text = late_trace_report (&tr, end);
  JsonParser *parser = json_parser_new ();
  CHECK (json_parser_load_from_data (parser, text, -1, NULL));
  JsonObject *o = json_node_get_object (json_parser_get_root (parser));
  CHECK (number_ok (o, "required_prebuffer_s", 0, 2e12));
  CHECK (number_ok (o, "packets", 0, 9.1e15) && number_ok (o, "bytes", 0, 9.1e15));
  CHECK (number_ok (o, "t0", 0, 1e12) && number_ok (o, "end", 0, 1e12));
  JsonObject *lf = json_object_get_object_member (o, "late_fraction");
  GList *members = json_object_get_members (lf);
  for (GList *m = members; m; m = m->next)
    CHECK (number_ok (lf, m->data, 0, 1));
  g_list_free (members);
  g_object_unref (parser);
  g_free (text);
  return 0;
}
