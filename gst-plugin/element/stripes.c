/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* stripes.c — chunks, the window, the order and the regime of the video over
 * n connections (see stripes.h for the model and the equations). */
#include <stdlib.h>
#include <string.h>
#include "stripes.h"

guint64
stripe_chunk_bytes (double rate_bps)
{
  /* eq. (1) */
  double b = rate_bps > 0.0 ? STRIPE_CHUNK_S * rate_bps / 8.0 : 0.0;
  if (!(b < (double) STRIPE_CHUNK_MAX))
    return STRIPE_CHUNK_MAX;
  return MAX ((guint64) b, (guint64) STRIPE_CHUNK_MIN);
}

guint64
stripe_lead_bytes (guint64 chunk, guint n)
{
  /* eq. (4) */
  return (guint64) STRIPE_WINDOW_PER_CONNECTION * n * chunk;
}

gboolean
stripe_possible (guint n, gboolean have_size, guint64 size, gboolean ranges, guint64 offset,
                 guint64 chunk)
{
  if (n < 2 || !have_size || !ranges || chunk == 0 || offset >= size)
    return FALSE;
  return size - offset >= 2 * chunk;
}

/* ---- chunks, the window and the order ---- */

void
stripe_plan_init (StripePlan *p, guint64 from, guint64 size, guint64 chunk, guint n)
{
  g_return_if_fail (chunk > 0 && n > 0 && from <= size);
  p->size = size;
  p->chunk = chunk;
  p->window = STRIPE_WINDOW_PER_CONNECTION * n;
  p->next = from;
  p->stop = size;
  g_queue_init (&p->chunks);
}

static void
chunk_free (gpointer data)
{
  StripeChunk *c = data;
  g_free (c->data);
  g_free (c);
}

void
stripe_plan_clear (StripePlan *p)
{
  g_queue_clear_full (&p->chunks, chunk_free);
}

StripeChunk *
stripe_plan_untaken (StripePlan *p)
{
  for (GList *l = p->chunks.head; l; l = l->next) {
    StripeChunk *c = l->data;
    if (!c->taken && c->filled < c->end - c->start)
      return c;
  }
  return NULL;
}

StripeChunk *
stripe_plan_take (StripePlan *p)
{
  StripeChunk *c = stripe_plan_untaken (p);
  if (c == NULL) {
    /* eq. (2): the chunks held are those from the head on */
    if (p->next >= p->stop || p->chunks.length >= p->window)
      return NULL;
    c = g_new0 (StripeChunk, 1);
    c->start = p->next;
    c->end = MIN (p->next + p->chunk, p->size);
    c->data = g_malloc (c->end - c->start);
    p->next = c->end;
    g_queue_push_tail (&p->chunks, c);
  }
  c->taken = TRUE;
  return c;
}

void
stripe_plan_give_back (StripePlan *p, StripeChunk *c)
{
  c->taken = FALSE;
  if (c->out)
    chunk_free (c);
}

void
stripe_plan_done (StripePlan *p, StripeChunk *c)
{
  g_return_if_fail (c->filled == c->end - c->start);
  stripe_plan_give_back (p, c);
}

void
stripe_plan_filled (StripePlan *p, StripeChunk *c, gsize n)
{
  g_return_if_fail (c->filled + n <= c->end - c->start);
  c->filled += n;
}

gsize
stripe_plan_ready (StripePlan *p, const guint8 **data, guint64 *offset)
{
  StripeChunk *head = g_queue_peek_head (&p->chunks);
  if (head == NULL) {
    *offset = p->next;
    return 0;
  }
  *data = head->data + head->pushed;
  *offset = head->start + head->pushed;
  return (gsize) (head->filled - head->pushed);
}

void
stripe_plan_pushed (StripePlan *p, gsize n)
{
  if (n == 0)
    return;
  StripeChunk *head = g_queue_peek_head (&p->chunks);
  g_return_if_fail (head != NULL && head->pushed + n <= head->filled);
  head->pushed += n;
  if (head->pushed == head->end - head->start) {
    g_queue_pop_head (&p->chunks);
    head->out = TRUE;
    if (!head->taken)
      chunk_free (head);
  }
}

