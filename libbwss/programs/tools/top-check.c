/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* top-check.c — `bwss-top --check` (top-check.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <gmodule.h>
#include "../sockd/sockd-proto.h"
#include "sys.h"
#include "top-check.h"

/* The library GStreamer players load; opened at run time only. */
#define GST_LIBRARY "libgstreamer-1.0.so.0"
/* Our element, and the one it must outrank for playbin to pick it. */
#define OUR_SOURCE  "bwsshttpsrc"
#define SOUP_SOURCE "souphttpsrc"

typedef struct {
  gboolean ok;
  char    *fix;                        /* the command that fixes it, if not ok */
} Part;

/* Where the rows go: gathered, to be printed under the verdict. */
static FILE *rows_to;

static void
row (const char *name, gboolean ok, const char *what)
{
  fprintf (rows_to, "  %-11s %-3s %s\n", name, ok ? "ok" : "NO", what);
}

/* Returns the output of `systemctl --user is-enabled bwssd` ("enabled",
 * "disabled", "masked", ...), or NULL if there is no user manager to ask or
 * no such unit. */
static char *
unit_state (void)
{
  const char *rt = g_getenv ("XDG_RUNTIME_DIR");
  g_autofree char *manager = rt ? g_build_filename (rt, "systemd", "private", NULL) : NULL;
  if (manager == NULL || !g_file_test (manager, G_FILE_TEST_EXISTS))
    return NULL;                       /* no systemd user manager for this session */
  const char *argv[] = { "systemctl", "--user", "is-enabled", "bwssd.service", NULL };
  g_autofree char *out = NULL;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                     NULL, NULL, &out, NULL, NULL, NULL) || out == NULL)
    return NULL;
  g_strstrip (out);
  return out[0] && !strchr (out, ' ') ? g_steal_pointer (&out) : NULL;
}

/* bwssd: running for this domain, or the command that starts it. */
static Part
check_bwssd (const char *domain, gboolean named, JsonObject *st, const char *runtime_problem)
{
  if (runtime_problem) {
    row ("bwssd", FALSE, runtime_problem);
    return (Part) { FALSE, g_strdup ("(fix the runtime directory above, then log in again)") };
  }
  if (st) {
    g_autofree char *what = g_strdup_printf ("running, pid %" G_GINT64_FORMAT ", domain %s",
                                             json_object_get_int_member_with_default (st, "pid", 0),
                                             domain);
    row ("bwssd", TRUE, what);
    return (Part) { TRUE, NULL };
  }
  g_autofree char *state = unit_state ();
  g_autofree char *what = NULL;
  char *fix;
  if (state == NULL) {
    what = g_strdup_printf ("not running for domain %s (no systemd user session, or no unit installed)",
                            domain);
    fix = named ? g_strdup_printf ("bwssd --domain %s", domain) : g_strdup ("bwssd");
  } else if (g_str_equal (state, "masked")) {
    what = g_strdup ("not running: its user unit is masked (you opted out)");
    fix = g_strdup ("systemctl --user unmask bwssd && systemctl --user start bwssd");
  } else if (g_str_equal (state, "enabled")) {
    what = g_strdup ("not running, though its user unit is enabled (journalctl --user -u bwssd says why)");
    fix = g_strdup ("systemctl --user restart bwssd");
  } else {
    what = g_strdup_printf ("not running: its user unit is %s", state);
    fix = g_strdup ("systemctl --user enable --now bwssd");
  }
  row ("bwssd", FALSE, what);
  return (Part) { FALSE, fix };
}

/* Returns TRUE if bwss-sockd's socket accepts a connection (it is hung up
 * at once: bwss-sockd takes that silently). */
static gboolean
sockd_reachable (void)
{
  int s = sock_unix_connect (BWSS_SOCKD_PATH, 0);
  if (s >= 0)
    close (s);
  return s >= 0;
}

/* What the live bwssd says it can adopt (its status's "adoption", the
 * sentence of adopt_proc_capability()), and bwss-sockd where Yama needs it. */
static Part
check_adoption (JsonObject *st)
{
  int scope = proc_yama_scope ();   /* -1: no Yama; 3 if unreadable */
  Part p = { TRUE, NULL };
  if (st) {
    const char *adoption = json_object_get_string_member_with_default (st, "adoption", "?");
    /* adopt-proc.c's sentences: "cannot adopt ..." (nothing), "can adopt
     * only the flows of its own descendants ..." (Yama 1 without the helper) */
    gboolean ok = !g_str_has_prefix (adoption, "cannot adopt") && !g_str_has_prefix (adoption, "can adopt only");
    row ("adoption", ok, adoption);
    if (!ok) {
      p.ok = FALSE;
      p.fix = scope == 1 ? g_strdup ("sudo systemctl enable --now bwss-sockd.socket && systemctl --user restart bwssd")
                         : g_strdup_printf ("bwss-run -- COMMAND   (for each download: Yama ptrace_scope %d "
                                            "lets no daemon adopt; docs/adopt.md)", scope);
    }
  } else {
    row ("adoption", FALSE, "unknown: no bwssd");
    p.ok = FALSE;
  }
  if (scope != 1) {
    g_autofree char *why = scope < 0 ? g_strdup ("not needed (no Yama in this kernel)")
                                     : g_strdup_printf ("not needed (Yama ptrace_scope %d)", scope);
    row ("bwss-sockd", TRUE, why);
    return p;
  }
  gboolean reach = sockd_reachable ();
  row ("bwss-sockd", reach, reach ? "reachable at " BWSS_SOCKD_PATH " (Yama ptrace_scope 1 needs it)"
                                  : "not reachable at " BWSS_SOCKD_PATH " (Yama ptrace_scope 1 needs it)");
  if (!reach && p.ok) {
    p.ok = FALSE;
    p.fix = g_strdup ("sudo systemctl enable --now bwss-sockd.socket && systemctl --user restart bwssd");
  }
  return p;
}

