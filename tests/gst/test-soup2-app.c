/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-soup2-app.c — a real libsoup-2.4 application plays http through
 * playbin with the plugin installed, and neither it nor the video suffers.
 *
 * libsoup 2.4 and 3 abort a process that has both; the plugin links no
 * libsoup and runs on the process's own (souploader.h).  soup2-player.py
 * is the application (Python, gi's Soup 2.4: libsoup 2.4 in the process
 * and used before GStreamer plays, as in Rhythmbox); this harness runs it
 * in a domain of its own and checks:
 *   - it exits 0 at EOS, its own libsoup-2.4 request said 200;
 *   - the source playbin chose is bwsshttpsrc;
 *   - the process has libsoup 2.4 mapped and never libsoup 3;
 *   - while it plays, its flow is in the domain (its pid, origin
 *     bwsshttpsrc, priority 10) with the minimum the element derives from
 *     the rate the pipeline consumes (the WAV's 1.536 Mbit/s × the
 *     rate-headroom it printed), last seen within MIN_TOLERANCE of it;
 *   - the flow is gone once it has exited;
 *   - then, each a bwsshttpsrc ! fakesink pipeline in the same process, the
 *     paths where the element's libsoup 2.4 code differs from 3's: basic
 *     authentication given (the whole body) and refused (NOT_AUTHORIZED);
 *     HTTPS with an untrusted certificate refused, trusted through
 *     ssl-ca-file, accepted with ssl-strict=false (every byte both times).
 * The domain is suspended (sharing off), as test-adaptive.c's: the check is
 * the element's minimum, learnt from the rate the pipeline consumes, which
 * the element sees only while downstream pushes back, i.e. while the
 * download outruns playback.  On loopback the controller's capacity means
 * nothing, and a flow it holds at one segment of loopback's segment size is
 * clocked by the receiver's delayed acknowledgements (~200 ms): 1.2 to 1.9
 * Mbit/s as the segment size the kernel settled on goes, around the WAV's
 * 1.54 — below it the player never pushes back and no rate is learnt.
 * Suspended, bwssd still lists the flow with the preferences it is given.
 * This harness links no libsoup (libbwss and GLib only).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gio/gio.h>
#include <bwss/domain.h>

#define SECONDS        20                 /* of audio; the download lasts ~8 s (2 MB buffered) */
#define WAV_BPS        (48000.0 * 2 * 16) /* soup2-player.py: 48 kHz, stereo, S16 */
/* the consumption meter starts high (the first window holds the
 * prebuffering burst) and settles on the rate within ~1 % by the time the
 * download ends (measured: 1.788 Mbit/s for 1.775) */
#define MIN_TOLERANCE  0.10

typedef struct {
  GPid          pid;
  volatile gint done;
  gboolean      seen;
  BwssFlowInfo  last;           /* the playback flow's last row while it was there (its first
                                 * flow: the pipelines of the checks come after) */
  guint         samples;
} Watch;

static gpointer
watch_domain (gpointer data)
{
  Watch *w = data;
  BwssDomain *d = NULL;
  while (!g_atomic_int_get (&w->done)) {
    if (d == NULL && bwss_domain_open (NULL, BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER, &d) != 0)
      d = NULL;
    BwssFlowInfo rows[16];
    size_t n = 0;
    if (d && bwss_domain_list_flows (d, rows, G_N_ELEMENTS (rows), &n) == 0) {
      for (size_t i = 0; i < n; i++) {
        if (rows[i].pid != w->pid || (w->seen && rows[i].inode != w->last.inode))
          continue;
        w->seen = TRUE;
        w->last = rows[i];
        w->samples++;
      }
    }
    g_usleep (10000);
  }
  if (d)
    bwss_domain_close (d);
  return NULL;
}

/* The value of "KEY value" in @out, NULL if absent (the last one wins). */
static gchar *
field (const char *out, const char *key)
{
  gchar *found = NULL;
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  gsize klen = strlen (key);
  for (gchar **l = lines; *l; l++) {
    if (strncmp (*l, key, klen) == 0 && (*l)[klen] == ' ') {
      g_free (found);
      found = g_strdup (*l + klen + 1);
    }
  }
  return found;
}

/* bwss_domain_set_suspended(), again while bwssd is too busy to answer
 * (BWSS_EBUSY: a loaded host), within a hang guard of HANG_GUARD_US. */
#define HANG_GUARD_US (20 * G_USEC_PER_SEC)

static int
suspend (BwssDomain *d, gboolean on)
{
  gint64 end = g_get_monotonic_time () + HANG_GUARD_US;
  int err;
  while ((err = bwss_domain_set_suspended (d, on)) == BWSS_EBUSY && g_get_monotonic_time () < end)
    g_usleep (50000);
  return err;
}

static int failures;

#define CHECK(cond, ...) G_STMT_START {                                   \
    if (!(cond)) {                                                        \
      failures++;                                                         \
      fprintf (stderr, "FAIL: " __VA_ARGS__);                             \
      fputc ('\n', stderr);                                               \
    }                                                                     \
  } G_STMT_END

