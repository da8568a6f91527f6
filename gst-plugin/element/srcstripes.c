/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* srcstripes.c — reading over n connections on threads (see srcstripes.h). */
#include <string.h>
#include "srcstripes.h"

GST_DEBUG_CATEGORY_EXTERN (bwss_http_src_debug);
#define GST_CAT_DEFAULT bwss_http_src_debug

typedef struct {
  SrcStripes *set;
  guint       index;
  GThread    *thread;
  SrcFlow     flow;            /* its connection's stripe flow */
} Worker;

struct SrcStripes {
  GMutex        lock;
  GCond         cond;          /* a chunk's bytes, a free place in the window, the end */
  StripePlan    plan;          /* the set's lock */
  gboolean      stopping;      /* the set's lock */
  GError       *error;         /* the set's lock: the first failure for good */
  gboolean      no_ranges;     /* the set's lock */
  /* fixed from the start */
  GstObject    *owner;
  HttpConfig    http;
  gchar        *uri;
  gint          retries;
  guint64       size;
  guint         n;
  SrcFlow      *flow;          /* the element's */
  HttpAcceptCertificateFunc accept_certificate;
  gpointer      accept_data;
  GCancellable *cancel;        /* every worker's operations */
  GCancellable *flushing;
  gulong        flush_link, wake_link;
  Worker       *workers;
};

/* ---- a worker ---- */

static void
worker_connected (int fd, gpointer data)
{
  Worker *w = data;
  src_flow_connected (&w->flow, fd);
}

static gboolean
worker_accept (GTlsCertificate *cert, GTlsCertificateFlags errors, gpointer data)
{
  Worker *w = data;
  SrcStripes *s = w->set;
  return s->accept_certificate && s->accept_certificate (cert, errors, s->accept_data);
}

/* Reads the body of the open response into @c from what arrived, to the
 * chunk's end or the body's.  Returns TRUE at either (*@got the bytes it
 * brought), FALSE with @error.  Only this worker writes the chunk's bytes
 * and its count, so it reads the count without the lock; the chunk stays
 * its own until stripe_plan_done. */
static gboolean
read_body (Worker *w, HttpClient *client, StripeChunk *c, guint64 *got, GError **error)
{
  SrcStripes *s = w->set;
  guint64 len = c->end - c->start;
  *got = 0;
  while (c->filled < len) {
    gssize n = http_client_read (client, c->data + c->filled, (gsize) (len - c->filled), s->cancel, error);
    if (n < 0)
      return FALSE;
    if (n == 0)
      return TRUE;                     /* a shorter range than asked: the rest next */
    g_mutex_lock (&s->lock);
    stripe_plan_filled (&s->plan, c, (gsize) n);
    g_cond_broadcast (&s->cond);
    g_mutex_unlock (&s->lock);
    *got += (guint64) n;
  }
  /* the body's end, so that the connection serves the next chunk */
  guint8 byte;
  gssize n = http_client_read (client, &byte, 1, s->cancel, NULL);
  if (n > 0) {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_BAD_RESPONSE, "the body goes on past the range asked for");
    return FALSE;
  }
  return TRUE;
}

/* One request for the rest of @c.  Returns TRUE when it ran without a
 * failure (*@got bytes), else FALSE with @error and *@retryable. */
static gboolean
request_rest (Worker *w, HttpClient *client, StripeChunk *c, guint64 *got, gboolean *retryable,
              GError **error)
{
  SrcStripes *s = w->set;
  BwssPrefs prefs;
  src_flow_parent_prefs (s->flow, &prefs);
  src_flow_set_prefs (&w->flow, &prefs);
  src_flow_check (&w->flow);
  *got = 0;
  HttpResult r = http_client_open_range (client, &s->http, s->uri, c->start + c->filled, c->end - 1,
                                         s->cancel, error);
  if (r != HTTP_OK) {
    /* a 500 or a 503 too: a server busy for one connection of several */
    *retryable = r == HTTP_RETRY || g_error_matches (*error, HTTP_ERROR, HTTP_ERROR_UNAVAILABLE);
    return FALSE;
  }
  const HttpResponse *resp = http_client_response (client);
  src_flow_response (&w->flow, resp->connection_id);
  if (resp->have_size && resp->size != s->size) {
    g_set_error (error, HTTP_ERROR, HTTP_ERROR_CHANGED,
                 "the resource changed while it was read (%" G_GUINT64_FORMAT " bytes, not %" G_GUINT64_FORMAT ")",
                 resp->size, s->size);
    *retryable = FALSE;
    return FALSE;
  }
  if (!read_body (w, client, c, got, error)) {
    *retryable = !g_error_matches (*error, HTTP_ERROR, HTTP_ERROR_BAD_FRAMING)
                 && !g_error_matches (*error, HTTP_ERROR, HTTP_ERROR_BAD_RESPONSE);
    return FALSE;
  }
  return TRUE;
}

