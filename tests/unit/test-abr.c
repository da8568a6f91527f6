/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-abr.c — the ABR-aware minimum (gst-plugin/abr/abrrule.c) and the ladders
 * read from manifests (gst-plugin/abr/manifest.c), exact cases.
 */
#include <math.h>
#include <string.h>
#include <glib.h>
#include "abrrule.h"
#include "manifest.h"

static const guint64 lab[] = { 60000, 262000, 350000, 450000 };

/* need(v) = B / f × 1.10 */
static void
test_need (void)
{
  g_assert_cmpfloat_with_epsilon (abr_need (450000, 0.8), 450000 / 0.8 * 1.10, 1e-6);
  g_assert_cmpfloat_with_epsilon (abr_need (200000, 0.5), 440000, 1e-6);
  /* a factor outside (0, 1] is clamped, NaN is the demuxers' default 0.8 */
  g_assert_cmpfloat_with_epsilon (abr_need (100000, 3.0), 110000, 1e-6);
  g_assert_cmpfloat_with_epsilon (abr_need (100000, 0.0), 100000 / 0.05 * 1.10, 1e-6);
  g_assert_cmpfloat_with_epsilon (abr_need (100000, NAN), 137500, 1e-6);
}

static double
rule (guint64 current, double sigma, guint64 previous, guint64 *chosen)
{
  AbrInput in = { .ladder = lab, .n = G_N_ELEMENTS (lab), .current = current, .usage = 0.8,
                  .sigma = sigma, .previous = previous };
  return abr_min_rate (&in, chosen);
}

/* No σ: hold the variant in use; the lowest when it is not known. */
static void
test_hold_without_sigma (void)
{
  guint64 c;
  g_assert_cmpfloat_with_epsilon (rule (350000, -1, 0, &c), abr_need (350000, 0.8), 1e-6);
  g_assert_cmpuint (c, ==, 350000);
  g_assert_cmpfloat_with_epsilon (rule (0, -1, 0, &c), abr_need (60000, 0.8), 1e-6);
  g_assert_cmpuint (c, ==, 60000);
  /* a current variant that is not in the ladder is not trusted */
  rule (123, -1, 0, &c);
  g_assert_cmpuint (c, ==, 60000);
}

/* σ above the next variant's need (with the up margin): its need, so the
 * player's own rule steps up; σ above the top's: the top's. */
static void
test_step_up_when_room (void)
{
  guint64 c;
  double need450 = abr_need (450000, 0.8);            /* 618 750 */
  rule (350000, need450 * ABR_UP_MARGIN + 1, 350000, &c);
  g_assert_cmpuint (c, ==, 450000);
  rule (350000, need450 * ABR_UP_MARGIN - 1, 350000, &c);
  g_assert_cmpuint (c, ==, 350000);                    /* not quite room: hold */
  rule (60000, 10e6, 60000, &c);
  g_assert_cmpuint (c, ==, 450000);
}

/* σ below the current variant's need (a delay loop's cut to the minima,
 * or below them): the current variant's need all the same — the player
 * steps down by its own measurement, not by σ. */
static void
test_hold_under_sigma (void)
{
  guint64 c;
  double need450 = abr_need (450000, 0.8);
  g_assert_cmpfloat_with_epsilon (rule (450000, abr_need (350000, 0.8), 450000, &c), need450, 1e-6);
  g_assert_cmpuint (c, ==, 450000);
  g_assert_cmpfloat_with_epsilon (rule (450000, 1000, 450000, &c), need450, 1e-6);
  g_assert_cmpuint (c, ==, 450000);
  g_assert_cmpfloat_with_epsilon (rule (350000, 0, 350000, &c), abr_need (350000, 0.8), 1e-6);
  g_assert_cmpuint (c, ==, 350000);
}

/* The player stepped down by its own rule: while σ covers the need of the
 * variant chosen last (above), that need stays the minimum and the player
 * steps back up; once σ does not, the variant in use. */
static void
test_after_step_down (void)
{
  guint64 c;
  double need450 = abr_need (450000, 0.8);
  rule (350000, need450, 450000, &c);
  g_assert_cmpuint (c, ==, 450000);
  rule (350000, need450 - 1, 450000, &c);
  g_assert_cmpuint (c, ==, 350000);
}

/* The variant in use unknown (DASH posts no switches): the highest that σ
 * covers, the lowest when none does. */
