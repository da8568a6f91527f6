/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* adopt-rules.c — bwssd's rules file (see adopt-rules.h). */
#include <string.h>
#include <bwss/domain.h>
#include "adopt-rules.h"
#include "tool-file.h"

#define DEFAULT_GROUP "default"

static const char *const match_keys[] = { "exe", "unit", "remote-port", "remote-address", NULL };
static const char *const action_keys[] = { "priority", "min-rate", "weight", "share", "adopt",
                                            NULL };

static void
rule_free (gpointer data)
{
  AdoptRule *r = data;
  if (r == NULL)
    return;
  g_free (r->name);
  g_strfreev (r->exe);
  g_strfreev (r->unit);
  if (r->ports)
    g_array_unref (r->ports);
  if (r->masks)
    g_ptr_array_unref (r->masks);
  g_free (r);
}

/* Returns a rule named @name with the built-in preferences: priority 0, no
 * minimum, weight 1, one share per process (what bwss-run gives a program
 * without options). */
static AdoptRule *
rule_new (const char *name)
{
  AdoptRule *r = g_new0 (AdoptRule, 1);
  r->name = g_strdup (name);
  r->prefs = (BwssPrefs) { .priority = 0, .min_rate_bps = 0, .weight = 1 };
  r->share = BWSS_SHARE_PROCESS;
  r->adopt = TRUE;
  return r;
}

AdoptRules *
adopt_rules_builtin (void)
{
  AdoptRules *r = g_new0 (AdoptRules, 1);
  r->rules = g_ptr_array_new_with_free_func (rule_free);
  r->fallback = rule_new (DEFAULT_GROUP);
  return r;
}

void
adopt_rules_free (AdoptRules *r)
{
  if (r == NULL)
    return;
  g_free (r->path);
  g_ptr_array_unref (r->rules);
  rule_free (r->fallback);
  g_free (r);
}

/* Returns the 1-based line of @key in [@group] of @text, or of the group's
 * header if @key is NULL; 0 if not found. */
static int
line_of (const char *text, const char *group, const char *key)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  gboolean in_group = FALSE;
  for (int i = 0; lines[i]; i++) {
    char *l = g_strstrip (lines[i]);
    if (l[0] == '[') {
      char *end = strrchr (l, ']');
      if (end) {
        *end = '\0';
        in_group = g_strcmp0 (l + 1, group) == 0;
        if (in_group && key == NULL)
          return i + 1;
      }
      continue;
    }
    char *eq = strchr (l, '=');
    if (in_group && key && eq) {
      *eq = '\0';
      if (g_strcmp0 (g_strstrip (l), key) == 0)
        return i + 1;
    }
  }
  return 0;
}

/* Where a group is read: the file (its text gives the line numbers), the
 * group, and where the first error goes. */
typedef struct {
  GKeyFile   *kf;
  const char *path, *text, *group;
  GError    **error;
} Src;

/* Sets the error to "PATH:LINE: [GROUP] KEY: 'VALUE' MESSAGE" (the group's
 * line without a @key; no 'VALUE' without a @value), each name and value
 * quoted as tool_file_quote() does.  Returns FALSE. */
static gboolean G_GNUC_PRINTF (4, 5)
fail (const Src *s, const char *key, const char *value, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  int line = line_of (s->text, s->group, key);
  g_autofree char *g = tool_file_quote (s->group, -1);
  g_autofree char *k = key ? tool_file_quote (key, -1) : NULL;
  g_autofree char *v = value ? tool_file_quote (value, -1) : NULL;
  g_set_error (s->error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE, "%s:%d: [%s]%s%s: %s%s%s%s",
               s->path, line, g, k ? " " : "", k ? k : "", v ? "'" : "", v ? v : "", v ? "' " : "", msg);
  return FALSE;
}

/* Returns FALSE, with @error naming the line, if a line of @text is neither
 * blank, a comment, a group header nor "key=value" (GKeyFile's own message
 * does not say which line). */
static gboolean
check_lines (const char *path, const char *text, GError **error)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (int i = 0; lines[i]; i++) {
    const char *l = g_strstrip (lines[i]);
    gboolean ok = l[0] == '\0' || l[0] == '#'
                  || (l[0] == '[' && l[strlen (l) - 1] == ']' && strlen (l) > 2)
                  || (strchr (l, '=') != NULL && l[0] != '=');
    if (!ok) {
      g_autofree char *q = tool_file_quote (l, -1);
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE,
                   "%s:%d: '%s' is neither a [group], a key=value nor a # comment", path, i + 1, q);
      return FALSE;
    }
  }
  return TRUE;
}

