/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-rules.c — bwssd's rules file (libbwss/programs/bwssd/adopt-rules.c) read the
 * way bwssd reads it (adopt_rules_load() on a file), against an oracle:
 *
 * - a file it accepts gives rules a flow can be matched against: every rule
 *   named, not [default], with at least one match key and no empty list,
 *   preferences that bwss_prefs_check() accepts, and a [default] without
 *   match keys; matching any subject returns one of these rules;
 * - nothing it reads makes GLib warn (warnings abort here);
 * - a file it refuses gives one message, on one line, that starts with the
 *   file's name and, where it blames a value, a line number of the file
 *   (1 or more) and the key's group; no message is longer than the name
 *   and a few quotes of TOOL_FILE_QUOTE_MAX bytes, however long the line;
 * - a file with a NUL byte or invalid UTF-8 is refused, with its line;
 * - every accepted rule's origin (adopt_rule_origin(), what bwssd registers
 *   its flows with) is one the domain takes: 1 to BWSS_ORIGIN_MAX - 1
 *   printable ASCII characters, so `--check` and the daemon agree.
 *
 * Input: the file's bytes, written to a regular file (the loader follows no
 * link: not /proc/self/fd/N).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bwss/domain.h>
#include "adopt-rules.h"
#include "tool-file.h"

const char fuzz_target_name[] = "rules";
const char *const fuzz_dictionary[] = {
  "[default]", "[x]", "\n", "=", ";", "#", "exe=", "unit=", "remote-port=", "remote-address=",
  "priority=", "min-rate=", "weight=", "adopt=", "true", "false", "500k", "2.5M", "-10",
  "65535", "65536", "0", "::1", "10.0.0.0/8", "/33", "*", "?", "\\", "[de]", " ", "nan",
  "::ffff:", "::ffff:10.0.0.0/104", "/95", "\xc3\xa9", "\xff", "[vid\xc3\xa9o]", NULL,
};

#define CHECK(cond) do { if (!(cond)) { fprintf (stderr, "fuzz-rules: not %s\n", #cond); abort (); } } while (0)

/* Checks what an accepted rule must be. */
static void
check_rule (const AdoptRule *r, gboolean is_default)
{
  CHECK (r != NULL && r->name != NULL && r->name[0] != '\0');
  CHECK (bwss_prefs_check (&r->prefs) == BWSS_OK);
  gboolean has_match = r->exe || r->unit || r->ports || r->masks;
  CHECK (is_default ? !has_match : has_match);
  CHECK (is_default == (strcmp (r->name, "default") == 0));
  CHECK (r->exe == NULL || r->exe[0] != NULL);
  CHECK (r->unit == NULL || r->unit[0] != NULL);
  CHECK (r->ports == NULL || r->ports->len > 0);
  CHECK (r->masks == NULL || r->masks->len > 0);
  for (guint i = 0; r->ports && i < r->ports->len; i++)
    CHECK (g_array_index (r->ports, guint16, i) != 0);
}

/* Checks the origin flows of @r are registered with. */
static void
check_origin (const AdoptRules *rules, const AdoptRule *r)
{
  g_autofree char *o = adopt_rule_origin (rules, r);
  size_t n = strlen (o);
  CHECK (n >= 1 && n < BWSS_ORIGIN_MAX);
  for (size_t i = 0; i < n; i++)
    CHECK (o[i] >= 0x20 && o[i] < 0x7f);
}

/* Matches a few subjects; the answer is always one of @rules'. */
static void
check_matching (const AdoptRules *rules)
{
  g_autoptr (GInetAddress) v4 = g_inet_address_new_from_string ("10.1.2.3");
  g_autoptr (GInetAddress) v6 = g_inet_address_new_from_string ("::1");
  const AdoptSubject subjects[] = {
    { .exe = "/usr/bin/curl", .comm = "curl", .cgroup = "/user.slice/app.slice/x.service",
      .remote = v4, .remote_port = 443 },
    { .exe = NULL, .comm = "x", .cgroup = NULL, .remote = v6, .remote_port = 22 },
    { .exe = "/", .comm = "", .cgroup = "/", .remote = NULL, .remote_port = 0 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (subjects); i++) {
    const AdoptRule *m = adopt_rules_match (rules, &subjects[i]);
    gboolean known = m == rules->fallback;
    for (guint j = 0; !known && j < rules->rules->len; j++)
      known = m == g_ptr_array_index (rules->rules, j);
    CHECK (known);
  }
}

static char input_dir[PATH_MAX], input_path[PATH_MAX + 16];

static void
remove_input (void)
{
  unlink (input_path);
  rmdir (input_dir);
}

/* The file the input is written to: a regular file in a directory of our
 * own, in memory where there is /dev/shm (a disk would make each input a
 * write), removed at exit. */
static const char *
input_file (int *fd)
{
  static int file = -1;
  if (file < 0) {
    snprintf (input_dir, sizeof input_dir, "/dev/shm/fuzz-rules-XXXXXX");
    if (mkdtemp (input_dir) == NULL) {
      g_autofree char *dir = g_dir_make_tmp ("fuzz-rules-XXXXXX", NULL);
      if (dir == NULL)
        abort ();
      snprintf (input_dir, sizeof input_dir, "%s", dir);
    }
    snprintf (input_path, sizeof input_path, "%s/rules.conf", input_dir);
    file = open (input_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (file < 0)
      abort ();
    atexit (remove_input);
  }
  *fd = file;
  return input_path;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_log_set_always_fatal (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL);
  int fd;
  const char *path = input_file (&fd);
  if (ftruncate (fd, 0) != 0 || (size && pwrite (fd, data, size, 0) != (ssize_t) size))
    abort ();
  GError *error = NULL;
  AdoptRules *rules = adopt_rules_load (path, &error);
  gboolean text = memchr (data, 0, size) == NULL && g_utf8_validate_len ((const char *) data, size, NULL);
  if (rules) {
    CHECK (text);
    CHECK (error == NULL && g_strcmp0 (rules->path, path) == 0);
    check_rule (rules->fallback, TRUE);
    check_origin (rules, rules->fallback);
    for (guint i = 0; i < rules->rules->len; i++) {
      check_rule (g_ptr_array_index (rules->rules, i), FALSE);
      check_origin (rules, g_ptr_array_index (rules->rules, i));
    }
    check_matching (rules);
    adopt_rules_free (rules);
  } else {
    CHECK (error != NULL && error->message != NULL);
    const char *m = error->message;
    CHECK (g_str_has_prefix (m, path) && m[strlen (path)] == ':');
    CHECK (strchr (m, '\n') == NULL);
    CHECK (strlen (m) < strlen (path) + 3 * TOOL_FILE_QUOTE_MAX + 200);
    if (g_error_matches (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE) || !text) {
      char *end = NULL;
      long line = strtol (m + strlen (path) + 1, &end, 10);
      CHECK (line >= 1 && end[0] == ':');
      if (text)
        CHECK (strstr (end, ": [") == end);
    }
    g_error_free (error);
  }
  return 0;
}
