/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* adopter.c — bwssd's adoption of the user's TCP flows (see adopter.h). */
#include <errno.h>
#include <sys/socket.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include "adopt-ledger.h"
#include "adopt-proc.h"
#include "adopter.h"
#include "sys.h"
#include "tool-json.h"

/* The ledger is swept for a dead daemon's records this often, at a scan
 * (a flow it left is back within 2 s of its death), and a socket another
 * bwssd held is looked at again this often.  Less a scan's jitter: the
 * idle scans come ADOPT_IDLE_SCAN_US apart, and each of them sweeps. */
#define SWEEP_US (G_USEC_PER_SEC - ADOPT_SCAN_MS * 1000 / 2)

/* A flow bwssd holds: a duplicate of its owner's socket. */
typedef struct {
  guint64       inode;
  pid_t         pid;           /* the owner */
  int           owner_fd;      /* in the owner's fd table */
  CtlFlow      *flow;          /* the controller's, on bwssd's duplicate of the socket */
  char         *rule;          /* the rule that gave its preferences */
  char         *exe, *comm, *cgroup;
  GInetAddress *remote;
  guint16       port;
} Adopted;

/* A socket bwssd left alone, and why (until it closes; or, if another
 * bwssd holds it, until that one lets it go). */
typedef struct {
  pid_t    pid;
  char    *comm;
  char     remote[64];
  char    *reason;
  gboolean elsewhere;          /* another bwssd holds it: looked at again */
  gint64   next_look;          /* ... at this time (monotonic µs) */
} Refused;

struct Adopter {
  Ctl           *ctl;
  AdoptWatchdog *watchdog;
  AdoptLedger   *ledger;
  AdoptRules    *rules;
  char          *capability;
  GHashTable    *adopted;      /* inode → Adopted */
  GHashTable    *refused;      /* inode → Refused */
  GHashTable    *told;         /* "pid reason" already said on stderr */
  KnobDump       dump;         /* this scan's sockets, in inode order (knob_dump_find()) */
  KnobDump       last;         /* ... the last scan's: the bytes each had received then */
  gint64         next_sweep;    /* monotonic µs */
};

/* A number as the tables hold one (an inode, a byte count). */
static guint64 *
u64_new (guint64 v)
{
  return g_memdup2 (&v, sizeof v);
}

static void
adopted_free (gpointer data)
{
  Adopted *a = data;
  g_free (a->rule);
  g_free (a->exe);
  g_free (a->comm);
  g_free (a->cgroup);
  g_clear_object (&a->remote);
  g_free (a);
}

static void
refused_free (gpointer data)
{
  Refused *r = data;
  g_free (r->comm);
  g_free (r->reason);
  g_free (r);
}

/* The remote end of the socket @k as sock_diag names it: an IPv4-mapped
 * IPv6 address (::ffff:a.b.c.d) as the IPv4 address it maps, as the rules
 * match it. */
static void
remote_of (const KnobInfo *k, GInetAddress **addr, guint16 *port)
{
  static const guint8 mapped[12] = { [10] = 0xff, [11] = 0xff };
  const guint8 *b = (const guint8 *) k->id.idiag_dst;
  gboolean in_v6 = k->family == AF_INET6 && memcmp (b, mapped, sizeof mapped) == 0;
  *addr = g_inet_address_new_from_bytes (in_v6 ? b + 12 : b, k->family == AF_INET || in_v6
                                         ? G_SOCKET_FAMILY_IPV4 : G_SOCKET_FAMILY_IPV6);
  *port = g_ntohs (k->id.idiag_dport);
}

static AdoptSubject
subject_of (const Adopted *a)
{
  return (AdoptSubject) { .exe = a->exe, .comm = a->comm, .cgroup = a->cgroup,
                          .remote = a->remote, .remote_port = a->port };
}

/* Says @what about @pid on stderr, once per pid and message. */
static void
tell_once (Adopter *ad, pid_t pid, const char *comm, const char *what)
{
  g_autofree char *key = g_strdup_printf ("%d %s", (int) pid, what);
  if (g_hash_table_contains (ad->told, key))
    return;
  g_printerr ("bwssd: not adopting the flows of %s[%d]: %s\n", comm ? comm : "?", (int) pid, what);
  g_hash_table_add (ad->told, g_steal_pointer (&key));
}

static Refused *
refuse (Adopter *ad, guint64 inode, pid_t pid, const char *comm, const char *remote, const char *why)
{
  Refused *r = g_new0 (Refused, 1);
  r->pid = pid;
  r->comm = g_strdup (comm ? comm : "?");
  g_strlcpy (r->remote, remote, sizeof r->remote);
  r->reason = g_strdup (why);
  g_hash_table_replace (ad->refused, u64_new (inode), r);
  return r;
}

