/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-hostile.c — bwsshttpsrc against a hostile server (hostile-server.c).
 *
 * Every case must end within its bound, and end either with the right bytes
 * (the whole body, checked byte for byte) or with a clear error (an ERROR
 * message in the RESOURCE domain) having delivered nothing but a correct
 * prefix of the body: never wrong bytes, never a silent short EOS, never a
 * loop.  Cases that retry also bound how often the client came back.
 *
 * HOSTILE_ELEMENT=souphttpsrc runs the same cases against souphttpsrc, for
 * comparison (several of them fail there: that is what the cases are for).
 */
#include <string.h>
#include <gst/check/gstcheck.h>
#include "hostile-server.h"

static HostileServer *server;

typedef enum { WANT_BYTES, WANT_ERROR } Want;

typedef struct {
  GByteArray *data;
  gboolean    eos;
  GError     *error;
  gchar      *debug;
  gdouble     secs;
} Outcome;

static void
on_handoff (GstElement *sink, GstBuffer *buf, GstPad *pad, Outcome *o)
{
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_READ);
  /* bounded: a body that never ends must not eat the machine */
  if (o->data->len < 4 * HOSTILE_BODY_SIZE)
    g_byte_array_append (o->data, map.data, (guint) map.size);
  gst_buffer_unmap (buf, &map);
}

static void
setup (void)
{
  GError *err = NULL;
  server = hostile_server_start (&err);
  fail_unless (server != NULL, "%s", err ? err->message : "");
}

static void
teardown (void)
{
  hostile_server_stop (server);
  server = NULL;
}

/* Runs ELEMENT location=URL+path ! fakesink until EOS, error or @bound_s + 10
 * seconds; @timeout and @retries are set on the element (timeout 0 = leave). */
static void
run (const char *path, guint timeout, gint retries, Outcome *o)
{
  const char *factory = g_getenv ("HOSTILE_ELEMENT");
  if (factory == NULL || !*factory)
    factory = "bwsshttpsrc";
  memset (o, 0, sizeof *o);
  o->data = g_byte_array_new ();
  GstElement *pipe = gst_pipeline_new (NULL);
  GstElement *src = gst_element_factory_make (factory, NULL);
  GstElement *sink = gst_element_factory_make ("fakesink", NULL);
  fail_unless (src && sink);
  g_autofree char *url = g_strdup_printf ("%s%s", hostile_server_url (server), path);
  g_object_set (src, "location", url, "retries", retries, NULL);
  if (timeout)
    g_object_set (src, "timeout", timeout, NULL);
  g_object_set (sink, "signal-handoffs", TRUE, "sync", FALSE, NULL);
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), o);
  gst_bin_add_many (GST_BIN (pipe), src, sink, NULL);
  fail_unless (gst_element_link (src, sink));
  GstBus *bus = gst_element_get_bus (pipe);
  gint64 t0 = g_get_monotonic_time ();
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 90 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  o->secs = (g_get_monotonic_time () - t0) / 1e6;
  if (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR)
    gst_message_parse_error (m, &o->error, &o->debug);
  else if (m)
    o->eos = TRUE;
  if (m)
    gst_message_unref (m);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

static void
outcome_clear (Outcome *o)
{
  g_byte_array_free (o->data, TRUE);
  g_clear_error (&o->error);
  g_free (o->debug);
}

