/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adopt-rules.h — bwssd's rules file: which preferences an adopted flow gets.
 *
 * A GKeyFile (docs/adopt.md).  Each group but [default] is a rule, tried in
 * the file's order; the first whose every match key matches the flow wins,
 * [default] (or, without one, priority 0, no minimum, weight 1) takes the
 * rest.  Match keys, each a ';'-separated list of which one must match:
 *
 *   key             | matches                                    | example
 *   exe             | the executable's name, or its path with '/' | firefox-esr;/usr/bin/curl
 *   unit            | a component of the process's cgroup path   | steam.service;app-gnome-*
 *   remote-port     | the remote port                            | 443;8080
 *   remote-address  | the remote address, or a CIDR mask         | 192.0.2.7;10.0.0.0/8
 *
 * exe and unit take shell-style globs ('*', '?'); an IPv4-mapped address
 * (::ffff:192.0.2.7, ::ffff:10.0.0.0/104) is the IPv4 address it maps.
 * Action keys: priority, min-rate (bwss_parse_rate: 500k, 2.5M), weight,
 * share (process, the default: the flows of one process share one share of
 * the preferences; unit: those of one systemd unit; flow: each connection
 * its own), and adopt=false (leave matching flows alone).  An unknown key, a bad
 * value, a rule without a match key or a line that is not a group, key or
 * comment refuses the whole file, with one message naming the file, the
 * line and the key, quoting at most TOOL_FILE_QUOTE_MAX bytes of it.
 *
 * The file is read as tool_file_read() reads (no symbolic link followed,
 * no FIFO or device waited for: a regular file only), at most
 * ADOPT_RULES_MAX bytes, UTF-8 text without a NUL byte.  A rule's name is
 * any group name GKeyFile takes (UTF-8 included); the origin a flow it
 * adopts shows (bwss-top) is "rule NAME" in printable ASCII, each other
 * character as '?' (adopt_rule_origin()).
 */
#ifndef BWSS_ADOPT_RULES_H
#define BWSS_ADOPT_RULES_H

#include <glib.h>
#include <gio/gio.h>
#include <bwss/bwss.h>

/* What a rule sees of a flow and its owner. */
typedef struct {
  const char   *exe;           /* /proc/PID/exe, NULL unknown */
  const char   *comm;          /* /proc/PID/comm */
  const char   *cgroup;        /* the cgroup v2 path, NULL unknown */
  GInetAddress *remote;        /* NULL unknown */
  guint16       remote_port;
} AdoptSubject;

typedef struct {
  char      *name;             /* the group's name; "default" */
  BwssPrefs  prefs;
  BwssShare  share;            /* whose flows share the preferences */
  gboolean   adopt;            /* FALSE: adopt=false, leave it alone */
  /* match keys: NULL = not set */
  char     **exe;
  char     **unit;
  GArray    *ports;            /* guint16 */
  GPtrArray *masks;            /* GInetAddressMask */
} AdoptRule;

typedef struct {
  char      *path;             /* the file they came from, NULL built in */
  GPtrArray *rules;            /* AdoptRule, file order, [default] excluded */
  AdoptRule *fallback;         /* [default], or the built-in one */
} AdoptRules;

/* Returns the rules without a file: everything at priority 0, weight 1,
 * one share per process. */
AdoptRules *adopt_rules_builtin (void);

/* Largest rules file, bytes. */
#define ADOPT_RULES_MAX (1024 * 1024)

/* Reads @path.  Returns the rules, or NULL with @error set to one message
 * "FILE:LINE: [GROUP] KEY: what is wrong" (G_KEY_FILE_ERROR), or "FILE: what
 * is wrong" (G_FILE_ERROR: missing, a link, not a regular file, too big). */
AdoptRules *adopt_rules_load (const char *path, GError **error);

void adopt_rules_free (AdoptRules *r);

/* Returns the origin a flow adopted by @rule of @rules is registered with:
 * "default", or "rule NAME" (printable ASCII, other characters as '?', at
 * most BWSS_ORIGIN_MAX - 1 bytes).  g_free() it. */
char *adopt_rule_origin (const AdoptRules *rules, const AdoptRule *rule);

/* Returns the rule that applies to @subject: the first that matches, else
 * the fallback (never NULL). */
const AdoptRule *adopt_rules_match (const AdoptRules *r, const AdoptSubject *subject);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AdoptRules, adopt_rules_free)

#endif