/* Gives adopted flow @a back: out of the controller (which restores its
 * clamp and closes its duplicate), its record removed from the ledger.
 * Does not remove it from the table. */
static void
give_back (Adopter *ad, Adopted *a)
{
  if (a->flow)
    ctl_remove (ad->ctl, a->flow);
  a->flow = NULL;
  adopt_ledger_release (ad->ledger, a->inode);
}

/* Puts @a's flow in the group @rule says (share=): a unit the owner has
 * not (no cgroup v2) leaves it alone, said once per flow. */
static void
share_as (Adopter *ad, Adopted *a, const AdoptRule *rule)
{
  int err = ctl_set_share (ad->ctl, a->flow, rule->share);
  if (err != 0)
    g_message ("pid %d: share=%s: %s; its flow has a share of its own", (int) a->pid,
               bwss_share_name (rule->share), bwss_strerror (err));
}

/* Registers the duplicate @fd of @a's socket (taken: closed on failure
 * too) with the preferences of @rule.  Returns 0 or a BWSS_E code. */
static int
register_with (Adopter *ad, Adopted *a, const AdoptRule *rule, int fd)
{
  g_autofree char *origin = adopt_rule_origin (ad->rules, rule);
  int err = ctl_add (ad->ctl, fd, &rule->prefs, origin, a->pid, getpid (), &a->flow);
  if (err == 0) {
    share_as (ad, a, rule);
    g_free (a->rule);
    a->rule = g_strdup (rule->name);
  }
  return err;
}

Adopter *
adopter_new (Ctl *ctl, AdoptWatchdog *watchdog, AdoptLedger *ledger, AdoptRules *rules,
             const char *capability)
{
  Adopter *ad = g_new0 (Adopter, 1);
  ad->ctl = ctl;
  ad->watchdog = watchdog;
  ad->ledger = ledger;
  ad->rules = rules;
  ad->capability = g_strdup (capability);
  ad->adopted = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, adopted_free);
  ad->refused = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, refused_free);
  ad->told = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return ad;
}

void
adopter_set_rules (Adopter *ad, AdoptRules *rules)
{
  adopt_rules_free (ad->rules);
  ad->rules = rules;
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, ad->adopted);
  while (g_hash_table_iter_next (&it, NULL, &v)) {
    Adopted *a = v;
    AdoptSubject s = subject_of (a);
    const AdoptRule *rule = adopt_rules_match (rules, &s);
    if (!rule->adopt) {                          /* now to be left alone */
      give_back (ad, a);
      g_hash_table_iter_remove (&it);
      continue;
    }
    ctl_set_prefs (ad->ctl, a->flow, &rule->prefs);
    share_as (ad, a, rule);
    if (g_strcmp0 (rule->name, a->rule) != 0) {     /* another rule: bwss-top shows it */
      g_autofree char *origin = adopt_rule_origin (ad->rules, rule);
      g_strlcpy (a->flow->origin, origin, sizeof a->flow->origin);
      g_free (a->rule);
      a->rule = g_strdup (rule->name);
    }
  }
  g_hash_table_remove_all (ad->refused);         /* what a rule refused may be adopted now */
}

/* ---- one scan ---- */

void
adopter_yield (Adopter *ad, guint64 inode)
{
  Adopted *a = g_hash_table_lookup (ad->adopted, &inode);
  if (a == NULL)
    return;
  give_back (ad, a);
  g_hash_table_remove (ad->adopted, &inode);
}

/* Rule gone: gives back what is closed or no longer its owner's (rule
 * owned is adopter_yield(), when the client registers it). */
static void
drop_lost (Adopter *ad)
{
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, ad->adopted);
  while (g_hash_table_iter_next (&it, &k, &v)) {
    Adopted *a = v;
    if (knob_dump_find (&ad->dump, a->inode) && proc_fd_socket (a->pid, a->owner_fd) == a->inode)
      continue;
    give_back (ad, a);
    g_hash_table_iter_remove (&it);
  }
  g_hash_table_iter_init (&it, ad->refused);
  while (g_hash_table_iter_next (&it, &k, NULL))
    if (!knob_dump_find (&ad->dump, *(const guint64 *) k))
      g_hash_table_iter_remove (&it);
}

/* Returns TRUE if the refused socket @inode was held by another bwssd that
 * let it go (looked at every SWEEP_US); it is no longer
 * refused then. */