/* Ends the reading with @err (taken), unless it ended already. */
static void
fail (SrcStripes *s, GError *err)
{
  g_mutex_lock (&s->lock);
  if (g_error_matches (err, HTTP_ERROR, HTTP_ERROR_NO_RANGES)) {
    s->no_ranges = TRUE;
    g_clear_error (&err);
  } else if (s->error == NULL && !g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    s->error = err;
    err = NULL;
  }
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
  g_clear_error (&err);
}

/* Fetches the rest of @c: requests until it is whole, at most retries + 1
 * of them without a byte.  FALSE if the reading ended (failed, cancelled). */
static gboolean
fetch_chunk (Worker *w, HttpClient *client, StripeChunk *c)
{
  SrcStripes *s = w->set;
  gint without_byte = 0;
  while (c->filled < c->end - c->start) {
    GError *err = NULL;
    guint64 got;
    gboolean retryable = FALSE;
    gboolean ok = request_rest (w, client, c, &got, &retryable, &err);
    without_byte = got > 0 ? 0 : without_byte + 1;
    if (ok)
      continue;
    if (err == NULL)                   /* every failure says why; never a silent end */
      err = g_error_new_literal (HTTP_ERROR, HTTP_ERROR_READ, "a stripe's request failed");
    if (g_cancellable_is_cancelled (s->cancel) || !retryable
        || (s->retries >= 0 && without_byte > s->retries)) {
      http_client_close (client);
      fail (s, err);
      return FALSE;
    }
    GST_WARNING_OBJECT (s->owner, "connection %u, bytes %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
                        ": %s; asking again from %" G_GUINT64_FORMAT, w->index, c->start, c->end - 1,
                        err->message, c->start + c->filled);
    g_clear_error (&err);
    http_client_close (client);
  }
  return TRUE;
}

/* Takes the next chunk, waiting for a place in the window; NULL when there
 * is nothing left for this worker to do.  The set's lock held. */
static StripeChunk *
next_chunk (SrcStripes *s)
{
  for (;;) {
    if (s->stopping || s->error || s->no_ranges || g_cancellable_is_cancelled (s->cancel))
      return NULL;
    StripeChunk *c = stripe_plan_take (&s->plan);
    if (c)
      return c;
    if (s->plan.next >= s->plan.stop)
      return NULL;                     /* every chunk assigned */
    g_cond_wait (&s->cond, &s->lock);
  }
}

static gpointer
worker_main (gpointer data)
{
  Worker *w = data;
  SrcStripes *s = w->set;
  HttpClient *client = http_client_new (worker_connected, w);
  http_client_set_accept_certificate (client, worker_accept);
  g_mutex_lock (&s->lock);
  for (;;) {
    StripeChunk *c = next_chunk (s);
    if (c == NULL)
      break;
    g_mutex_unlock (&s->lock);
    GST_LOG_OBJECT (s->owner, "connection %u: bytes %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT,
                    w->index, c->start + c->filled, c->end - 1);
    gboolean ok = fetch_chunk (w, client, c);
    g_mutex_lock (&s->lock);
    if (!ok) {
      stripe_plan_give_back (&s->plan, c);
      break;
    }
    stripe_plan_done (&s->plan, c);
  }
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
  /* the session and its connection go in the thread that used them */
  http_client_free (client);
  src_flow_clear (&w->flow);
  return NULL;
}

/* ---- the set ---- */

static void
on_flushing (GCancellable *flushing, gpointer data)
{
  g_cancellable_cancel (G_CANCELLABLE (data));
}

