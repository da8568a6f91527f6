/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * deadline.c — a timer thread (its own GMainContext) whose timeouts cancel
 * GCancellables.  When a timeout runs before a deadline that was moved
 * later, it schedules the next one.  The caller and the pending timeout
 * each hold a reference; the last one frees.
 */
#include "deadline.h"

struct Deadline {
  gint          refs;
  GMutex        lock;
  GCancellable *cancellable;
  GSource      *source;      /* the pending timeout */
  gint64        at_us;
  gboolean      disarmed;
  gint          fired;       /* atomic */
};

static GMainContext *timer_ctx;

static gpointer
timer_main (gpointer data)
{
  GMainLoop *loop = g_main_loop_new (timer_ctx, FALSE);
  g_main_loop_run (loop);                 /* for the life of the process */
  g_main_loop_unref (loop);
  return NULL;
}

/* Returns the timer thread's context, starting it once. */
static GMainContext *
timer_context (void)
{
  if (g_once_init_enter (&timer_ctx)) {
    GMainContext *ctx = g_main_context_new ();
    g_once_init_leave (&timer_ctx, ctx);
    g_thread_unref (g_thread_new ("bwss-deadline", timer_main, NULL));
  }
  return timer_ctx;
}

static void
deadline_unref (gpointer data)
{
  Deadline *d = data;
  if (g_atomic_int_dec_and_test (&d->refs)) {
    if (d->source)
      g_source_unref (d->source);
    g_object_unref (d->cancellable);
    g_mutex_clear (&d->lock);
    g_free (d);
  }
}

static gboolean on_timeout (gpointer data);

/* Schedules a timeout at d->at_us.  d->lock held. */
static void
schedule (Deadline *d)
{
  gint64 wait_ms = (d->at_us - g_get_monotonic_time () + 999) / 1000;
  if (d->source)
    g_source_unref (d->source);
  d->source = g_timeout_source_new ((guint) CLAMP (wait_ms, 0, G_MAXUINT));
  g_atomic_int_inc (&d->refs);
  g_source_set_callback (d->source, on_timeout, d, deadline_unref);
  g_source_attach (d->source, timer_context ());
}

static gboolean
on_timeout (gpointer data)
{
  Deadline *d = data;
  g_mutex_lock (&d->lock);
  if (!d->disarmed) {
    if (g_get_monotonic_time () < d->at_us) {
      schedule (d);                     /* moved later meanwhile */
    } else {
      g_atomic_int_set (&d->fired, 1);
      g_cancellable_cancel (d->cancellable);
    }
  }
  g_mutex_unlock (&d->lock);
  return G_SOURCE_REMOVE;
}

Deadline *
deadline_arm (GCancellable *cancellable, gint64 at_us)
{
  Deadline *d = g_new0 (Deadline, 1);
  d->refs = 1;
  g_mutex_init (&d->lock);
  d->cancellable = g_object_ref (cancellable);
  d->at_us = at_us;
  g_mutex_lock (&d->lock);
  schedule (d);
  g_mutex_unlock (&d->lock);
  return d;
}

void
deadline_move (Deadline *d, gint64 at_us)
{
  if (d == NULL)
    return;
  g_mutex_lock (&d->lock);
  if (at_us > d->at_us)
    d->at_us = at_us;
  g_mutex_unlock (&d->lock);
}

gboolean
deadline_fired (Deadline *d)
{
  return d && g_atomic_int_get (&d->fired);
}

void
deadline_disarm (Deadline *d)
{
  if (d == NULL)
    return;
  g_mutex_lock (&d->lock);
  d->disarmed = TRUE;
  if (d->source)
    g_source_destroy (d->source);
  g_mutex_unlock (&d->lock);
  deadline_unref (d);
}