/* The few GStreamer calls made, found at run time. */
typedef struct {
  gboolean (*init_check) (int *argc, char ***argv, GError **error);
  gpointer (*factory_find) (const char *name);
  guint    (*get_rank) (gpointer feature);
  void     (*unref) (gpointer object);
} Gst;

/* Returns the rank of element @name, or -1 if GStreamer has no such
 * element. */
static gint64
rank_of (const Gst *gst, const char *name)
{
  gpointer f = gst->factory_find (name);
  if (f == NULL)
    return -1;
  gint64 rank = gst->get_rank (f);
  gst->unref (f);
  return rank;
}

/* The plugin: found by GStreamer and ranked above souphttpsrc. */
static Part
check_plugin (void)
{
  GModule *m = g_module_open (GST_LIBRARY, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  if (m == NULL) {
    row ("plugin", TRUE, "no GStreamer installed (no GStreamer player to protect)");
    return (Part) { TRUE, NULL };
  }
  Gst gst;
  g_autoptr (GError) error = NULL;
  if (!g_module_symbol (m, "gst_init_check", (gpointer *) &gst.init_check)
      || !g_module_symbol (m, "gst_element_factory_find", (gpointer *) &gst.factory_find)
      || !g_module_symbol (m, "gst_plugin_feature_get_rank", (gpointer *) &gst.get_rank)
      || !g_module_symbol (m, "gst_object_unref", (gpointer *) &gst.unref)
      || !gst.init_check (NULL, NULL, &error)) {
    g_autofree char *what = g_strdup_printf ("GStreamer cannot start: %s",
                                             error ? error->message : g_module_error ());
    row ("plugin", FALSE, what);
    return (Part) { FALSE, g_strdup ("gst-inspect-1.0 " OUR_SOURCE "   (says what GStreamer lacks)") };
  }
  /* GStreamer stays loaded (its threads and registry live until exit) */
  gint64 ours = rank_of (&gst, OUR_SOURCE), soup = rank_of (&gst, SOUP_SOURCE);
  if (ours < 0) {
    row ("plugin", FALSE, OUR_SOURCE " not found: GStreamer players download with " SOUP_SOURCE " unprotected");
    return (Part) { FALSE, g_strdup ("sudo apt install gstreamer1.0-bwss") };
  }
  g_autofree char *what = soup < 0
    ? g_strdup_printf (OUR_SOURCE " rank %" G_GINT64_FORMAT " (no " SOUP_SOURCE "): players use it", ours)
    : g_strdup_printf (OUR_SOURCE " rank %" G_GINT64_FORMAT " %s " SOUP_SOURCE " rank %" G_GINT64_FORMAT
                       ": %s", ours, ours > soup ? ">" : "<=", soup,
                       ours > soup ? "players use it" : "players pick " SOUP_SOURCE ", unprotected");
  gboolean ok = soup < 0 || ours > soup;
  row ("plugin", ok, what);
  if (ok)
    return (Part) { TRUE, NULL };
  const char *env = g_getenv ("GST_PLUGIN_FEATURE_RANK");
  return (Part) { FALSE, g_strdup (env && strstr (env, OUR_SOURCE) ? "unset GST_PLUGIN_FEATURE_RANK"
                                   : "sudo apt install --reinstall gstreamer1.0-bwss") };
}

int
top_check (const char *domain, gboolean named, JsonObject *bwssd, const char *runtime_problem)
{
  /* the parts first (each prints its row), the verdict on the first line:
   * gather the rows, then print */
  g_autofree char *buf = NULL;
  size_t len = 0;
  rows_to = open_memstream (&buf, &len);
  if (rows_to == NULL)
    rows_to = stdout;                  /* no memory: rows before the verdict */
  Part parts[3] = { check_bwssd (domain, named, bwssd, runtime_problem), check_adoption (bwssd), check_plugin () };
  if (rows_to != stdout)
    fclose (rows_to);
  const Part *failed = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (parts) && failed == NULL; i++)
    if (!parts[i].ok)
      failed = &parts[i];
  printf ("bwss protection: %s\n", failed ? "OFF" : "ON");
  fputs (buf ? buf : "", stdout);
  if (failed && failed->fix)
    printf ("fix: %s\n", failed->fix);
  fflush (stdout);
  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    g_free (parts[i].fix);
  return failed ? TOP_CHECK_OFF : 0;
}