void
stripe_plan_narrow (StripePlan *p)
{
  p->stop = p->next;
}

guint64
stripe_plan_offset (const StripePlan *p)
{
  StripeChunk *head = g_queue_peek_head ((GQueue *) &p->chunks);
  return head ? head->start + head->pushed : p->next;
}

gboolean
stripe_plan_finished (const StripePlan *p)
{
  return p->chunks.length == 0 && p->next >= p->stop;
}

/* ---- the regime ---- */

void
stripe_mode_init (StripeMode *m)
{
  memset (m, 0, sizeof *m);
  m->regime = STRIPE_ONE;
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* The median of the readings @values at or after @from_us (of the most
 * recent STRIPE_QUEUE_SAMPLES); 0 with none. */
static double
queue_median (const StripeMode *m, const double *values, gint64 from_us)
{
  double sorted[STRIPE_QUEUE_SAMPLES];
  guint n = 0;
  for (guint i = 0; i < m->n_queue; i++)
    if (m->queue_us[i] >= from_us)
      sorted[n++] = values[i];
  if (n == 0)
    return 0.0;
  qsort (sorted, n, sizeof sorted[0], compare_double);
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

/* TRUE if the readings reach back @span_us from @now_us. */
static gboolean
queue_covers (const StripeMode *m, gint64 now_us, gint64 span_us)
{
  for (guint i = 0; i < m->n_queue; i++)
    if (m->queue_us[i] <= now_us - span_us)
      return TRUE;
  return FALSE;
}

StripeRegime
stripe_mode_update (StripeMode *m, StripingPolicy policy, gboolean compete, double queue_ratio,
                    double queue_us, gint64 now_us)
{
  if (m->since_us == 0 || compete != m->compete) {
    m->compete = compete;
    m->since_us = now_us;
  }
  m->queue[m->next_queue] = queue_ratio >= 0.0 ? queue_ratio : 0.0;   /* NaN too */
  m->queue_abs[m->next_queue] = queue_us >= 0.0 ? queue_us : 0.0;
  m->queue_us[m->next_queue] = now_us;
  m->next_queue = (m->next_queue + 1) % STRIPE_QUEUE_SAMPLES;
  m->n_queue = MIN (m->n_queue + 1, STRIPE_QUEUE_SAMPLES);
  if (m->regime == STRIPE_NEVER)
    return m->regime;
  gint64 held = now_us - m->since_us;
  /* the stretch out of COMPETE within this regime */
  gint64 out_from = MAX (m->since_us, m->regime_us);
  StripeRegime before = m->regime;
  switch (policy) {
    case STRIPING_NEVER:
      m->regime = STRIPE_ONE;
      break;
    case STRIPING_ALWAYS:
      m->regime = STRIPE_MANY;
      break;
    case STRIPING_AUTO:
    default:
      if (m->regime == STRIPE_ONE
          && ((compete && held >= STRIPE_ENTER_US)
              || (queue_covers (m, now_us, STRIPE_LONG_US)
                  && queue_median (m, m->queue, now_us - STRIPE_LONG_US) >= STRIPE_LONG_QUEUE)))
        m->regime = STRIPE_MANY;
      else if (m->regime == STRIPE_MANY && !compete && now_us - out_from >= STRIPE_EXIT_US
               && queue_median (m, m->queue_abs, out_from) <= STRIPE_SHORT_QUEUE_US)
        m->regime = STRIPE_ONE;
      break;
  }
  if (m->regime != before)
    m->regime_us = now_us;
  return m->regime;
}

void
stripe_mode_refuse (StripeMode *m)
{
  m->regime = STRIPE_NEVER;
}


const char *
stripe_regime_name (StripeRegime r)
{
  switch (r) {
    case STRIPE_ONE: return "one";
    case STRIPE_MANY: return "many";
    case STRIPE_NEVER: return "never";
    default: return "?";
  }
}
