/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tool-domain.h — the domain name a tool runs on, checked before anything
 * touches a domain, and the paths of the domain's files (asked of
 * bwss_domain_path(): the runtime directory is the library's to say). */
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

/* Returns NULL if the user's runtime directory is usable, else one sentence
 * naming the directory refused and why (g_free() it). */
char *tool_domain_runtime_problem (void);

/* Returns the path of the domain's file @suffix (".sock" bwssd's socket,
 * ".bwssd.lock" its lock) for the domain in force, or NULL
 * if the name or the runtime directory is bad (g_free() it). */
char *tool_domain_path (const char *opt, const char *suffix);

#endif
