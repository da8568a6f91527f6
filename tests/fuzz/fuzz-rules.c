/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-rules.c — bwssd's rules file (libbwss/bwssd/adopt-rules.c) read the
 * way bwssd reads it (adopt_rules_load() on a file), against an oracle:
 *
 * - a file it accepts gives rules a flow can be matched against: every rule
 *   named, not [default], with at least one match key and no empty list,
 *   preferences that bwss_prefs_check() accepts, and a [default] without
 *   match keys; matching any subject returns one of these rules;
 * - nothing it reads makes GLib warn (warnings abort here);
 * - a file it refuses gives one message, on one line, that starts with the
 *   file's name and, where it blames a value, a line number of the file
 *   (1 or more) and the key's group.
 *
 * Input: the file's bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "adopt-rules.h"

const char fuzz_target_name[] = "rules";
const char *const fuzz_dictionary[] = {
  "[default]", "[x]", "\n", "=", ";", "#", "exe=", "unit=", "remote-port=", "remote-address=",
  "priority=", "min-rate=", "weight=", "adopt=", "true", "false", "500k", "2.5M", "-10",
  "65535", "65536", "0", "::1", "10.0.0.0/8", "/33", "*", "?", "\\", "[de]", " ", "nan", NULL,
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

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_log_set_always_fatal (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL);
  int fd = memfd_create ("rules", MFD_CLOEXEC);
  if (fd < 0 || (size && write (fd, data, size) != (ssize_t) size))
    abort ();
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  GError *error = NULL;
  AdoptRules *rules = adopt_rules_load (path, &error);
  if (rules) {
    CHECK (error == NULL && g_strcmp0 (rules->path, path) == 0);
    check_rule (rules->fallback, TRUE);
    for (guint i = 0; i < rules->rules->len; i++)
      check_rule (g_ptr_array_index (rules->rules, i), FALSE);
    check_matching (rules);
    adopt_rules_free (rules);
  } else {
    CHECK (error != NULL && error->message != NULL);
    const char *m = error->message;
    CHECK (g_str_has_prefix (m, path) && m[strlen (path)] == ':');
    CHECK (strchr (m, '\n') == NULL);
    if (g_error_matches (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE)) {
      char *end = NULL;
      long line = strtol (m + strlen (path) + 1, &end, 10);
      CHECK (line >= 1 && end[0] == ':' && strstr (end, ": [") == end);
    }
    g_error_free (error);
  }
  close (fd);
  return 0;
}
