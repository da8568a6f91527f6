/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-late-cli.c — the bwss-late tool: JSON output and its errors. */
#include <glib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

static const char *tool;

/* Runs bwss-late with @args; returns its exit status, stdout in *out. */
static int
run (const char *const *args, char **out, char **err)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) tool);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add (argv, (gpointer) *a);
  g_ptr_array_add (argv, NULL);
  int status = -1;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               out, err, &status, &error));
  g_ptr_array_free (argv, TRUE);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static char *
write_trace (const char *text)
{
  char *path = NULL;
  int fd = g_file_open_tmp ("bwss-late-XXXXXX", &path, NULL);
  g_assert_cmpint (fd, >=, 0);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  close (fd);
  return path;
}

/* A stall: 4 packets on time, then 5 more at once at 8 s (Δ = 1 s). */
static void
test_json (void)
{
  g_autofree char *path = write_trace ("# t bytes\n0 1\n0.5 999\n1.5 1000\n2.5 1000\n3.5 1000\n8 5000\n");
  g_autofree char *out = NULL, *err = NULL;
  const char *args[] = { "--rate", "8k", "--eos", path, NULL };
  g_assert_cmpint (run (args, &out, &err), ==, 0);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  JsonObject *o = json_node_get_object (json_parser_get_root (parser));
  /* packets 4..8 arrive at 8 s: lateness 4, 3, 2, 1, 0 */
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (o, "required_prebuffer_s"), 4.0, 1e-9);
  g_assert_cmpint (json_object_get_int_member (o, "packets"), ==, 9);
  JsonObject *lf = json_object_get_object_member (o, "late_fraction");
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (lf, "0.5"), 4.0 / 9.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (lf, "2"), 2.0 / 9.0, 1e-9);
  g_assert_cmpfloat (json_object_get_double_member (lf, "8"), ==, 0.0);
  g_unlink (path);
}

static void
test_errors (void)
{
  g_autofree char *path = write_trace ("0 1\n1 oops\n");
  struct { const char *args[6]; const char *needle; int status; } cases[] = {
    { { "--rate", "fast", "x", NULL }, "--rate", 2 },
    { { "x", NULL }, "--rate is required", 2 },
    { { "--rate", "8k", "--prebuffer", "1,-2", "x", NULL }, "--prebuffer", 2 },
    { { "--rate", "8k", NULL }, "TRACE", 2 },
    { { "--rate", "8k", "/nonexistent/trace", NULL }, "/nonexistent/trace", 1 },
    { { "--rate", "8k", path, NULL }, ":2:", 1 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *out = NULL, *err = NULL;
    g_assert_cmpint (run (cases[i].args, &out, &err), ==, cases[i].status);
    g_assert_nonnull (strstr (err, cases[i].needle));
    g_assert_cmpstr (out, ==, "");
  }
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tool = g_getenv ("BWSS_LATE");
  g_assert_nonnull (tool);
  g_test_add_func ("/late-cli/json", test_json);
  g_test_add_func ("/late-cli/errors", test_errors);
  return g_test_run ();
}