int
main (int argc, char **argv)
{
  const char *player = argc > 1 ? argv[1] : NULL;
  if (player == NULL) {
    fprintf (stderr, "usage: test-soup2-app PATH/soup2-player.py\n");
    return 2;
  }
  g_autofree char *name = g_strdup_printf ("bwss-test-soup2-%d", (int) getpid ());
  g_setenv ("BWSS_DOMAIN", name, TRUE);
  BwssDomain *off = NULL;                /* starts bwssd; sharing off until the end */
  int derr = bwss_domain_open (NULL, 0, &off);
  if (derr == 0)
    derr = suspend (off, true);
  if (derr != 0) {
    fprintf (stderr, "FAIL: cannot open the domain %s and switch sharing off: %s\n", name,
             bwss_strerror (derr));
    return 1;
  }

  g_autofree char *secs = g_strdup_printf ("%d", SECONDS);
  GError *err = NULL;
  GSubprocess *app = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &err,
                                       player, secs, NULL);
  if (app == NULL) {
    fprintf (stderr, "FAIL: cannot run %s: %s\n", player, err->message);
    return 1;
  }
  Watch w = { .pid = (GPid) atoi (g_subprocess_get_identifier (app)) };
  GThread *t = g_thread_new ("watch", watch_domain, &w);
  g_autofree char *out = NULL, *errout = NULL;
  if (!g_subprocess_communicate_utf8 (app, NULL, NULL, &out, &errout, &err)) {
    fprintf (stderr, "FAIL: %s\n", err->message);
    return 1;
  }
  g_atomic_int_set (&w.done, 1);
  g_thread_join (t);
  printf ("%s", out ? out : "");
  if (errout && *errout)
    fprintf (stderr, "application's stderr:\n%s", errout);

  CHECK (g_subprocess_get_if_exited (app) && g_subprocess_get_exit_status (app) == 0,
         "the application did not exit 0 (a signal: %d)",
         g_subprocess_get_if_signaled (app) ? g_subprocess_get_term_sig (app) : 0);
  g_autofree char *result = field (out, "result");
  CHECK (g_strcmp0 (result, "eos") == 0, "playback ended with '%s', not EOS", result ? result : "(nothing)");
  g_autofree char *request = field (out, "soup-request");
  CHECK (g_strcmp0 (request, "200") == 0, "the application's libsoup-2.4 request: '%s'", request ? request : "");
  g_autofree char *source = field (out, "source");
  CHECK (g_strcmp0 (source, "bwsshttpsrc") == 0, "playbin's source is '%s'", source ? source : "(none)");
  g_autofree char *soup2 = field (out, "libsoup2"), *soup3 = field (out, "libsoup3");
  CHECK (g_strcmp0 (soup2, "1") == 0, "libsoup 2.4 not in the application");
  CHECK (g_strcmp0 (soup3, "0") == 0, "libsoup 3 was loaded next to libsoup 2.4");
  static const char *checks[] = { "auth", "auth-refused", "tls-untrusted", "tls-ca-file", "tls-not-strict" };
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  for (gsize i = 0; i < G_N_ELEMENTS (checks); i++) {
    g_autofree char *prefix = g_strdup_printf ("check %s ", checks[i]);
    const char *line = NULL;
    for (gchar **l = lines; *l; l++)
      if (g_str_has_prefix (*l, prefix))
        line = *l;
    CHECK (line && g_str_has_prefix (line + strlen (prefix), "ok "), "%s: %s", checks[i],
           line ? line : "not run");
  }

  CHECK (w.seen, "the application's flow never appeared in the domain");
  if (w.seen) {
    g_autofree char *h = field (out, "rate-headroom");
    double headroom = h ? g_ascii_strtod (h, NULL) : 0;
    double want = WAV_BPS * headroom, got = w.last.stats.prefs.min_rate_bps;
    printf ("domain: %u samples, last: origin %s, priority %d, min %.0f bit/s (want %.0f ± %.0f %%)\n",
            w.samples, w.last.origin, w.last.stats.prefs.priority, got, want, MIN_TOLERANCE * 100);
    CHECK (strcmp (w.last.origin, "bwsshttpsrc") == 0, "the flow's origin is '%s'", w.last.origin);
    CHECK (w.last.stats.prefs.priority == 10, "priority %d", w.last.stats.prefs.priority);
    CHECK (headroom > 1 && fabs (got - want) <= MIN_TOLERANCE * want,
           "the flow's minimum %.0f bit/s, expected %.0f (headroom %g)", got, want, headroom);
  }

  /* gone after the process */
  BwssDomain *d = NULL;
  if (bwss_domain_open (NULL, BWSS_DOMAIN_NO_CREATE | BWSS_DOMAIN_NO_CONTROLLER, &d) == 0) {
    BwssFlowInfo rows[16];
    size_t n = 0;
    CHECK (bwss_domain_list_flows (d, rows, G_N_ELEMENTS (rows), &n) == 0 && n == 0,
           "%zu flows left in the domain", n);
    bwss_domain_close (d);
  }
  suspend (off, false);                  /* and its ".suspended" file gone */
  bwss_domain_close (off);
  g_object_unref (app);
  if (failures)
    fprintf (stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
