/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tsan-glib.c — ThreadSanitizer's view of GLib's locks, for the gst tests
 * built with -Db_sanitize=thread (linked into them only then).
 *
 * GLib (2.67 on) takes GMutex, GRecMutex and GCond with futexes inside an
 * uninstrumented libglib: ThreadSanitizer never sees a lock taken, so every
 * access a GMutex guards — the element's, GStreamer's object lock — is
 * reported as a race.  The executable's definitions below (export_dynamic:
 * they come before libglib's for every library of the process, as the
 * test's own bwss_flow_unregister does) call GLib's own functions, so the
 * locks work as they always do, and tell ThreadSanitizer the order they
 * make: what a thread did before unlocking happens before what the next
 * holder does after locking (__tsan_release/__tsan_acquire on the lock's
 * address).  Only happens-before is told, not ownership: libglib's calls
 * to its own locks do not come through here, and a lock taken there and
 * released here must not look like an error.  Those internal accesses are
 * what tsan.supp leaves out, each entry argued.
 */
#include <dlfcn.h>
#include <glib.h>
#include <sanitizer/tsan_interface.h>

/* real: GLib's own @name, looked up once (an atomic: any thread may be
 * first) */
#define REAL(name) \
  static __typeof__ (name) *cached_##name; \
  __typeof__ (name) *real = __atomic_load_n (&cached_##name, __ATOMIC_ACQUIRE); \
  if (real == NULL) { \
    real = (__typeof__ (name) *) dlsym (RTLD_NEXT, #name); \
    __atomic_store_n (&cached_##name, real, __ATOMIC_RELEASE); \
  }

void
g_mutex_lock (GMutex *m)
{
  REAL (g_mutex_lock);
  real (m);
  __tsan_acquire (m);
}

gboolean
g_mutex_trylock (GMutex *m)
{
  REAL (g_mutex_trylock);
  gboolean locked = real (m);
  if (locked)
    __tsan_acquire (m);
  return locked;
}

void
g_mutex_unlock (GMutex *m)
{
  REAL (g_mutex_unlock);
  __tsan_release (m);
  real (m);
}

void
g_rec_mutex_lock (GRecMutex *m)
{
  REAL (g_rec_mutex_lock);
  real (m);
  __tsan_acquire (m);
}

gboolean
g_rec_mutex_trylock (GRecMutex *m)
{
  REAL (g_rec_mutex_trylock);
  gboolean locked = real (m);
  if (locked)
    __tsan_acquire (m);
  return locked;
}

void
g_rec_mutex_unlock (GRecMutex *m)
{
  REAL (g_rec_mutex_unlock);
  __tsan_release (m);
  real (m);
}

/* A wait unlocks the mutex and locks it again; a signal orders what its
 * thread did before it with what the woken thread does after. */
void
g_cond_wait (GCond *c, GMutex *m)
{
  REAL (g_cond_wait);
  __tsan_release (m);
  real (c, m);
  __tsan_acquire (m);
  __tsan_acquire (c);
}

gboolean
g_cond_wait_until (GCond *c, GMutex *m, gint64 end_time)
{
  REAL (g_cond_wait_until);
  __tsan_release (m);
  gboolean signalled = real (c, m, end_time);
  __tsan_acquire (m);
  __tsan_acquire (c);
  return signalled;
}

void
g_cond_signal (GCond *c)
{
  REAL (g_cond_signal);
  __tsan_release (c);
  real (c);
}

void
g_cond_broadcast (GCond *c)
{
  REAL (g_cond_broadcast);
  __tsan_release (c);
  real (c);
}
