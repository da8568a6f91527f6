/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * segment.c — the domain segment as a file: its name, its atomic creation,
 * its validation, the repair of a half-made one, and its lock taken within
 * a bound.  The layout is segment.h; what the domain does with it is
 * domain.c and the files it names.
 *
 * Creation.  A segment is made complete in an unnamed file (O_TMPFILE in
 * the user's runtime directory, runtime.c) and only then linked under its
 * name; linkat() fails if the name
 * exists, so of two creators one wins and the other opens the winner's.
 * Nobody can see a half-made segment of this version, and a creator killed
 * half-way leaves nothing behind.  Older versions created the file first:
 * an empty or magic-less file left by one of them is "unfinished"; it is
 * waited for a moment, then replaced.
 *
 * Replacing a name.  Whoever replaces a file (an unfinished one here, a
 * segment whose lock is stuck in domain-seg.c) first takes an open-file-
 * description lock on the file's second byte and replaces it only if the
 * name still names that file; every process doing so locks the same file,
 * so one that comes second never replaces the replacement.  The new segment
 * is made complete, linked under a temporary name (starting with '.', which
 * no domain name may) and renamed over the old one: rename() replaces
 * atomically, so a process opening the domain meanwhile finds the old
 * segment or the new one, never none.  Byte 0 carries the controller's
 * record lock (leader.c).
 *
 * The lock.  A robust process-shared mutex: a holder that dies is detected
 * by the kernel (EOWNERDEAD at the next locker, who sweeps the table).  It
 * is never waited for without a bound: segment_lock() waits at most what
 * its caller allows and then names the holder.  A lock word naming a task
 * that cannot be holding it (none, a dead one, a thread of ours, another
 * user's, one that does not map this file) is what a forged or stray word
 * looks like: it is marked owner-died exactly as the kernel marks the lock
 * of a dying thread, so the next locker repairs the table.  A live holder is
 * never robbed: a holder that stays (stopped, hung) is dealt with by
 * domain-seg.c, which moves the domain to a fresh segment.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bwss/domain.h>
#include "sys.h"
#include "segment.h"

/* How long an unfinished segment may stay so before it is replaced, µs:
 * an older creator needs microseconds between creating and finishing it. */
#define UNFINISHED_US 500000ull
/* Poll period while waiting for an unfinished segment, µs. */
#define POLL_US       10000ull
/* Processes a sweep remembers what /proc said of (most domains hold the
 * flows of a handful). */
#define SWEEP_MEMO    32
/* Replace/create rounds before giving up (races with other creators). */
#define MAX_ROUNDS    8

/* ---- the lock's type ---- */

static void
lock_attr (pthread_mutexattr_t *a)
{
  pthread_mutexattr_init (a);
  pthread_mutexattr_setpshared (a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust (a, PTHREAD_MUTEX_ROBUST);
}

/* Returns the type word glibc stores in a robust process-shared mutex. */
static int
expected_kind (void)
{
  static int kind = -1;
  if (kind < 0) {
    pthread_mutexattr_t a;
    pthread_mutex_t m;
    lock_attr (&a);
    pthread_mutex_init (&m, &a);
    pthread_mutexattr_destroy (&a);
    __atomic_store_n (&kind, m.__data.__kind, __ATOMIC_RELAXED);
    pthread_mutex_destroy (&m);
  }
  return kind;
}

/* ---- validation ---- */

typedef union {
  struct {
    uint32_t state;
    uint32_t gen;
  };
  uint64_t word;
} SlotWord;

static SlotWord
slot_word (const SegSlot *sl)
{
  SlotWord w = { .word = __atomic_load_n (&sl->state_gen, __ATOMIC_ACQUIRE) };
  return w;
}

int
segment_slot_group (const SegSlot *sl, uint64_t *group)
{
  int32_t owner = sl->owner_pid ? sl->owner_pid : sl->pid;
  uint64_t g;
  switch (sl->share) {
  case BWSS_SHARE_FLOW:
    if (sl->share_key != 0)
      return BWSS_EPROTO;
    g = 0;
    break;
  case BWSS_SHARE_PROCESS:
    if (owner <= 0 || sl->share_key != (uint64_t) owner)
      return BWSS_EPROTO;
    g = UINT64_C (1) << 62 | sl->share_key;
    break;
  case BWSS_SHARE_UNIT:
    if (sl->share_key == 0 || sl->share_key >> 62 != 0)
      return BWSS_EPROTO;
    g = UINT64_C (2) << 62 | sl->share_key;
    break;
  default:
    return BWSS_EPROTO;
  }
  if (group)
    *group = g;
  return BWSS_OK;
}

/* Returns true if the fields of a used slot are impossible. */
static bool
slot_is_bad (const SegSlot *sl, uint32_t state)
{
  return state > SLOT_RELEASED
         || memchr (sl->comm, 0, sizeof sl->comm) == NULL
         || memchr (sl->local, 0, sizeof sl->local) == NULL
         || memchr (sl->remote, 0, sizeof sl->remote) == NULL
         || memchr (sl->origin, 0, sizeof sl->origin) == NULL || sl->owner_pid < 0
         || bwss_prefs_check (&sl->prefs) != BWSS_OK || sl->pid <= 0 || sl->fd < 0
         || (sl->flags & ~SLOT_PACED_READS) != 0 || segment_slot_group (sl, NULL) != BWSS_OK
         || !(sl->read_rate_bps >= 0.0 && sl->read_rate_bps <= BWSS_RATE_MAX_BPS);
}

int
segment_validate (const Segment *s)
{
  if (s->magic != SEG_MAGIC)
    return BWSS_EPROTO;
  if (s->version != SEG_VERSION)
    return BWSS_EVERSION;
  if (s->header_size != offsetof (Segment, slots) || s->slot_size != sizeof (SegSlot)
      || s->max_flows != SEG_MAX_FLOWS)
    return BWSS_EPROTO;
  if (s->owner_uid != geteuid ())
    return BWSS_EPERM;
  if (s->lock.__data.__kind != expected_kind ())
    return BWSS_EPROTO;
  if (s->n_flows > SEG_MAX_FLOWS || s->slot_hwm > SEG_MAX_FLOWS || s->phase > BWSS_PHASE_LAST || s->suspended > 1
      || s->controller_pid < 0 || bwss_loop_name (s->loop) == NULL)
    return BWSS_EPROTO;
  uint32_t hwm = __atomic_load_n (&s->slot_hwm, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < SEG_MAX_FLOWS; i++) {
    const SegSlot *sl = &s->slots[i];
    SlotWord before = slot_word (sl);
    /* a used slot at or above the high-water mark would be hidden from
     * every loop (never swept, never controlled) */
    if (before.state == SLOT_FREE || (i < hwm && !slot_is_bad (sl, before.state)))
      continue;
    /* a slot being filled or freed right now may look torn (an activation
     * raises the mark before it publishes the slot) */
    if (slot_word (sl).word == before.word && __atomic_load_n (&s->slot_hwm, __ATOMIC_ACQUIRE) == hwm)
      return BWSS_EPROTO;
  }
  return BWSS_OK;
}

/* ---- creation ---- */

void
segment_init (Segment *s, const Segment *carry)
{
  memset (s, 0, sizeof *s);
  pthread_mutexattr_t a;
  lock_attr (&a);
  pthread_mutex_init (&s->lock, &a);
  pthread_mutexattr_destroy (&a);
  s->version = SEG_VERSION;
  s->header_size = offsetof (Segment, slots);
  s->slot_size = sizeof (SegSlot);
  s->max_flows = SEG_MAX_FLOWS;
  s->owner_uid = geteuid ();
  if (carry)
    s->suspended = __atomic_load_n (&carry->suspended, __ATOMIC_RELAXED) == 1;
  s->magic = SEG_MAGIC;
}

static int
errno_to_bwss (int e)
{
  switch (e) {
    case EACCES: case EPERM: return BWSS_EPERM;
    case ENOSPC: case EDQUOT: return BWSS_ENOSPC;
    case ENOMEM: return BWSS_ENOMEM;
    case ELOOP: case EISDIR: return BWSS_EPROTO; /* not a file where the segment should be */
    default: return BWSS_ENOENT;
  }
}

static void
fill_file (SegFile *out, int fd, Segment *s, const struct stat *st)
{
  out->fd = fd;
  out->s = s;
  out->dev = st->st_dev;
  out->ino = st->st_ino;
}

/* Writes the directory of @path (a file's path with a '/') to @dir. */
static void
dir_of (const char *path, char *dir, size_t len)
{
  const char *slash = strrchr (path, '/');
  size_t n = slash == NULL ? 1 : slash == path ? 1 : (size_t) (slash - path);
  if (n >= len)
    n = len - 1;
  memcpy (dir, slash == NULL ? "." : path, n);
  dir[n] = '\0';
}

/* Makes a complete segment in an unnamed file of the directory of @path.
 * Returns 0 with *out filled, or a BWSS_E code. */
static int
make_unnamed (const char *path, const Segment *carry, SegFile *out)
{
  char dir[PATH_MAX];
  dir_of (path, dir, sizeof dir);
  int fd = open (dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    return errno_to_bwss (errno);
  struct stat st;
  Segment *s = MAP_FAILED;
  int err = 0;
  if (fchmod (fd, 0600) != 0 || ftruncate (fd, sizeof (Segment)) != 0 || fstat (fd, &st) != 0)
    err = errno_to_bwss (errno);
  else if ((s = mmap (NULL, sizeof (Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
    err = BWSS_ENOMEM;
  if (err) {
    close (fd);
    return err;
  }
  segment_init (s, carry);
  fill_file (out, fd, s, &st);
  return 0;
}

/* Gives the unnamed segment @f the name @path (failing with -EEXIST if it is
 * taken).  Returns 0, -EEXIST or a BWSS_E code. */
static int
link_name (const SegFile *f, const char *path)
{
  int err = proc_link_fd (f->fd, path);
  return err == 0 || err == -EEXIST ? err : errno_to_bwss (-err);
}

/* Creates a complete segment and links it at @path.  Returns 0, -EEXIST if
 * the name was taken meanwhile, or a BWSS_E code. */
static int
create_file (const char *path, const Segment *carry, SegFile *out)
{
  int err = make_unnamed (path, carry, out);
  if (err == 0 && (err = link_name (out, path)) != 0)
    segment_close (out);
  return err;
}

/* Puts a new complete segment at @path in place of the file @dev:@ino, if
 * @path still names it, under the replace lock on @fd (see the header).
 * Returns 0 with *out the new segment, -ESTALE if @path names something else
 * now (someone replaced or removed it: open it again), or a BWSS_E code
 * (BWSS_EBUSY: another process is replacing it). */
static int
replace_file (int fd, dev_t dev, ino_t ino, const char *path, const Segment *carry, SegFile *out)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1, .l_len = 1 };
  if (fcntl (fd, F_OFD_SETLK, &fl) != 0)
    return BWSS_EBUSY;
  struct stat st;
  int err = -ESTALE;
  if (lstat (path, &st) == 0 && st.st_dev == dev && st.st_ino == ino) {
    static unsigned counter;
    char dir[PATH_MAX], tmp[PATH_MAX + 128];
    dir_of (path, dir, sizeof dir);
    const char *base = strrchr (path, '/');
    snprintf (tmp, sizeof tmp, "%s/.%s.new.%d.%u", dir, base ? base + 1 : path, (int) getpid (),
              __atomic_add_fetch (&counter, 1, __ATOMIC_RELAXED));
    err = make_unnamed (path, carry, out);
    if (err == 0 && (err = link_name (out, tmp)) == 0 && rename (tmp, path) != 0) {
      err = errno_to_bwss (errno);
      unlink (tmp);
    }
    if (err)
      segment_close (out);
  }
  fl.l_type = F_UNLCK;
  fcntl (fd, F_OFD_SETLK, &fl);
  return err;
}

/* ---- opening ---- */

enum { UNFINISHED = 1 };

/* Checks the open file @fd and maps it into *out.  Returns 0, UNFINISHED,
 * or a BWSS_E code (fd left open in every case). */
static int
check_file (int fd, SegFile *out, struct stat *st)
{
  if (fstat (fd, st) != 0 || !S_ISREG (st->st_mode))
    return BWSS_EPROTO;
  if (st->st_uid != geteuid () || (st->st_mode & 0777) != 0600)
    return BWSS_EPERM;
  if (st->st_size == 0)
    return UNFINISHED;
  if ((size_t) st->st_size != sizeof (Segment)) {
    /* another layout?  Peek at the header if there is one. */
    uint32_t head[3];
    if ((size_t) st->st_size >= sizeof head && pread (fd, head, sizeof head, 0) == (ssize_t) sizeof head
        && ((uint64_t) head[1] << 32 | head[0]) == SEG_MAGIC && head[2] != SEG_VERSION)
      return BWSS_EVERSION;
    return BWSS_EPROTO;
  }
  Segment *s = mmap (NULL, sizeof (Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (s == MAP_FAILED)
    return BWSS_ENOMEM;
  int err = __atomic_load_n (&s->magic, __ATOMIC_ACQUIRE) == 0 ? UNFINISHED : segment_validate (s);
  if (err) {
    munmap (s, sizeof (Segment));
    return err;
  }
  fill_file (out, fd, s, st);
  return 0;
}

/* Returns true if the file last changed more than UNFINISHED_US ago (a file
 * time in the future is not old). */
static bool
old_file (const struct stat *st)
{
  struct timespec now;
  clock_gettime (CLOCK_REALTIME, &now);
  int64_t age_us = ((int64_t) now.tv_sec - (int64_t) st->st_mtim.tv_sec) * 1000000
                   + ((int64_t) now.tv_nsec - (int64_t) st->st_mtim.tv_nsec) / 1000;
  return age_us > (int64_t) UNFINISHED_US;
}

int
segment_open (const char *path, bool create, uint64_t wait_us, const Segment *carry, SegFile *out)
{
  uint64_t start = bwss__clock_now_us ();
  for (int rounds = 0; rounds < MAX_ROUNDS;) {
    int fd = open (path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
      if (errno != ENOENT)
        return errno_to_bwss (errno);
      if (!create)
        return BWSS_ENOENT;
      int err = create_file (path, carry, out);
      if (err != -EEXIST)
        return err;
      rounds++;
      continue;
    }
    struct stat st;
    int err = check_file (fd, out, &st);
    if (err != UNFINISHED) {
      if (err)
        close (fd);
      return err;
    }
    uint64_t waited = bwss__clock_now_us () - start;
    if (!old_file (&st) && waited < UNFINISHED_US) {
      close (fd);
      if (waited >= wait_us)
        return BWSS_EBUSY;                /* young: its creator may be finishing it */
      usleep (POLL_US);
      continue;
    }
    if (!create) {
      close (fd);
      return BWSS_ENOENT;                 /* no domain: an unfinished file is left */
    }
    err = replace_file (fd, st.st_dev, st.st_ino, path, carry, out);
    close (fd);
    if (err == 0 || (err != -ESTALE && err != BWSS_EBUSY))
      return err;
    rounds++;
  }
  return BWSS_EBUSY;
}

void
segment_close (SegFile *f)
{
  if (f->s)
    munmap (f->s, sizeof (Segment));
  if (f->fd >= 0)
    close (f->fd);                        /* drops the controller lock, if held */
  f->s = NULL;
  f->fd = -1;
}

bool
segment_is_current (const SegFile *f, const char *path)
{
  struct stat st;
  return lstat (path, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

int
segment_replace_if_current (const SegFile *f, const char *path, SegFile *out)
{
  int err = replace_file (f->fd, f->dev, f->ino, path, f->s, out);
  return err == -ESTALE ? BWSS_EBUSY : err;
}

/* ---- the lock ---- */

/* The lock word of glibc's robust mutexes: the holder's TID and two flags. */
static unsigned *
lock_word (Segment *s)
{
  return (unsigned *) &s->lock.__data.__lock;
}

/* Returns true if task @tid cannot be holding the lock of @f. */
static bool
cannot_hold (const SegFile *f, pid_t tid, char state)
{
  if (tid == 0 || proc_is_own_thread (tid))   /* ours never hold it here: see domain-seg.c */
    return true;
  if (state == 0 || state == 'Z' || state == 'X')
    return true;                          /* the kernel marks the locks of a dying task */
  if (proc_foreign (tid) == 1)
    return true;
  return proc_maps_file (tid, f->dev, f->ino) == 0;
}

/* Looks at the holder of @f's lock.  Returns true if the lock is worth
 * trying again now (it was released, or its holder could not hold it and
 * the lock is now marked owner-died); false if a live task holds it. */
static bool
judge_holder (const SegFile *f, SegHolder *holder)
{
  unsigned *word = lock_word (f->s);
  unsigned w = __atomic_load_n (word, __ATOMIC_ACQUIRE);
  if (w == 0 || (w & FUTEX_OWNER_DIED))
    return true;
  pid_t tid = (pid_t) (w & FUTEX_TID_MASK);
  char state = tid ? proc_state (tid) : 0;
  holder->tid = tid;
  holder->state = state;
  if (!cannot_hold (f, tid, state))
    return false;
  if (__atomic_compare_exchange_n (word, &w, w | FUTEX_OWNER_DIED, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    syscall (SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  return true;
}

int
segment_lock (const SegFile *f, uint64_t wait_us, bool judge, SegHolder *holder)
{
  Segment *s = f->s;
  holder->tid = 0;
  holder->state = 0;
  for (int attempt = 0; attempt < 2; attempt++) {
    int r;
    if (wait_us == 0 || attempt > 0) {
      r = pthread_mutex_trylock (&s->lock);
    } else {
      struct timespec ts;
      clock_gettime (CLOCK_MONOTONIC, &ts);
      uint64_t ns = (uint64_t) ts.tv_nsec + wait_us * 1000ull;
      ts.tv_sec += (time_t) (ns / 1000000000ull);
      ts.tv_nsec = (long) (ns % 1000000000ull);
      r = pthread_mutex_clocklock (&s->lock, CLOCK_MONOTONIC, &ts);
    }
    if (r == 0)
      return 0;
    if (r == EOWNERDEAD) {
      pthread_mutex_consistent (&s->lock);
      segment_sweep (s);
      return 0;
    }
    if (r != EBUSY && r != ETIMEDOUT)
      return BWSS_EPROTO;                 /* ENOTRECOVERABLE: nobody ever will */
    if (!judge || !judge_holder (f, holder))
      break;
  }
  return BWSS_EBUSY;
}

void
segment_unlock (Segment *s)
{
  pthread_mutex_unlock (&s->lock);
}

/* ---- slots ---- */

void
segment_free_slot (Segment *s, uint32_t i)
{
  SegSlot *sl = &s->slots[i];
  SlotWord w = slot_word (sl);
  if ((w.state == SLOT_ACTIVE || w.state == SLOT_RELEASED) && s->n_flows > 0)
    s->n_flows--;
  SlotWord freed = { .state = SLOT_FREE, .gen = w.gen + 1 };
  __atomic_store_n (&sl->state_gen, freed.word, __ATOMIC_RELEASE);
  memset ((char *) sl + sizeof sl->state_gen, 0, sizeof *sl - sizeof sl->state_gen);
  uint32_t hwm = s->slot_hwm;         /* lowered after the slot is FREE, never before */
  while (hwm > 0 && slot_word (&s->slots[hwm - 1]).state == SLOT_FREE)
    hwm--;
  __atomic_store_n (&s->slot_hwm, hwm, __ATOMIC_RELEASE);
}

/* What a sweep learned of the processes it asked /proc about. */
typedef struct {
  int32_t  pid[SWEEP_MEMO];
  uint64_t start[SWEEP_MEMO];
  bool     alive[SWEEP_MEMO];
  uint32_t n;
} SweepMemo;

/* Returns proc_alive (@pid, @start), asking /proc only the first time a
 * sweep meets the process (a domain's slots belong to a few processes). */
static bool
memo_alive (SweepMemo *m, int32_t pid, uint64_t start)
{
  for (uint32_t i = 0; i < m->n; i++)
    if (m->pid[i] == pid && m->start[i] == start)
      return m->alive[i];
  bool alive = proc_alive (pid, start);
  uint32_t i = m->n < SWEEP_MEMO ? m->n++ : (uint32_t) pid % SWEEP_MEMO;
  m->pid[i] = pid;
  m->start[i] = start;
  m->alive[i] = alive;
  return alive;
}

void
segment_sweep (Segment *s)
{
  SweepMemo memo = { .n = 0 };
  for (uint32_t i = s->slot_hwm; i-- > 0;) {
    SegSlot *sl = &s->slots[i];
    uint32_t state = slot_word (sl).state;
    if (state == SLOT_RELEASED
        || (state == SLOT_ACTIVE && !memo_alive (&memo, sl->pid, sl->starttime)))
      segment_free_slot (s, i);
  }
}

void
segment_activate_slot (Segment *s, uint32_t i, uint32_t gen)
{
  if (i >= s->slot_hwm)              /* first: a reader that sees the slot sees the mark */
    __atomic_store_n (&s->slot_hwm, i + 1, __ATOMIC_RELEASE);
  SlotWord w = { .state = SLOT_ACTIVE, .gen = gen };
  __atomic_store_n (&s->slots[i].state_gen, w.word, __ATOMIC_RELEASE);
  s->n_flows++;
}

bool
segment_release_slot (Segment *s, uint32_t i, uint32_t gen)
{
  SlotWord want = { .state = SLOT_ACTIVE, .gen = gen };
  SlotWord to = { .state = SLOT_RELEASED, .gen = gen };
  return __atomic_compare_exchange_n (&s->slots[i].state_gen, &want.word, to.word, false,
                                      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