/* The checks every case shares. */
static void
check (const char *path, guint timeout, gint retries, Want want, gdouble bound_s, guint max_requests)
{
  Outcome o;
  run (path, timeout, retries, &o);
  guint requests = hostile_server_requests (server, path);
  GST_INFO ("%s: %s after %.2f s, %u bytes, %u requests%s%s", path,
            o.eos ? "EOS" : o.error ? "error" : "nothing", o.secs, o.data->len, requests,
            o.error ? ": " : "", o.error ? o.error->message : "");
  fail_unless (o.eos || o.error, "%s: neither EOS nor an error within 90 s", path);
  fail_unless (o.secs <= bound_s, "%s: ended after %.2f s, bound %.2f s", path, o.secs, bound_s);
  fail_unless (o.data->len <= HOSTILE_BODY_SIZE
               && (o.data->len == 0 || memcmp (o.data->data, hostile_body (), o.data->len) == 0),
               "%s: delivered %u bytes that are not a prefix of the body", path, o.data->len);
  if (want == WANT_BYTES) {
    fail_unless (o.error == NULL, "%s: error %s (%s)", path, o.error ? o.error->message : "",
                 o.debug ? o.debug : "");
    fail_unless (o.data->len == HOSTILE_BODY_SIZE, "%s: EOS after %u of %u bytes", path,
                 o.data->len, HOSTILE_BODY_SIZE);
  } else {
    fail_unless (o.error != NULL, "%s: EOS after %u bytes, an error was due", path, o.data->len);
    fail_unless (o.error->domain == GST_RESOURCE_ERROR, "%s: error in domain %s: %s", path,
                 g_quark_to_string (o.error->domain), o.error->message);
  }
  if (max_requests)
    fail_unless (requests <= max_requests, "%s: %u requests, at most %u expected", path, requests,
                 max_requests);
  outcome_clear (&o);
}

/* The control: an honest server, every byte. */
GST_START_TEST (test_honest)
{
  check ("/ok", 0, 3, WANT_BYTES, 10, 1);
}
GST_END_TEST;

/* A body that keeps stopping half-way: resumed, byte-exact (each response
 * brings bytes, so the attempts of one position never run out). */
GST_START_TEST (test_body_stops)
{
  check ("/stops", 0, 3, WANT_BYTES, 30, 0);
}
GST_END_TEST;

static gint libsoup_complaints;

static gboolean
count_complaint (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
  GST_INFO ("libsoup's complaint (%s): %s", (level & G_LOG_LEVEL_CRITICAL) ? "CRITICAL" : "WARNING", message);
  g_atomic_int_inc (&libsoup_complaints);
  return TRUE;                        /* discarded */
}

/* libsoup itself complains about "-5" (its body stream's content-length
 * property refuses it) before the element sees the response: that message
 * is libsoup's, not a failure of the element.  GLib emits it as a WARNING
 * before 2.76 and as a CRITICAL since ("Replace most GObject warnings with
 * criticals"): the filter takes that one message at the level of the GLib
 * running, and nothing else. */
GST_START_TEST (test_content_length_negative)
{
  GLogLevelFlags level = glib_check_version (2, 76, 0) == NULL ? G_LOG_LEVEL_CRITICAL : G_LOG_LEVEL_WARNING;
  g_atomic_int_set (&libsoup_complaints, 0);
  gst_check_add_log_filter ("GLib-GObject", level,
                            g_regex_new ("^value \"-5\" of type '[a-z0-9]+' is invalid or out of range "
                                         "for property 'content-length' of type '[a-z0-9]+'$", 0, 0, NULL),
                            count_complaint, NULL, NULL);
  check ("/cl-negative", 0, 3, WANT_ERROR, 10, 4);
  gst_check_clear_log_filter ();
  GST_INFO ("libsoup complained %d times", g_atomic_int_get (&libsoup_complaints));
}
GST_END_TEST;

GST_START_TEST (test_content_length_overflow)
{
  check ("/cl-overflow", 0, 3, WANT_ERROR, 10, 4);
}
GST_END_TEST;

/* 9·10^18 bytes announced, 5 sent, again and again: bounded. */
GST_START_TEST (test_content_length_absurd)
{
  check ("/cl-absurd", 0, 3, WANT_ERROR, 10, 4);
}
GST_END_TEST;

/* Headers, then silence, timeout 1 s, 3 retries: an error within
 * timeout × (retries + 1) = 4 s (1 s of margin for a loaded machine), after
 * 4 requests. */
GST_START_TEST (test_headers_then_silence)
{
  check ("/headers-silence", 1, 3, WANT_ERROR, 4 + 1.0, 4);
}
GST_END_TEST;