static gboolean
let_go_elsewhere (Adopter *ad, guint64 inode)
{
  Refused *r = g_hash_table_lookup (ad->refused, &inode);
  gint64 now = g_get_monotonic_time ();
  if (!r->elsewhere || now < r->next_look)
    return FALSE;
  r->next_look = now + SWEEP_US;
  g_autofree char *holder = NULL;
  if (adopt_ledger_held_elsewhere (ad->ledger, inode, &holder))
    return FALSE;
  g_hash_table_remove (ad->refused, &inode);
  return TRUE;
}

/* Returns TRUE if @k is a download bwssd has not seen yet: this user's,
 * established, not in the controller (adopted, or a client's: its
 * preferences win over the rules), received ADOPT_MIN_BYTES and more since
 * the last scan; or one another bwssd held and let go (it was a download
 * then; its receive queue may hold seconds of data, so it may receive
 * nothing for a while). */
static gboolean
is_candidate (Adopter *ad, const KnobInfo *k, guint64 last)
{
  if (k->uid != geteuid () || k->state != SYS_TCP_ESTABLISHED || ctl_holds_inode (ad->ctl, k->inode))
    return FALSE;
  if (g_hash_table_contains (ad->refused, &k->inode))
    return let_go_elsewhere (ad, k->inode);
  return k->bytes_received >= ADOPT_MIN_BYTES && k->bytes_received > last;
}

/* Rules new and no for the socket @k held by @h. */
static void
adopt_one (Adopter *ad, const KnobInfo *k, const AdoptHolder *h)
{
  Adopted *a = g_new0 (Adopted, 1);
  a->inode = k->inode;
  a->pid = h->pid;
  a->owner_fd = h->fd;
  a->exe = adopt_proc_exe (h->pid);
  a->comm = adopt_proc_comm (h->pid);
  a->cgroup = adopt_proc_cgroup (h->pid);
  remote_of (k, &a->remote, &a->port);
  AdoptSubject s = subject_of (a);
  const AdoptRule *rule = adopt_rules_match (ad->rules, &s);
  if (!rule->adopt) {
    g_autofree char *why = g_strdup_printf ("left alone by rule %s (adopt=false)", rule->name);
    refuse (ad, k->inode, h->pid, a->comm, k->remote, why);
    adopted_free (a);
    return;
  }
  int fd = adopt_proc_take (h->pid, h->fd, k->inode);
  if (fd < 0) {
    if (fd != -ESTALE && fd != -ESRCH) {         /* a closed socket is not a refusal */
      refuse (ad, k->inode, h->pid, a->comm, k->remote, adopt_proc_why (-fd));
      tell_once (ad, h->pid, a->comm, adopt_proc_why (-fd));
    }
    adopted_free (a);
    return;
  }
  /* the ledger first: the clamp it had, recorded before anything changes it */
  guint32 clamp = 0;
  g_autofree char *holder = NULL;
  int claim = adopt_ledger_claim (ad->ledger, k->inode, fd, h->pid, h->fd, &clamp, &holder);
  if (claim != 0)
    close (fd);
  int err = claim == 0 ? register_with (ad, a, rule, fd) : 0;
  if (claim == 0 && err == 0) {
    g_hash_table_insert (ad->adopted, u64_new (k->inode), a);
    return;
  }
  if (claim == -EALREADY) {                      /* looked at again when that one lets it go */
    g_autofree char *why = g_strdup_printf ("adopted by %s", holder);
    refuse (ad, k->inode, h->pid, a->comm, k->remote, why)->elsewhere = TRUE;
  } else if (claim != 0 && claim != -EBUSY) {    /* -EBUSY: being restored; the next scan */
    g_autofree char *why = g_strdup_printf ("cannot record its clamp in %s: %s",
                                            adopt_ledger_dir (ad->ledger), g_strerror (-claim));
    refuse (ad, k->inode, h->pid, a->comm, k->remote, why);
    tell_once (ad, h->pid, a->comm, why);
  } else if (err) {
    adopt_ledger_release (ad->ledger, k->inode);
    g_autofree char *why = g_strdup_printf ("cannot register it: %s", bwss_strerror (err));
    refuse (ad, k->inode, h->pid, a->comm, k->remote, why);
    tell_once (ad, h->pid, a->comm, why);
  }
  adopted_free (a);
}

