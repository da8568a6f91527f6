/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * basertt.c — a flow's base RTT: what its RTT would be with the access
 * link's queue empty.
 *
 * Model.  The receiver RTT of flow i is  RTT_i(t) = b_i + q(t) + e_i(t):
 * its path's own delay b_i, the access link's queueing delay q shared by
 * every flow, and any queue elsewhere on its own path e_i >= 0.  The
 * smallest RTT ever seen is b_i as soon as q and e_i were both empty once.
 *
 * Filter.  The base is the minimum of every sample since the flow started
 * (LEDBAT keeps a ten-minute history; we keep the flow's lifetime), the
 * handshake's RTT (tcpi_min_rtt) included: it crossed the link before the
 * flow's own first window filled the queue.  Why no
 * expiry: on a slow link the queue never empties while the flows run — a
 * window cannot be less than a segment, and at 960 kbit/s and 30 ms three
 * flows of one segment each already hold 20 ms of queue — so an expiring
 * minimum would rise to that standing queue, read it as path, and let the
 * loop pile a new target on top of it, every expiry (and a drain, BBR's
 * PROBE_RTT, cannot empty a queue that the windows' floor holds).
 *
 * What that costs and how it is covered:
 *   - a flow that joins behind a queue sees that queue in its first samples.
 *     If other flows measure the link's queue q, the newcomer's base is
 *     seeded with its RTT minus q (bwss__base_rtt_seed): the link's queue
 *     delays every flow alike.  A lower sample later still lowers it;
 *   - a path that gets shorter is adopted at its first sample;
 *   - a path that gets longer reads, for that flow, as a queue of its own:
 *     with other flows present the link's queue is their smallest excess
 *     (capacity-model.c), so it does not count — like a congested path
 *     (Fig. 5c); and its window is sized for its RTT less the link's queue
 *     (controller.c), so it still reaches its target.  A lone flow takes it
 *     for the link's queue: the loop cuts it to its floor (σ never goes below
 *     the minima) until it ends — the one case the lifetime minimum gets
 *     wrong, and a route change under a lone download is rare.
 */
#include "laws.h"

void
bwss__base_rtt_init (BwssBaseRtt *b)
{
  b->base_us = 0;
  b->samples = 0;
  b->seeded = false;
}

void
bwss__base_rtt_sample (BwssBaseRtt *b, uint32_t rtt_us)
{
  if (rtt_us == 0)
    return;
  if (b->base_us == 0 || rtt_us < b->base_us)
    b->base_us = rtt_us;
  if (b->samples < UINT32_MAX)
    b->samples++;
}

void
bwss__base_rtt_seed (BwssBaseRtt *b, uint32_t rtt_us, double queue_us)
{
  if (rtt_us == 0 || !(queue_us > 0.0))
    return;
  double base = (double) rtt_us - queue_us;
  if (base < 1.0)
    base = 1.0;
  if (b->base_us == 0 || base < b->base_us)
    b->base_us = (uint32_t) base;
  b->seeded = true;
}

uint32_t
bwss__base_rtt_get (const BwssBaseRtt *b)
{
  return b->base_us;
}
