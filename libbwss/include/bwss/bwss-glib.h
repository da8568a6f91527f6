/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss/bwss-glib.h — run a domain from a GLib main loop.
 *
 * Header-only, so libbwss itself does not depend on GLib: include it from a
 * GLib program and call bwss_domain_attach().  The source dispatches the
 * domain (apply windows, fail open, control if allowed) at the period the
 * domain asks for.
 */
#ifndef BWSS_GLIB_H
#define BWSS_GLIB_H

#include <glib.h>
#include <bwss/domain.h>

G_BEGIN_DECLS

static inline gboolean
bwss_glib_dispatch_ (gpointer data)
{
  bwss_domain_dispatch ((BwssDomain *) data, (uint64_t) g_get_monotonic_time ());
  return G_SOURCE_CONTINUE;
}

/* Attaches a source that dispatches @domain every 10 ms to @context (NULL:
 * the default context).  Returns the source id; remove it with
 * g_source_remove() (on that context) before bwss_domain_close(). */
static inline guint
bwss_domain_attach (BwssDomain *domain, GMainContext *context)
{
  GSource *source = g_timeout_source_new (10);
  g_source_set_callback (source, bwss_glib_dispatch_, domain, NULL);
  g_source_set_name (source, "bwss-domain");
  guint id = g_source_attach (source, context);
  g_source_unref (source);
  return id;
}

G_END_DECLS

#endif
