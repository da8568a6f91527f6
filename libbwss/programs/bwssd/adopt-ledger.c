/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* adopt-ledger.c — the record of adopted sockets (see adopt-ledger.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bwss/domain.h>
#include "adopt-ledger.h"
#include "adopt-proc.h"
#include "sys.h"

/* Longest record, bytes (one line of seven numbers and a domain name). */
#define RECORD_MAX 256

struct AdoptLedger {
  char    *dir;
  char    *domain;               /* NULL: this process only restores */
  pid_t    self;
  guint64  self_start;
  guint64  pidns;                /* this process's PID namespace, 0 if unknown */
  guint    counter;              /* names of records being written */
};

typedef struct {
  guint32 clamp;
  pid_t   owner;
  int     fd;
  pid_t   daemon;
  guint64 start;
  char    domain[BWSS_DOMAIN_NAME_MAX + 1];
  guint64 pidns;                 /* the daemon's PID namespace, 0 if it could not tell */
} Record;

/* ---- the directory ---- */

AdoptLedger *
adopt_ledger_open (const char *dir, const char *domain, GError **error)
{
  g_autofree char *path = NULL;
  if (dir) {
    path = g_strdup (dir);
  } else {
    char runtime[PATH_MAX];
    int err = bwss_runtime_dir (runtime, sizeof runtime);
    if (err) {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_PERM, "%s: %s", runtime, bwss_strerror (err));
      return NULL;
    }
    path = g_build_filename (runtime, ADOPT_LEDGER_DIR, NULL);
  }
  char real[PATH_MAX];
  int err = rundir_check (path, TRUE, real);   /* made 0700 if missing, no link followed */
  if (err) {
    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (-err), "%s: %s", path,
                 err == -EPERM ? "not a directory of this user closed to others (or another user "
                                 "can replace it)" : g_strerror (-err));
    return NULL;
  }
  AdoptLedger *l = g_new0 (AdoptLedger, 1);
  l->dir = g_steal_pointer (&path);
  l->domain = g_strdup (domain);
  l->self = getpid ();
  l->self_start = proc_starttime (l->self);
  l->pidns = proc_pid_namespace ();
  return l;
}

void
adopt_ledger_free (AdoptLedger *l)
{
  if (l == NULL)
    return;
  g_free (l->dir);
  g_free (l->domain);
  g_free (l);
}

const char *
adopt_ledger_dir (const AdoptLedger *l)
{
  return l->dir;
}

/* ---- one record ---- */

static void
record_path (const AdoptLedger *l, guint64 inode, char *path, size_t len)
{
  g_snprintf (path, len, "%s/%" G_GUINT64_FORMAT, l->dir, inode);
}

/* Parses @text into @r.  Returns FALSE if it is not a record. */
static gboolean
parse_record (const char *text, Record *r)
{
  unsigned clamp;
  int owner, fd, daemon, end = 0;
  unsigned long long start, pidns;
  char domain[BWSS_DOMAIN_NAME_MAX + 2];
  if (sscanf (text, "clamp=%u owner=%d fd=%d daemon=%d start=%llu domain=%65[A-Za-z0-9._-] pidns=%llu%n",
              &clamp, &owner, &fd, &daemon, &start, domain, &pidns, &end) != 7
      || (text[end] != '\0' && g_strcmp0 (text + end, "\n") != 0)
      || owner <= 0 || fd < 0 || daemon <= 0 || bwss_domain_check_name (domain) != BWSS_OK)
    return FALSE;
  *r = (Record) { .clamp = clamp, .owner = owner, .fd = fd, .daemon = daemon, .start = start,
                  .pidns = pidns };
  g_strlcpy (r->domain, domain, sizeof r->domain);
  return TRUE;
}

/* Reads the record open as @fd: this user's regular file of at most
 * RECORD_MAX bytes.  Returns 0 or -EINVAL. */