/* Returns the ';'-separated list of @key in the group, each item trimmed,
 * empty items refused; NULL with the error set if one is empty. */
static GStrv
get_list (const Src *s, const char *key)
{
  g_auto (GStrv) raw = g_key_file_get_string_list (s->kf, s->group, key, NULL, NULL);
  if (raw == NULL || raw[0] == NULL) {
    fail (s, key, NULL, "an empty list");
    return NULL;
  }
  for (int i = 0; raw[i]; i++)
    if (g_strstrip (raw[i])[0] == '\0') {
      fail (s, key, NULL, "an empty item in the list");
      return NULL;
    }
  return g_steal_pointer (&raw);
}

/* Returns TRUE if @addr is an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
static gboolean
is_v4_mapped (GInetAddress *addr)
{
  static const guint8 prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  return g_inet_address_get_family (addr) == G_SOCKET_FAMILY_IPV6
         && memcmp (g_inet_address_to_bytes (addr), prefix, sizeof prefix) == 0;
}

/* Returns the mask of "ADDRESS" or "ADDRESS/LENGTH" (LENGTH up to the
 * address's bits), or NULL with *@why set if there is more to say than
 * that it does not parse.  Checks the length itself: GLib's parser warns
 * on stderr about a length out of range before it refuses it.  An
 * IPv4-mapped IPv6 address (::ffff:a.b.c.d, /96 and longer) is the IPv4
 * mask it maps: the kernel reports a flow to an IPv4 server over an IPv6
 * socket with such an address, and bwssd matches it as IPv4. */
static GInetAddressMask *
parse_mask (const char *text, const char **why)
{
  *why = NULL;
  g_autofree char *host = g_strdup (text);
  char *slash = strchr (host, '/');
  if (slash)
    *slash = '\0';
  g_autoptr (GInetAddress) addr = g_inet_address_new_from_string (host);
  if (addr == NULL)
    return NULL;
  guint bits = g_inet_address_get_native_size (addr) * 8;
  uint64_t len = bits;
  if (slash && bwss_parse_count (slash + 1, bits, &len) != 0)
    return NULL;
  if (is_v4_mapped (addr)) {
    if (len < 96) {
      *why = "maps IPv4 addresses only from /96 on (::ffff:0:0/96 is every IPv4 address)";
      return NULL;
    }
    g_autoptr (GInetAddress) v4 = g_inet_address_new_from_bytes (g_inet_address_to_bytes (addr) + 12,
                                                                 G_SOCKET_FAMILY_IPV4);
    return g_inet_address_mask_new (v4, (guint) len - 96, NULL);
  }
  return g_inet_address_mask_new (addr, (guint) len, NULL);
}

/* Reads the match keys of the group into @r.  Returns FALSE with the error
 * set. */
static gboolean
read_matches (const Src *s, AdoptRule *r)
{
  if (g_key_file_has_key (s->kf, s->group, "exe", NULL) && (r->exe = get_list (s, "exe")) == NULL)
    return FALSE;
  if (g_key_file_has_key (s->kf, s->group, "unit", NULL) && (r->unit = get_list (s, "unit")) == NULL)
    return FALSE;
  if (g_key_file_has_key (s->kf, s->group, "remote-port", NULL)) {
    g_auto (GStrv) ports = get_list (s, "remote-port");
    if (ports == NULL)
      return FALSE;
    r->ports = g_array_new (FALSE, FALSE, sizeof (guint16));
    for (int i = 0; ports[i]; i++) {
      uint64_t port;
      if (bwss_parse_count (ports[i], 65535, &port) != 0 || port == 0)
        return fail (s, "remote-port", ports[i], "is not a port (1 to 65535)");
      guint16 p = (guint16) port;
      g_array_append_val (r->ports, p);
    }
  }
  if (g_key_file_has_key (s->kf, s->group, "remote-address", NULL)) {
    g_auto (GStrv) addrs = get_list (s, "remote-address");
    if (addrs == NULL)
      return FALSE;
    r->masks = g_ptr_array_new_with_free_func (g_object_unref);
    for (int i = 0; addrs[i]; i++) {
      const char *why = NULL;
      GInetAddressMask *m = parse_mask (addrs[i], &why);
      if (m == NULL)
        return fail (s, "remote-address", addrs[i], "%s",
                     why ? why : "is not an address nor an address/length mask");
      g_ptr_array_add (r->masks, m);
    }
  }
  return TRUE;
}