static void
test_fall_back_unknown (void)
{
  guint64 c;
  rule (0, abr_need (350000, 0.8), 450000, &c);
  g_assert_cmpuint (c, ==, 350000);
  g_assert_cmpfloat_with_epsilon (rule (0, 1000, 450000, &c), abr_need (60000, 0.8), 1e-6);
  g_assert_cmpuint (c, ==, 60000);
  /* a current variant that is not in the ladder is not trusted */
  rule (123, abr_need (262000, 0.8), 262000, &c);
  g_assert_cmpuint (c, ==, 262000);
}

/* Hysteresis: the variant chosen last stays while σ covers its need; a
 * higher one needs the margin. */
static void
test_hysteresis (void)
{
  guint64 c;
  double need450 = abr_need (450000, 0.8);
  rule (450000, need450, 450000, &c);                  /* exactly its need: kept */
  g_assert_cmpuint (c, ==, 450000);
  rule (350000, need450, 350000, &c);                  /* from below: not yet */
  g_assert_cmpuint (c, ==, 350000);
  rule (350000, need450 * ABR_UP_MARGIN, 350000, &c);  /* with the margin */
  g_assert_cmpuint (c, ==, 450000);
}

static void
test_empty_ladder (void)
{
  AbrInput in = { .ladder = NULL, .n = 0, .usage = 0.8, .sigma = 1e6 };
  guint64 c = 7;
  g_assert_cmpfloat (abr_min_rate (&in, &c), ==, 0.0);
  g_assert_cmpuint (c, ==, 0);
}

/* σ is usable only from a live controller past its initialisation. */
static void
test_usable_sigma (void)
{
  BwssDomainStats ds = { .controller_pid = 42, .phase = BWSS_PHASE_REACTIVE, .sigma_bps = 9e5 };
  g_assert_cmpfloat (abr_usable_sigma (&ds), ==, 9e5);
  ds.phase = BWSS_PHASE_LINK_CONGESTED;
  g_assert_cmpfloat (abr_usable_sigma (&ds), ==, 9e5);
  ds.phase = BWSS_PHASE_TRACK;
  g_assert_cmpfloat (abr_usable_sigma (&ds), ==, 9e5);
  ds.phase = BWSS_PHASE_RAISE;
  g_assert_cmpfloat (abr_usable_sigma (&ds), <, 0);
  ds.phase = BWSS_PHASE_START;
  g_assert_cmpfloat (abr_usable_sigma (&ds), <, 0);
  ds.phase = BWSS_PHASE_RELEASE;
  g_assert_cmpfloat (abr_usable_sigma (&ds), <, 0);
  ds.phase = BWSS_PHASE_REACTIVE;
  ds.suspended = true;
  g_assert_cmpfloat (abr_usable_sigma (&ds), <, 0);
  ds.suspended = false;
  ds.controller_pid = 0;
  g_assert_cmpfloat (abr_usable_sigma (&ds), <, 0);
  g_assert_cmpfloat (abr_usable_sigma (NULL), <, 0);
}

/* ---- manifests ---- */