static int
read_record (int fd, Record *r)
{
  struct stat st;
  char text[RECORD_MAX + 1];
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ()
      || st.st_size > RECORD_MAX)
    return -EINVAL;
  ssize_t n = pread (fd, text, RECORD_MAX, 0);
  if (n <= 0)
    return -EINVAL;
  text[n] = '\0';
  return parse_record (text, r) ? 0 : -EINVAL;
}

/* Opens the record of @inode without following a link or waiting. */
static int
open_record (const AdoptLedger *l, guint64 inode)
{
  char path[PATH_MAX];
  record_path (l, inode, path, sizeof path);
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  return fd < 0 ? -errno : fd;
}

/* Reads the record of @inode, unlocked.  Returns 0, -ENOENT or -EINVAL. */
static int
peek_record (const AdoptLedger *l, guint64 inode, Record *r)
{
  int fd = open_record (l, inode);
  if (fd < 0)
    return fd == -ENOENT ? -ENOENT : -EINVAL;
  int err = read_record (fd, r);
  close (fd);
  return err;
}

/* Opens the record of @inode and takes its exclusive flock without
 * waiting, then reads it.  Returns 0 (*@rfd locked), -EINVAL (not a
 * record; *@rfd locked, to be removed), -ENOENT (none), -ESTALE (its name
 * changed meanwhile: look again) or -EBUSY (someone else holds it). */
static int
lock_record (const AdoptLedger *l, guint64 inode, int *rfd, Record *r)
{
  char path[PATH_MAX];
  record_path (l, inode, path, sizeof path);
  int fd = open_record (l, inode);
  if (fd == -ELOOP)
    unlink (path);                     /* a link is no record: look again */
  if (fd < 0)
    return fd == -ENOENT ? -ENOENT : fd == -ELOOP ? -ESTALE : -EBUSY;
  if (flock (fd, LOCK_EX | LOCK_NB) != 0) {
    close (fd);
    return -EBUSY;
  }
  struct stat held, named;
  if (fstat (fd, &held) != 0 || lstat (path, &named) != 0 || held.st_dev != named.st_dev
      || held.st_ino != named.st_ino) {
    close (fd);
    return -ESTALE;
  }
  *rfd = fd;
  return read_record (fd, r);
}

/* Removes the record of @inode, which @rfd holds locked, and closes @rfd. */
static void
remove_locked (const AdoptLedger *l, guint64 inode, int rfd)
{
  char path[PATH_MAX];
  record_path (l, inode, path, sizeof path);
  unlink (path);
  close (rfd);
}

static gboolean
is_self (const AdoptLedger *l, const Record *r)
{
  return r->daemon == l->self && r->start == l->self_start && (r->pidns == 0 || r->pidns == l->pidns);
}

/* Returns TRUE unless @r's daemon is known dead: its pid, in this PID
 * namespace, no longer runs with its start time.  Another namespace's
 * daemon is not judged (its pid means another process here, or none). */
static gboolean
is_alive (const AdoptLedger *l, const Record *r)
{
  if (r->pidns && l->pidns && r->pidns != l->pidns)
    return TRUE;
  return proc_alive (r->daemon, r->start);
}

static char *
describe (const Record *r)
{
  return g_strdup_printf ("bwssd %d of domain %s", (int) r->daemon, r->domain);
}

/* Writes the record of @inode for this process, complete before it has its
 * name.  Returns 0, -EEXIST (a record is there) or -errno. */
