/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idmap.h — a map from 64-bit flow ids to array indices, O(1) on average:
 * open addressing with linear probing, at most half full.  Internal to
 * libbwss (the controller's lookup of a flow by id).
 */
#ifndef BWSS_IDMAP_H
#define BWSS_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t *keys;
  uint32_t *vals;        /* index + 1; 0 = empty bucket */
  size_t    cap;         /* a power of two, or 0 */
  size_t    n;
} IdMap;

/* Returns true and sets *@val if @key is in @m. */
bool idmap_get (const IdMap *m, uint64_t key, uint32_t *val);
/* Maps @key to @val (replacing any value).  Returns false if out of memory. */
bool idmap_put (IdMap *m, uint64_t key, uint32_t val);
/* Empties @m, keeping its memory. */
void idmap_clear (IdMap *m);
void idmap_free (IdMap *m);

#endif
