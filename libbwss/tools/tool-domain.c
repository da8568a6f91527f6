/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tool-domain.c — see tool-domain.h. */
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
tool_domain_bwssd_status (const char *opt)
{
  g_autofree char *name = tool_domain_name (opt);
  return g_strdup_printf ("/dev/shm/%s.bwssd", name);
}