static int
write_record (AdoptLedger *l, guint64 inode, guint32 clamp, pid_t owner, int owner_fd)
{
  char tmp[PATH_MAX], path[PATH_MAX];
  g_snprintf (tmp, sizeof tmp, "%s/.%" G_GUINT64_FORMAT ".%d.%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT ".%u",
              l->dir, inode, (int) l->self, l->self_start, l->pidns, ++l->counter);
  record_path (l, inode, path, sizeof path);
  g_autofree char *text = g_strdup_printf ("clamp=%u owner=%d fd=%d daemon=%d start=%" G_GUINT64_FORMAT
                                           " domain=%s pidns=%" G_GUINT64_FORMAT "\n", clamp, (int) owner,
                                           owner_fd, (int) l->self, l->self_start,
                                           l->domain ? l->domain : "none", l->pidns);
  int fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -errno;
  size_t len = strlen (text);
  int err = write (fd, text, len) == (ssize_t) len ? 0 : -EIO;
  close (fd);
  if (err == 0 && link (tmp, path) != 0)
    err = -errno;
  unlink (tmp);
  return err;
}

/* ---- what bwssd does ---- */

int
adopt_ledger_claim (AdoptLedger *l, guint64 inode, int fd, pid_t owner, int owner_fd, guint32 *clamp,
                    char **holder)
{
  char path[PATH_MAX];
  record_path (l, inode, path, sizeof path);
  guint32 original = 0;
  gboolean known = FALSE;              /* a record gave it */
  for (int round = 0; round < 4; round++) {
    /* a record first, the socket's clamp only if there is none: a daemon
     * clamps a socket only after its record exists, and a restorer removes
     * a record only after it put the clamp back */
    struct stat st;
    int err = -EEXIST;
    if (known || lstat (path, &st) != 0) {
      if (!known && knob_get_clamp (fd, &original) != 0)
        return -EBADF;
      err = write_record (l, inode, original, owner, owner_fd);
    }
    if (err == 0) {
      *clamp = original;
      return 0;
    }
    if (err != -EEXIST)
      return err;
    int rfd = -1;
    Record r;
    err = lock_record (l, inode, &rfd, &r);
    if (err == -ENOENT || err == -ESTALE)
      continue;                        /* removed meanwhile: claim again */
    if (err == -EBUSY)
      return -EBUSY;                   /* being restored: later */
    if (err == 0 && !is_self (l, &r) && is_alive (l, &r)) {
      *holder = describe (&r);
      close (rfd);
      return -EALREADY;
    }
    if (err == 0) {
      /* a dead daemon's (or one this process left): its clamp is the
       * socket's own; put it back */
      knob_give_back_clamp (fd, r.clamp, false);
      original = r.clamp;
      known = TRUE;
    }
    remove_locked (l, inode, rfd);     /* restored, or not a record */
  }
  return -EBUSY;
}

void
adopt_ledger_release (AdoptLedger *l, guint64 inode)
{
  Record r;
  if (peek_record (l, inode, &r) == 0 && is_self (l, &r)) {
    char path[PATH_MAX];
    record_path (l, inode, path, sizeof path);
    unlink (path);
  }
}

gboolean
adopt_ledger_held_elsewhere (AdoptLedger *l, guint64 inode, char **holder)
{
  Record r;
  if (peek_record (l, inode, &r) != 0 || is_self (l, &r) || !is_alive (l, &r))
    return FALSE;
  *holder = describe (&r);
  return TRUE;
}

/* ---- restoring what a dead daemon left ---- */

/* Takes socket @inode from whichever process of this user holds it now
 * (its owner passed it on and closed its fd).  Returns the fd, or -ENOENT
 * if no process holds it (it is closed), or -errno. */
static int
take_from_anyone (guint64 inode)
{
  g_autoptr (GHashTable) wanted = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GHashTable) found = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_hash_table_add (wanted, g_memdup2 (&inode, sizeof inode));
  adopt_proc_find_holders (wanted, found, getpid (), 0, NULL);
  const AdoptHolder *h = g_hash_table_lookup (found, &inode);
  return h ? adopt_proc_take (h->pid, h->fd, inode) : -ENOENT;
}

/* Removes a record file a writer left half-made if that writer is known
 * dead, by the records' rule (is_alive()): its name says who is writing it,
 * as ".INODE.PID.START.PIDNS.N" (a writer in another PID namespace is not
 * judged). */