static void
assert_ladder (const Manifest *m, const guint64 *want, guint n)
{
  g_assert_cmpuint (m->ladder->len, ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (g_array_index (m->ladder, guint64, i), ==, want[i]);
}

static void
test_hls_master (void)
{
  const char *text =
      "\xEF\xBB\xBF#EXTM3U\r\n#EXT-X-VERSION:3\r\n"
      "#EXT-X-STREAM-INF:BANDWIDTH=450000,CODECS=\"avc1.42e00a,mp4a.40.2\",RESOLUTION=320x180\r\n"
      "v450/index.m3u8\r\n"
      "#EXT-X-STREAM-INF:PROGRAM-ID=1,BANDWIDTH=60000\r\n# a comment\r\nv60/index.m3u8\r\n"
      "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=9000,URI=\"iframes.m3u8\"\r\n"
      "#EXT-X-STREAM-INF:AVERAGE-BANDWIDTH=100,BANDWIDTH=350000\nhttp://cdn.example/v350.m3u8\n"
      "#EXT-X-STREAM-INF:BANDWIDTH=450000\nv450b/index.m3u8\n";
  Manifest *m = manifest_parse (text, strlen (text));
  g_assert_cmpint (m->kind, ==, MANIFEST_HLS);
  static const guint64 want[] = { 60000, 350000, 450000 };
  assert_ladder (m, want, G_N_ELEMENTS (want));
  g_assert_cmpuint (m->first_listed, ==, 450000);      /* the demuxers start there */
  g_assert_cmpuint (m->uris->len, ==, 4);
  g_assert_cmpstr (m->uris->pdata[2], ==, "http://cdn.example/v350.m3u8");
  manifest_free (m);
}

/* Junk gets no ladder, never a crash: a media playlist, bad numbers,
 * binary data, an unterminated quote. */
static void
test_hls_junk (void)
{
  const char *cases[] = {
    "#EXTM3U\n#EXTINF:2.0,\ns1.ts\n",
    "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=-5\nv.m3u8\n",
    "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=99999999999999999999\nv.m3u8\n",
    "#EXTM3U\n#EXT-X-STREAM-INF:CODECS=\"a,BANDWIDTH=5\nv.m3u8\n",
    "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=\n",
    "\xff\xfe\x00garbage",
    "",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
    Manifest *m = manifest_parse (cases[i], strlen (cases[i]));
    g_assert_cmpuint (m->ladder->len, ==, 0);
    g_assert_cmpuint (m->first_listed, ==, 0);
    manifest_free (m);
  }
}

static void
test_dash (void)
{
  const char *text =
      "<?xml version=\"1.0\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\">"
      "<BaseURL>http://media.example/dash/</BaseURL><Period>"
      "<AdaptationSet mimeType=\"video/mp4\">"
      "<Representation id=\"1\" bandwidth=\"1000000\"/><Representation id=\"2\" bandwidth=\"2500000\"/>"
      "</AdaptationSet>"
      "<AdaptationSet contentType=\"audio\"><Representation id=\"a\" bandwidth=\"128000\"/></AdaptationSet>"
      "<AdaptationSet><Representation id=\"3\" mimeType=\"video/mp4\" bandwidth=\"5000000\"/></AdaptationSet>"
      "</Period></MPD>";
  Manifest *m = manifest_parse (text, strlen (text));
  g_assert_cmpint (m->kind, ==, MANIFEST_DASH);
  static const guint64 want[] = { 1000000, 2500000, 5000000 };     /* audio left out */
  assert_ladder (m, want, G_N_ELEMENTS (want));
  g_assert_cmpuint (m->uris->len, ==, 1);
  g_assert_cmpstr (m->uris->pdata[0], ==, "http://media.example/dash/");
  manifest_free (m);
  /* nothing says video: every Representation; broken XML keeps what came */
  const char *plain = "<MPD><Period><AdaptationSet><Representation bandwidth=\"300\"/>"
                      "<Representation bandwidth=\"100\"/><Repres";
  m = manifest_parse (plain, strlen (plain));
  static const guint64 want2[] = { 100, 300 };
  assert_ladder (m, want2, G_N_ELEMENTS (want2));
  manifest_free (m);
}

/* What the flow asks for (player_prefs): the minimum and the weight while
 * a buffer is low, the minimum alone (weight 0) while it is full, nothing
 * reserved between requests, and between them with a full buffer no share
 * either; the buffer of adaptivedemux2 from its level. */
static void
test_player_prefs (void)
{
  BwssPrefs p;
  PlayerInput in = { .min_rate = 618750, .priority = 20, .weight = 2.0, .buffer = PLAYER_BUFFER_LOW,
                     .fetching = TRUE };
  player_prefs (&in, &p);
  g_assert_cmpint (p.priority, ==, 20);
  g_assert_cmpfloat (p.min_rate_bps, ==, 618750);
  g_assert_cmpfloat (p.weight, ==, 2.0);
  in.buffer = PLAYER_BUFFER_UNKNOWN;            /* not seen: as low */
  player_prefs (&in, &p);
  g_assert_cmpfloat (p.weight, ==, 2.0);
  in.buffer = PLAYER_BUFFER_FULL;               /* eq. 6 with w = 0: exactly m */
  player_prefs (&in, &p);
  g_assert_cmpfloat (p.min_rate_bps, ==, 618750);
  g_assert_cmpfloat (p.weight, ==, 0.0);
  in.fetching = FALSE;                          /* between fragments: nothing */
  player_prefs (&in, &p);
  g_assert_cmpfloat (p.min_rate_bps, ==, 0.0);
  g_assert_cmpfloat (p.weight, ==, 0.0);
  g_assert_cmpint (p.priority, ==, 20);
  in.buffer = PLAYER_BUFFER_LOW;                /* short of media: its share for the next request */
  player_prefs (&in, &p);
  g_assert_cmpfloat (p.min_rate_bps, ==, 0.0);
  g_assert_cmpfloat (p.weight, ==, 2.0);
  in.buffer = PLAYER_BUFFER_UNKNOWN;
  player_prefs (&in, &p);
  g_assert_cmpfloat (p.weight, ==, 2.0);
  /* a full buffer with no minimum known keeps its weight (nothing to hold
   * it to) */
  PlayerInput none = { .min_rate = 0, .priority = VIDEO_FLOW_PRIORITY, .weight = VIDEO_FLOW_WEIGHT,
                       .buffer = PLAYER_BUFFER_FULL, .fetching = TRUE };
  player_prefs (&none, &p);
  g_assert_cmpfloat (p.weight, ==, 1.0);
  /* hlsdemux2's level against its target (30 s): full from 15 s */
  guint64 s30 = 30 * G_GUINT64_CONSTANT (1000000000);
  g_assert_cmpint (player_buffer_of_level (-1, s30), ==, PLAYER_BUFFER_UNKNOWN);
  g_assert_cmpint (player_buffer_of_level (14 * (gint64) 1000000000, s30), ==, PLAYER_BUFFER_LOW);
  g_assert_cmpint (player_buffer_of_level (15 * (gint64) 1000000000, s30), ==, PLAYER_BUFFER_FULL);
  /* no target: PLAYER_DEFAULT_TARGET_NS (10 s) */
  g_assert_cmpint (player_buffer_of_level (4 * (gint64) 1000000000, 0), ==, PLAYER_BUFFER_LOW);
  g_assert_cmpint (player_buffer_of_level (5 * (gint64) 1000000000, 0), ==, PLAYER_BUFFER_FULL);
}

/* The tracer's fetch hold: twice the longer of the RTT and a segment at
 * the minimum, at least PLAYER_FETCH_HOLD_MIN_MS; the slowest case
 * without an RTT or a minimum. */
static void
test_fetch_hold (void)
{
  /* 450k's need (618750 bit/s) on a 55-ms path: the RTT's */
  g_assert_cmpfloat (fabs (player_fetch_hold_ms (55000, 1448, 618750) - 110.0), <, 1e-9);
  /* 60k's need (82500 bit/s) on a 30-ms path: a segment every 140 ms */
  g_assert_cmpfloat (fabs (player_fetch_hold_ms (30000, 1448, 82500) - 2.0 * 8.0 * 1448 / 82.5), <,
                     1e-9);
  /* the lowest variant on a 200-ms path: the fixed hold it was sized for */
  g_assert_cmpfloat (player_fetch_hold_ms (200000, 1448, 82500), ==, PLAYER_FETCH_HOLD_MAX_MS);
  /* a LAN: the floor */
  g_assert_cmpfloat (player_fetch_hold_ms (1000, 1448, 8e6), ==, PLAYER_FETCH_HOLD_MIN_MS);
  /* unknown */
  g_assert_cmpfloat (player_fetch_hold_ms (0, 1448, 618750), ==, PLAYER_FETCH_HOLD_MAX_MS);
  g_assert_cmpfloat (player_fetch_hold_ms (55000, 0, 618750), ==, PLAYER_FETCH_HOLD_MAX_MS);
  g_assert_cmpfloat (player_fetch_hold_ms (55000, 1448, 0), ==, PLAYER_FETCH_HOLD_MAX_MS);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/abr/need", test_need);
  g_test_add_func ("/abr/hold-without-sigma", test_hold_without_sigma);
  g_test_add_func ("/abr/step-up-when-room", test_step_up_when_room);
  g_test_add_func ("/abr/hold-under-sigma", test_hold_under_sigma);
  g_test_add_func ("/abr/after-step-down", test_after_step_down);
  g_test_add_func ("/abr/fall-back-unknown", test_fall_back_unknown);
  g_test_add_func ("/abr/hysteresis", test_hysteresis);
  g_test_add_func ("/abr/empty-ladder", test_empty_ladder);
  g_test_add_func ("/abr/usable-sigma", test_usable_sigma);
  g_test_add_func ("/abr/player-prefs", test_player_prefs);
  g_test_add_func ("/abr/fetch-hold", test_fetch_hold);
  g_test_add_func ("/manifest/hls-master", test_hls_master);
  g_test_add_func ("/manifest/hls-junk", test_hls_junk);
  g_test_add_func ("/manifest/dash", test_dash);
  return g_test_run ();
}
