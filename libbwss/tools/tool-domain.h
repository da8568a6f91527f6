/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tool-domain.h — the domain name a tool runs on, checked before anything
 * touches a domain. */
#ifndef BWSS_TOOL_DOMAIN_H
#define BWSS_TOOL_DOMAIN_H

/* Returns NULL if the domain name in force is valid (@opt from --domain if
 * given, else $BWSS_DOMAIN if set, else the user's own), else a message
 * naming where the bad name came from (g_free() it).  An empty name is bad:
 * it never means the default. */
char *tool_domain_name_problem (const char *opt);

/* Returns the domain name in force (@opt, else $BWSS_DOMAIN, else
 * "bwss-<euid>"), checked by tool_domain_name_problem() first. */
char *tool_domain_name (const char *opt);

/* Returns the path of bwssd's status file for the domain in force: next to
 * the domain's segment, "/dev/shm/<name>.bwssd" (g_free() it). */
char *tool_domain_bwssd_status (const char *opt);

#endif