static void
remove_stale_temp (const AdoptLedger *l, const char *name)
{
  guint64 inode;
  unsigned long long start, pidns;
  int pid, end = 0;
  unsigned n;
  if (sscanf (name, ".%" G_GUINT64_FORMAT ".%d.%llu.%llu.%u%n", &inode, &pid, &start, &pidns, &n, &end) != 5
      || name[end] != '\0')
    return;
  Record writer = { .daemon = pid, .start = start, .pidns = pidns };
  if (writer.daemon > 0 && !is_alive (l, &writer)) {
    char path[PATH_MAX];
    g_snprintf (path, sizeof path, "%s/%s", l->dir, name);
    unlink (path);
  }
}

/* What /proc said of a few daemons in one sweep (a ledger holds the
 * records of one or two daemons, many each). */
typedef struct {
  struct { pid_t pid; guint64 start, pidns; gboolean alive; } seen[8];
  guint n;
} Memo;

static gboolean
memo_alive (const AdoptLedger *l, Memo *m, const Record *r)
{
  for (guint i = 0; i < m->n && i < G_N_ELEMENTS (m->seen); i++)
    if (m->seen[i].pid == r->daemon && m->seen[i].start == r->start && m->seen[i].pidns == r->pidns)
      return m->seen[i].alive;
  gboolean alive = is_alive (l, r);
  guint i = m->n++ % G_N_ELEMENTS (m->seen);
  m->seen[i].pid = r->daemon;
  m->seen[i].start = r->start;
  m->seen[i].pidns = r->pidns;
  m->seen[i].alive = alive;
  return alive;
}

/* One pass of adopt_ledger_restore_dead(): *@busy gets the number of
 * records skipped because someone else held them. */
static guint
restore_pass (AdoptLedger *l, guint *busy)
{
  guint restored = 0, skipped = 0;
  Memo memo = { .n = 0 };
  DIR *d = opendir (l->dir);
  if (d == NULL)
    return 0;
  struct dirent *e;
  while ((e = readdir (d))) {
    if (e->d_name[0] == '.') {
      if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0)
        remove_stale_temp (l, e->d_name);
      continue;
    }
    char *end = NULL;
    guint64 inode = g_ascii_strtoull (e->d_name, &end, 10);
    if (inode == 0 || *end != '\0')
      continue;
    int rfd = -1;
    Record r;
    if (peek_record (l, inode, &r) == 0 && (is_self (l, &r) || memo_alive (l, &memo, &r)))
      continue;                        /* a live daemon's: the common case, no lock */
    int err = lock_record (l, inode, &rfd, &r);
    if (err == -EBUSY)
      skipped++;
    if (err == -EINVAL)
      remove_locked (l, inode, rfd);   /* not a record: nothing to go by */
    if (err != 0)
      continue;
    if (is_self (l, &r) || is_alive (l, &r)) {
      close (rfd);
      continue;
    }
    int s = adopt_proc_take (r.owner, r.fd, inode);
    if (s == -ESRCH || s == -ESTALE || s == -EBADF)
      s = take_from_anyone (inode);
    if (s >= 0) {
      knob_give_back_clamp (s, r.clamp, false);
      close (s);
      restored++;
      remove_locked (l, inode, rfd);
    } else if (s == -ENOENT) {
      remove_locked (l, inode, rfd);   /* the socket is closed: nothing throttled */
    } else {
      close (rfd);                     /* cannot take it now: tried again later */
    }
  }
  closedir (d);
  *busy = skipped;
  return restored;
}

guint
adopt_ledger_restore_dead (AdoptLedger *l, gint64 wait_us)
{
  gint64 deadline = g_get_monotonic_time () + wait_us;
  guint n = 0, busy = 0;
  while ((n += restore_pass (l, &busy), busy > 0) && g_get_monotonic_time () < deadline)
    g_usleep (20000);
  return n;
}