/* Reads the action keys of the group into @r.  Returns FALSE with the error
 * set. */
static gboolean
read_actions (const Src *s, AdoptRule *r)
{
  g_autofree char *prio = g_key_file_get_value (s->kf, s->group, "priority", NULL);
  g_autofree char *min = g_key_file_get_value (s->kf, s->group, "min-rate", NULL);
  g_autofree char *weight = g_key_file_get_value (s->kf, s->group, "weight", NULL);
  g_autofree char *adopt = g_key_file_get_value (s->kf, s->group, "adopt", NULL);
  g_autofree char *share = g_key_file_get_value (s->kf, s->group, "share", NULL);
  if (prio && bwss_parse_priority (g_strstrip (prio), &r->prefs.priority) != 0)
    return fail (s, "priority", prio, "is not a priority (an integer from %d to %d)", BWSS_PRIORITY_MIN,
                 BWSS_PRIORITY_MAX);
  if (min && bwss_parse_rate (g_strstrip (min), &r->prefs.min_rate_bps) != 0)
    return fail (s, "min-rate", min, "is not a rate (e.g. 500k, 2.5M, 960000)");
  if (weight && bwss_parse_weight (g_strstrip (weight), &r->prefs.weight) != 0)
    return fail (s, "weight", weight, "is not a weight (a decimal number from 0)");
  if (share && bwss_share_parse (g_strstrip (share), &r->share) != 0)
    return fail (s, "share", share, "is neither process, unit nor flow");
  if (adopt) {
    const char *a = g_strstrip (adopt);
    if (g_strcmp0 (a, "true") != 0 && g_strcmp0 (a, "false") != 0)
      return fail (s, "adopt", a, "is neither true nor false");
    r->adopt = g_strcmp0 (a, "true") == 0;
  }
  return TRUE;
}

/* Returns TRUE if @key is one a group may hold. */
static gboolean
key_is_known (const char *key, gboolean is_default)
{
  if (g_strv_contains (action_keys, key))
    return TRUE;
  return !is_default && g_strv_contains (match_keys, key);
}

/* Returns the rule of the group, or NULL with the error set. */
static AdoptRule *
read_group (const Src *s)
{
  gboolean is_default = g_strcmp0 (s->group, DEFAULT_GROUP) == 0;
  g_auto (GStrv) keys = g_key_file_get_keys (s->kf, s->group, NULL, NULL);
  gboolean has_match = FALSE;
  for (int i = 0; keys && keys[i]; i++) {
    if (!key_is_known (keys[i], is_default)) {
      if (is_default && g_strv_contains (match_keys, keys[i])) {
        fail (s, keys[i], NULL, "[default] takes what no rule matched: it has no match keys");
      } else {
        /* the keys named from the tables key_is_known() reads */
        g_autofree char *m = g_strjoinv (", ", (char **) match_keys);
        g_autofree char *a = g_strjoinv (", ", (char **) action_keys);
        fail (s, keys[i], NULL, "unknown key (match: %s; action: %s)", m, a);
      }
      return NULL;
    }
    has_match |= g_strv_contains (match_keys, keys[i]);
  }
  if (!is_default && !has_match) {
    fail (s, NULL, NULL, "a rule needs a match key (exe, unit, remote-port or remote-address)");
    return NULL;
  }
  AdoptRule *r = rule_new (s->group);
  if (!read_matches (s, r) || !read_actions (s, r)) {
    rule_free (r);
    return NULL;
  }
  return r;
}

/* As adopt_rules_load(), from @text (named @path in messages). */
static AdoptRules *
parse (const char *path, const char *text, GError **error)
{
  if (!check_lines (path, text, error))
    return NULL;
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) kerr = NULL;
  if (!g_key_file_load_from_data (kf, text, (gsize) -1, G_KEY_FILE_NONE, &kerr)) {
    g_autofree char *q = tool_file_quote (kerr->message, -1);
    g_set_error (error, G_KEY_FILE_ERROR, kerr->code, "%s: %s", path, q);
    return NULL;
  }
  g_autoptr (AdoptRules) rules = adopt_rules_builtin ();
  rules->path = g_strdup (path);
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  for (int i = 0; groups[i]; i++) {
    Src s = { kf, path, text, groups[i], error };
    AdoptRule *r = read_group (&s);
    if (r == NULL)
      return NULL;
    if (g_strcmp0 (groups[i], DEFAULT_GROUP) == 0) {
      rule_free (rules->fallback);
      rules->fallback = r;
    } else {
      g_ptr_array_add (rules->rules, r);
    }
  }
  return g_steal_pointer (&rules);
}

