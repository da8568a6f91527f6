/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-late-cli.c — the bwss-late tool: JSON output and its errors. */
#include <math.h>
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
  /* set by the arrival at 8 s, the first byte at 0 s */
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (o, "required_prebuffer_at_s"), 8.0,
                                  1e-9);
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

/* Counts no trace can have (negative, 2^64, a total beyond 2^53) are errors
 * at their line: before, the first two looped for ages (%llu wrapped them
 * and every packet was judged one by one). */
static void
test_bad_counts (void)
{
  struct { const char *trace; const char *needle; } cases[] = {
    { "0 1\n1 -5\n", ":2:" },
    { "0 1\n1 18446744073709551616\n", ":2:" },
    { "0 1\n1 9007199254740992\n", ":2: the byte total exceeds 2^53" },
    { "0 1\n0x10 5\n", ":2:" },
    { "0 1\n1e3 5\n", ":2:" },
    { "0 1\ninf 5\n", ":2:" },
    { "0 1\n2 5 6\n", ":2:" },
    { "0 1\n2 5\n1 5\n", ":3: time goes backwards" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *path = write_trace (cases[i].trace);
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "--rate", "8k", path, NULL };
    g_assert_cmpint (run (args, &out, &err), ==, 1);
    g_test_message ("%s", err);
    g_assert_nonnull (strstr (err, cases[i].needle));
    g_assert_cmpstr (out, ==, "");
    g_unlink (path);
  }
}

/* Options are decimal and bounded: --end inf / 1e300 printed "inf.0" or a
 * prebuffer of 9.2e12 s with exit status 0 before. */
static void
test_bad_options (void)
{
  g_autofree char *path = write_trace ("0 1\n1 1000\n");
  const char *bad[][2] = { { "--end", "inf" }, { "--end", "1e300" }, { "--end", "0x10" },
                           { "--end", "-1" }, { "--packet-bytes", "010x" }, { "--packet-bytes", "0" },
                           { "--prebuffer", "1e3" }, { "--prebuffer", "nan" } };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++) {
    g_autofree char *out = NULL, *err = NULL;
    const char *args[] = { "--rate", "8k", bad[i][0], bad[i][1], path, NULL };
    g_assert_cmpint (run (args, &out, &err), ==, 2);
    g_assert_nonnull (strstr (err, bad[i][0]));
    g_assert_cmpstr (out, ==, "");
  }
  g_unlink (path);
}

/* Lines are numbered as in the file however long they are (a 600-byte
 * comment counted as three lines before), and a long valid line is read. */
static void
test_long_lines (void)
{
  g_autofree char *comment = g_strnfill (600, 'x');
  g_autofree char *spaces = g_strnfill (300, ' ');
  g_autofree char *text = g_strdup_printf ("0 1\n#%s\n1%s1000\n2 oops\n", comment, spaces);
  g_autofree char *path = write_trace (text);
  g_autofree char *out = NULL, *err = NULL;
  const char *args[] = { "--rate", "8k", path, NULL };
  g_assert_cmpint (run (args, &out, &err), ==, 1);
  g_test_message ("%s", err);
  g_autofree char *where = g_strdup_printf ("%s:4:", path);
  g_assert_nonnull (strstr (err, where));
  g_unlink (path);
}

/* Returns the report of bwss-late on @trace with @args (NULL-terminated, at
 * most 6), parsed. */
static JsonParser *
report_of (const char *trace, const char *const *args)
{
  g_autofree char *path = write_trace (trace);
  const char *argv[8];
  size_t n = 0;
  for (; args[n]; n++)
    argv[n] = args[n];
  argv[n++] = path;
  argv[n] = NULL;
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (run (argv, &out, &err), ==, 0);
  g_unlink (path);
  JsonParser *parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  return parser;
}

static double
member (JsonParser *parser, const char *name)
{
  return json_object_get_double_member (json_node_get_object (json_parser_get_root (parser)),
                                        name);
}

/* Where the required prebuffer is set: at the arrival of the latest packet
 * (the first byte at 1 s: times count from it), at the end of the
 * observation if the packet missing then has waited longer, nowhere if
 * nothing was late. */
static void
test_json_where (void)
{
  /* Δ = 1 s; packet 1 arrives at 3.5 s (2.5 s after the first byte, 1.5 s
   * late), packet 2 at 4 s (1 s late) */
  const char *trace = "0 0\n1 1000\n3.5 1000\n4 1000\n";
  const char *eos[] = { "--rate", "8k", "--eos", NULL };
  g_autoptr (JsonParser) done = report_of (trace, eos);
  g_assert_cmpfloat_with_epsilon (member (done, "required_prebuffer_s"), 1.5, 1e-9);
  g_assert_cmpfloat_with_epsilon (member (done, "required_prebuffer_at_s"), 2.5, 1e-9);
  /* observed to 11 s: packet 3 (due at 3 s after the first byte) still
   * missing 10 s after it, 7 s late */
  const char *open_end[] = { "--rate", "8k", "--end", "11", NULL };
  g_autoptr (JsonParser) waiting = report_of (trace, open_end);
  g_assert_cmpfloat_with_epsilon (member (waiting, "required_prebuffer_s"), 7.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (member (waiting, "required_prebuffer_at_s"), 10.0, 1e-9);
  /* every packet on time */
  g_autoptr (JsonParser) on_time = report_of ("0 1000\n1 1000\n2 1000\n", eos);
  g_assert_cmpfloat (member (on_time, "required_prebuffer_s"), ==, 0.0);
  g_assert_cmpfloat (member (on_time, "required_prebuffer_at_s"), ==, 0.0);
}

/* The output is valid JSON at the extremes the bounds allow. */
static void
test_json_extremes (void)
{
  g_autofree char *path = write_trace ("0 1\n0.000001 9007199254740991\n");
  const char *cases[][8] = {
    { "--rate", "1", "--end", "1000000000000", "--prebuffer", "0,0.00001,1000000000000", NULL },
    { "--rate", "1000000000000000", "--packet-bytes", "1", "--eos", NULL },
    { "--rate", "0.000001", "--packet-bytes", "4294967295", NULL },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
    const char *args[10];
    size_t n = 0;
    for (; cases[i][n]; n++)
      args[n] = cases[i][n];
    args[n++] = path;
    args[n] = NULL;
    g_autofree char *out = NULL, *err = NULL;
    g_assert_cmpint (run (args, &out, &err), ==, 0);
    g_test_message ("%s", out);
    g_autoptr (JsonParser) parser = json_parser_new ();
    g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
    JsonObject *o = json_node_get_object (json_parser_get_root (parser));
    g_assert_true (isfinite (json_object_get_double_member (o, "required_prebuffer_s")));
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
  g_test_add_func ("/late-cli/json-where", test_json_where);
  g_test_add_func ("/late-cli/errors", test_errors);
  g_test_add_func ("/late-cli/bad-counts", test_bad_counts);
  g_test_add_func ("/late-cli/bad-options", test_bad_options);
  g_test_add_func ("/late-cli/long-lines", test_long_lines);
  g_test_add_func ("/late-cli/json-extremes", test_json_extremes);
  return g_test_run ();
}
