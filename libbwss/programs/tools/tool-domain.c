/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tool-domain.c — see tool-domain.h. */
#include <limits.h>
#include <unistd.h>
#include <glib.h>
#include <bwss/domain.h>
#include "tool-domain.h"

char *
tool_domain_name_problem (const char *opt)
{
  const char *what = opt ? "--domain" : "BWSS_DOMAIN";
  const char *name = opt ? opt : g_getenv ("BWSS_DOMAIN");
  if (name == NULL || bwss_domain_check_name (name) == BWSS_OK)
    return NULL;
  return g_strdup_printf ("%s: '%s' is not a domain name (1 to %d letters, digits, '.', '_' or '-', "
                          "not starting with '.')", what, name, BWSS_DOMAIN_NAME_MAX);
}

char *
tool_domain_name (const char *opt)
{
  const char *name = opt ? opt : g_getenv ("BWSS_DOMAIN");
  return name ? g_strdup (name) : g_strdup_printf ("bwss-%u", (unsigned) geteuid ());
}

char *
tool_domain_runtime_problem (void)
{
  char dir[PATH_MAX];
  int err = bwss_runtime_dir (dir, sizeof dir);
  if (err == 0)
    return NULL;
  if (err == BWSS_EPERM)
    return g_strdup_printf ("the runtime directory %s is not a directory of this user closed to "
                            "others (mode 0700), or another user can replace it: refusing to use it",
                            dir);
  return g_strdup_printf ("the runtime directory %s cannot be made: %s", dir, bwss_strerror (err));
}

char *
tool_domain_path (const char *opt, const char *suffix)
{
  char path[PATH_MAX];
  g_autofree char *name = tool_domain_name (opt);
  if (bwss_domain_path (name, suffix, path, sizeof path) != 0)
    return NULL;
  return g_strdup (path);
}