/* Returns the 1-based line of byte @at of @text. */
static int
line_at (const char *text, gsize at)
{
  int line = 1;
  for (gsize i = 0; i < at; i++)
    line += text[i] == '\n';
  return line;
}

AdoptRules *
adopt_rules_load (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr (GError) ferr = NULL;
  if (!tool_file_read (path, ADOPT_RULES_MAX, &text, &len, &ferr)) {
    g_set_error (error, G_FILE_ERROR, ferr->code, "%s", ferr->message);
    return NULL;
  }
  const char *nul = memchr (text, '\0', len);
  if (nul) {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE,
                 "%s:%d: a NUL byte (a rules file is text)", path, line_at (text, (gsize) (nul - text)));
    return NULL;
  }
  const char *end = NULL;
  if (!g_utf8_validate_len (text, len, &end)) {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_UNKNOWN_ENCODING, "%s:%d: not UTF-8 text",
                 path, line_at (text, (gsize) (end - text)));
    return NULL;
  }
  return parse (path, text, error);
}

char *
adopt_rule_origin (const AdoptRules *rules, const AdoptRule *rule)
{
  if (rule == rules->fallback)
    return g_strdup ("default");
  GString *o = g_string_new ("rule ");
  for (const char *p = rule->name; *p && o->len < BWSS_ORIGIN_MAX - 1; p = g_utf8_next_char (p))
    g_string_append_c (o, *p >= 0x20 && *p < 0x7f ? *p : '?');
  return g_string_free (o, FALSE);
}

/* ---- matching: one predicate per match key; an unset key matches ---- */

static gboolean
exe_matches (const AdoptRule *r, const AdoptSubject *s)
{
  if (r->exe == NULL)
    return TRUE;
  g_autofree char *base = s->exe ? g_path_get_basename (s->exe) : NULL;
  for (int i = 0; r->exe[i]; i++) {
    const char *pat = r->exe[i];
    if (strchr (pat, '/')) {
      if (s->exe && g_pattern_match_simple (pat, s->exe))
        return TRUE;
    } else if ((base && g_pattern_match_simple (pat, base))
               || (s->comm && g_pattern_match_simple (pat, s->comm))) {
      return TRUE;
    }
  }
  return FALSE;
}

static gboolean
unit_matches (const AdoptRule *r, const AdoptSubject *s)
{
  if (r->unit == NULL)
    return TRUE;
  if (s->cgroup == NULL)
    return FALSE;
  g_auto (GStrv) parts = g_strsplit (s->cgroup, "/", -1);
  for (int i = 0; r->unit[i]; i++)
    for (int j = 0; parts[j]; j++)
      if (parts[j][0] && g_pattern_match_simple (r->unit[i], parts[j]))
        return TRUE;
  return FALSE;
}

static gboolean
port_matches (const AdoptRule *r, const AdoptSubject *s)
{
  if (r->ports == NULL)
    return TRUE;
  for (guint i = 0; i < r->ports->len; i++)
    if (g_array_index (r->ports, guint16, i) == s->remote_port)
      return TRUE;
  return FALSE;
}

static gboolean
address_matches (const AdoptRule *r, const AdoptSubject *s)
{
  if (r->masks == NULL)
    return TRUE;
  if (s->remote == NULL)
    return FALSE;
  for (guint i = 0; i < r->masks->len; i++) {
    GInetAddressMask *m = g_ptr_array_index (r->masks, i);
    if (g_inet_address_mask_get_family (m) == g_inet_address_get_family (s->remote)
        && g_inet_address_mask_matches (m, s->remote))
      return TRUE;
  }
  return FALSE;
}

const AdoptRule *
adopt_rules_match (const AdoptRules *r, const AdoptSubject *subject)
{
  for (guint i = 0; i < r->rules->len; i++) {
    const AdoptRule *rule = g_ptr_array_index (r->rules, i);
    if (exe_matches (rule, subject) && unit_matches (rule, subject) && port_matches (rule, subject)
        && address_matches (rule, subject))
      return rule;
  }
  return r->fallback;
}
