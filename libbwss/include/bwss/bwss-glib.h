/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss/bwss-glib.h — run a domain from a GLib main loop.
 *
 * Header-only, so libbwss itself does not depend on GLib: include it from a
 * GLib program.  The source dispatches the domain (apply windows, fail open,
 * control if allowed) at the time bwss_domain_dispatch() asks for — every
 * control period while there are flows, once a second with none — and at
 * once when the domain's fd (bwss_domain_get_fd()) says a flow was
 * registered meanwhile.  It keeps no timer of its own: an idle domain costs
 * the program one wakeup a second.
 *
 *   bwss_domain_attach (domain, NULL);              (the default main context)
 *
 * Another main context, e.g. one a worker thread iterates:
 *
 *   GSource *src = bwss_domain_source_new (domain);
 *   g_source_set_priority (src, G_PRIORITY_HIGH);   (optional)
 *   g_source_attach (src, worker_context);
 *   ...
 *   g_source_destroy (src);                         (before bwss_domain_close)
 *   g_source_unref (src);
 *
 * The domain is dispatched from the thread that iterates that context.  A
 * BwssDomain may be used from several threads, so registering flows from
 * other threads is fine; the source wakes its context when they do.
 */
#ifndef BWSS_GLIB_H
#define BWSS_GLIB_H

#include <glib.h>
#include <bwss/domain.h>

G_BEGIN_DECLS

typedef struct {
  GSource     source;
  BwssDomain *domain;
  gint64      next;                      /* the dispatch asked to run then (monotonic µs) */
} BwssGlibSource_;

/* The time is the source's own (not a ready time: setting one from the
 * dispatch would wake the context once more each time). */
static inline gboolean
bwss_glib_prepare_ (GSource *source, gint *timeout)
{
  BwssGlibSource_ *s = (BwssGlibSource_ *) source;
  gint64 now = g_source_get_time (source);
  if (now >= s->next)
    return TRUE;
  gint64 ms = (s->next - now + 999) / 1000;   /* never early */
  *timeout = ms > G_MAXINT ? G_MAXINT : (gint) ms;
  return FALSE;
}

static inline gboolean
bwss_glib_check_ (GSource *source)
{
  return g_source_get_time (source) >= ((BwssGlibSource_ *) source)->next;
}

static inline gboolean
bwss_glib_dispatch_ (GSource *source, GSourceFunc callback, gpointer data)
{
  BwssGlibSource_ *s = (BwssGlibSource_ *) source;
  gint64 now = g_get_monotonic_time ();  /* CLOCK_MONOTONIC µs, the domain's clock */
  s->next = now + (gint64) bwss_domain_dispatch (s->domain, (uint64_t) now);
  (void) callback;
  (void) data;
  return G_SOURCE_CONTINUE;
}

static inline GSourceFuncs *
bwss_glib_source_funcs_ (void)
{
  static GSourceFuncs funcs = { bwss_glib_prepare_, bwss_glib_check_, bwss_glib_dispatch_,
                                NULL, NULL, NULL };
  return &funcs;
}

/* Returns a new source that dispatches @domain at the time it asks for,
 * first at once, named "bwss-domain", not attached: attach it to the main
 * context that should run the domain (g_source_attach()), set its priority
 * if G_PRIORITY_DEFAULT does not suit.  It needs no callback.  Destroy it
 * (g_source_destroy()) before bwss_domain_close(); unref it when done. */
static inline GSource *
bwss_domain_source_new (BwssDomain *domain)
{
  GSource *source = g_source_new (bwss_glib_source_funcs_ (), sizeof (BwssGlibSource_));
  ((BwssGlibSource_ *) source)->domain = domain;
  g_source_set_name (source, "bwss-domain");
  /* its dispatch runs no main loop, so it never recurses; and GLib takes a
   * non-recursive source's fd out of the poll set for each dispatch and
   * wakes the context to put it back: one more iteration each time */
  g_source_set_can_recurse (source, TRUE);
  int fd = bwss_domain_get_fd (domain);
  if (fd >= 0)
    g_source_add_unix_fd (source, fd, G_IO_IN);   /* a flow registered: at once */
  return source;
}

/* Attaches a source that dispatches @domain (bwss_domain_source_new()) to
 * @context (NULL: the default context).  Returns the source id; remove it
 * with g_source_remove() (on that context: g_source_destroy() of
 * g_main_context_find_source_by_id()) before bwss_domain_close(). */
static inline guint
bwss_domain_attach (BwssDomain *domain, GMainContext *context)
{
  GSource *source = bwss_domain_source_new (domain);
  guint id = g_source_attach (source, context);
  g_source_unref (source);
  return id;
}

G_END_DECLS

#endif
