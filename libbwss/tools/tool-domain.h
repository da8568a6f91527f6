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

#endif