char *
adopter_status (Adopter *ad)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  tool_json_add_number (b, "pid", getpid ());
  json_builder_set_member_name (b, "rules");
  if (ad->rules->path)
    tool_json_add_string (b, NULL, ad->rules->path, 4096);
  else
    json_builder_add_null_value (b);
  tool_json_add_string (b, "adoption", ad->capability, 4096);
  tool_json_add_number (b, "adopted", g_hash_table_size (ad->adopted));
  json_builder_set_member_name (b, "not_adopted");
  json_builder_begin_array (b);
  GHashTableIter it;
  gpointer v;
  guint listed = 0;
  g_hash_table_iter_init (&it, ad->refused);
  while (g_hash_table_iter_next (&it, NULL, &v) && listed++ < ADOPT_STATUS_MAX_REFUSED) {
    const Refused *r = v;
    json_builder_begin_object (b);
    tool_json_add_number (b, "pid", r->pid);
    tool_json_add_string (b, "command", r->comm, 64);
    tool_json_add_string (b, "remote", r->remote, sizeof r->remote);
    tool_json_add_string (b, "reason", r->reason, 256);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  guint refused = g_hash_table_size (ad->refused);
  tool_json_add_number (b, "not_adopted_omitted",
                        refused > ADOPT_STATUS_MAX_REFUSED ? refused - ADOPT_STATUS_MAX_REFUSED : 0);
  json_builder_end_object (b);
  return tool_json_to_string (b);
}

/* Returns why no process was found holding a socket: none of this user
 * that bwssd can see does, or some of this user's processes are not
 * dumpable and hide their fds (@hidden: their pids). */
static char *
why_no_holder (const GArray *hidden)
{
  if (hidden->len == 0)
    return g_strdup ("no process of this user that bwssd can see holds it");
  pid_t pid = g_array_index (hidden, pid_t, 0);
  g_autofree char *comm = adopt_proc_comm (pid);
  return g_strdup_printf ("no process bwssd can see holds it; %u of this user's processes (%s[%d]%s) "
                          "are not dumpable: their sockets can be seen and taken only with "
                          "CAP_SYS_PTRACE", hidden->len, comm ? comm : "?", (int) pid,
                          hidden->len > 1 ? ", ..." : "");
}

gboolean
adopter_scan (Adopter *ad)
{
  gint64 now = g_get_monotonic_time ();
  if (now >= ad->next_sweep) {
    adopt_ledger_restore_dead (ad->ledger, 0);   /* what a dead bwssd left, any domain */
    ad->next_sweep = now + SWEEP_US;
  }
  if (knob_dump (&ad->dump) != 0)
    return g_hash_table_size (ad->adopted) > 0;
  g_autoptr (GPtrArray) flows = ctl_flows (ad->ctl);
  gboolean busy = flows->len > 0;
  g_autoptr (GHashTable) wanted = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (size_t i = 0; i < ad->dump.n; i++) {
    const KnobInfo *k = &ad->dump.items[i];
    if (k->uid != geteuid ())
      continue;
    const KnobInfo *last = knob_dump_find (&ad->last, k->inode);
    if (is_candidate (ad, k, last ? last->bytes_received : 0))
      g_hash_table_add (wanted, u64_new (k->inode));
  }
  drop_lost (ad);
  /* nothing is adopted while no watchdog lives (it is being started again) */
  if (g_hash_table_size (wanted) > 0 && adopt_watchdog_alive (ad->watchdog)) {
    g_autoptr (GHashTable) holders = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
    g_autoptr (GArray) hidden = g_array_new (FALSE, FALSE, sizeof (pid_t));
    adopt_proc_find_holders (wanted, holders, getpid (), ad->watchdog->pid, hidden);
    g_autofree char *no_holder = NULL;
    for (size_t i = 0; i < ad->dump.n; i++) {
      const KnobInfo *k = &ad->dump.items[i];
      if (!g_hash_table_contains (wanted, &k->inode))
        continue;
      const AdoptHolder *h = g_hash_table_lookup (holders, &k->inode);
      if (h)
        adopt_one (ad, k, h);
      else                                       /* not looked for again */
        refuse (ad, k->inode, 0, NULL, k->remote,
                no_holder ? no_holder : (no_holder = why_no_holder (hidden)));
    }
  }
  KnobDump was = ad->last;                       /* this scan's is the next one's reference */
  ad->last = ad->dump;
  ad->dump = was;
  return busy || g_hash_table_size (ad->adopted) > 0;
}

void
adopter_free (Adopter *ad)
{
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, ad->adopted);
  while (g_hash_table_iter_next (&it, NULL, &v))
    give_back (ad, v);
  g_hash_table_unref (ad->adopted);
  g_hash_table_unref (ad->refused);
  g_hash_table_unref (ad->told);
  knob_dump_clear (&ad->dump);
  knob_dump_clear (&ad->last);
  adopt_rules_free (ad->rules);
  g_free (ad->capability);
  g_free (ad);
}