static void
on_cancelled (GCancellable *cancel, gpointer data)
{
  SrcStripes *s = data;
  g_mutex_lock (&s->lock);
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

SrcStripes *
src_stripes_new (SrcStripesSetup *setup)
{
  SrcStripes *s = g_new0 (SrcStripes, 1);
  g_mutex_init (&s->lock);
  g_cond_init (&s->cond);
  stripe_plan_init (&s->plan, setup->from, setup->size, setup->chunk, setup->connections);
  s->owner = setup->owner;
  s->http = setup->http;
  memset (&setup->http, 0, sizeof setup->http);
  s->uri = g_steal_pointer (&setup->uri);
  s->retries = setup->retries;
  s->size = setup->size;
  s->n = setup->connections;
  s->flow = setup->flow;
  s->accept_certificate = setup->accept_certificate;
  s->accept_data = setup->accept_data;
  s->cancel = g_cancellable_new ();
  s->wake_link = g_cancellable_connect (s->cancel, G_CALLBACK (on_cancelled), s, NULL);
  s->flushing = g_object_ref (setup->flushing);
  s->flush_link = g_cancellable_connect (s->flushing, G_CALLBACK (on_flushing),
                                         g_object_ref (s->cancel), g_object_unref);
  s->workers = g_new0 (Worker, s->n);
  GST_INFO_OBJECT (s->owner, "reading over %u connections from byte %" G_GUINT64_FORMAT " of %"
                   G_GUINT64_FORMAT ", chunks of %" G_GUINT64_FORMAT " bytes", s->n, setup->from,
                   s->size, setup->chunk);
  for (guint i = 0; i < s->n; i++) {
    Worker *w = &s->workers[i];
    w->set = s;
    w->index = i;
    src_flow_init_stripe (&w->flow, s->owner, s->flow);
    g_autofree gchar *name = g_strdup_printf ("bwsssrc-conn%u", i);
    w->thread = g_thread_new (name, worker_main, w);
  }
  return s;
}

StripesRead
src_stripes_read (SrcStripes *s, gsize max, GstBuffer **buf, GError **error)
{
  g_mutex_lock (&s->lock);
  for (;;) {
    const guint8 *data = NULL;
    guint64 offset;
    gsize n = MIN (stripe_plan_ready (&s->plan, &data, &offset), max);
    if (n > 0) {
      /* the head's bytes below its count are written once and stay */
      GstBuffer *b = gst_buffer_new_allocate (NULL, n, NULL);
      gst_buffer_fill (b, 0, data, n);
      stripe_plan_pushed (&s->plan, n);
      g_cond_broadcast (&s->cond);     /* a place in the window */
      g_mutex_unlock (&s->lock);
      GST_BUFFER_OFFSET (b) = offset;
      GST_BUFFER_OFFSET_END (b) = offset + n;
      *buf = b;
      return STRIPES_BYTES;
    }
    StripesRead r = STRIPES_BYTES;
    if (stripe_plan_finished (&s->plan))
      r = STRIPES_END;
    else if (g_cancellable_is_cancelled (s->cancel))
      r = STRIPES_FLUSHING;
    else if (s->error) {
      r = STRIPES_ERROR;
      g_propagate_error (error, g_error_copy (s->error));
    } else if (s->no_ranges)
      r = STRIPES_NO_RANGES;
    if (r != STRIPES_BYTES) {
      g_mutex_unlock (&s->lock);
      return r;
    }
    g_cond_wait (&s->cond, &s->lock);
  }
}

void
src_stripes_narrow (SrcStripes *s)
{
  g_mutex_lock (&s->lock);
  if (s->plan.stop > s->plan.next)
    GST_INFO_OBJECT (s->owner, "back to one connection after byte %" G_GUINT64_FORMAT, s->plan.next);
  stripe_plan_narrow (&s->plan);
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

void
src_stripes_free (SrcStripes *s)
{
  if (s == NULL)
    return;
  g_mutex_lock (&s->lock);
  s->stopping = TRUE;
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
  g_cancellable_cancel (s->cancel);    /* a request or a read in progress */
  for (guint i = 0; i < s->n; i++)
    g_thread_join (s->workers[i].thread);
  g_cancellable_disconnect (s->flushing, s->flush_link);
  g_cancellable_disconnect (s->cancel, s->wake_link);
  for (guint i = 0; i < s->n; i++)
    src_flow_destroy (&s->workers[i].flow);
  g_free (s->workers);
  g_object_unref (s->flushing);
  g_object_unref (s->cancel);
  stripe_plan_clear (&s->plan);
  http_config_clear (&s->http);
  g_free (s->uri);
  g_clear_error (&s->error);
  g_cond_clear (&s->cond);
  g_mutex_clear (&s->lock);
  g_free (s);
}