/* No answer at all: an error after one timeout, as souphttpsrc (a server
 * that took the request and says nothing is not asked again). */
GST_START_TEST (test_silence)
{
  check ("/silence", 1, 3, WANT_ERROR, 1 + 1.0, 1);
}
GST_END_TEST;

/* 1 MB of headers (libsoup takes 64 kB): an error at once, not retried. */
GST_START_TEST (test_huge_headers)
{
  check ("/big-headers", 0, 3, WANT_ERROR, 10, 1);
}
GST_END_TEST;

/* A server that does not speak HTTP is not asked again; one that closed
 * before a byte may be (a transport failure). */
GST_START_TEST (test_bad_status_lines)
{
  check ("/bad-status-word", 0, 3, WANT_ERROR, 10, 1);
  check ("/bad-status-code", 0, 3, WANT_ERROR, 10, 1);
  check ("/bad-status-proto", 0, 3, WANT_ERROR, 10, 1);
  check ("/bad-status-garbage", 0, 3, WANT_ERROR, 10, 1);
  check ("/bad-status-empty", 0, 3, WANT_ERROR, 10, 4);
}
GST_END_TEST;

/* Broken chunked framing is an error, never a silent end. */
GST_START_TEST (test_chunked_broken)
{
  check ("/chunked-bad-size", 0, 3, WANT_ERROR, 10, 4);
  check ("/chunked-truncated", 0, 3, WANT_ERROR, 10, 4);
  check ("/chunked-bad-crlf", 0, 3, WANT_ERROR, 10, 4);
}
GST_END_TEST;

/* libsoup follows 20 redirects; a loop is not retried on top of that. */
GST_START_TEST (test_redirect_loop)
{
  check ("/redirect-loop", 0, 3, WANT_ERROR, 10, 21);
}
GST_END_TEST;

/* A 206 from byte 500 to a request for the whole resource. */
GST_START_TEST (test_partial_unasked)
{
  check ("/partial-unasked", 0, 3, WANT_ERROR, 10, 4);
}
GST_END_TEST;

/* A resume answered with other bytes: another ETag, another Last-Modified,
 * another start, another total, or a 200 from the start. */
GST_START_TEST (test_resume_other_bytes)
{
  check ("/resume-other", 0, 3, WANT_ERROR, 10, 4);
  check ("/resume-modified", 0, 3, WANT_ERROR, 10, 4);
  check ("/resume-shifted", 0, 3, WANT_ERROR, 10, 4);
  check ("/resume-total", 0, 3, WANT_ERROR, 10, 4);
  check ("/resume-200", 0, 3, WANT_ERROR, 10, 4);
}
GST_END_TEST;

/* A resume answered with 206 headers and no body: the attempts of that
 * position run out: the request that brought the first half is its first
 * attempt, then 3 retries. */
GST_START_TEST (test_resume_no_body)
{
  check ("/resume-nobody", 0, 3, WANT_ERROR, 10, 4);
}
GST_END_TEST;

static Suite *
hostile_suite (void)
{
  Suite *s = suite_create ("hostile");
  TCase *tc = tcase_create ("server");
  tcase_set_timeout (tc, 300);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_honest);
  tcase_add_test (tc, test_body_stops);
  tcase_add_test (tc, test_content_length_negative);
  tcase_add_test (tc, test_content_length_overflow);
  tcase_add_test (tc, test_content_length_absurd);
  tcase_add_test (tc, test_headers_then_silence);
  tcase_add_test (tc, test_silence);
  tcase_add_test (tc, test_huge_headers);
  tcase_add_test (tc, test_bad_status_lines);
  tcase_add_test (tc, test_chunked_broken);
  tcase_add_test (tc, test_redirect_loop);
  tcase_add_test (tc, test_partial_unasked);
  tcase_add_test (tc, test_resume_other_bytes);
  tcase_add_test (tc, test_resume_no_body);
  suite_add_tcase (s, tc);
  return s;
}

GST_CHECK_MAIN (hostile);
