/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* idmap.c — see idmap.h. */
#include <stdlib.h>
#include <string.h>
#include "idmap.h"

/* Returns the first bucket to probe for @key: a 64-bit mix (splitmix64's
 * finaliser), so ids that differ only in their high word (a slot's
 * generation) spread too. */
static size_t
bucket (uint64_t key, size_t cap)
{
  key ^= key >> 30;
  key *= UINT64_C (0xbf58476d1ce4e5b9);
  key ^= key >> 27;
  key *= UINT64_C (0x94d049bb133111eb);
  key ^= key >> 31;
  return (size_t) key & (cap - 1);
}

bool
idmap_get (const IdMap *m, uint64_t key, uint32_t *val)
{
  if (m->cap == 0)
    return false;
  for (size_t i = bucket (key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->vals[i] == 0)
      return false;
    if (m->keys[i] == key) {
      *val = m->vals[i] - 1;
      return true;
    }
  }
}

/* Puts @key → @val into buckets known to have room. */
static void
insert (IdMap *m, uint64_t key, uint32_t val)
{
  size_t i = bucket (key, m->cap);
  while (m->vals[i] != 0 && m->keys[i] != key)
    i = (i + 1) & (m->cap - 1);
  if (m->vals[i] == 0)
    m->n++;
  m->keys[i] = key;
  m->vals[i] = val + 1;
}

/* Doubles the buckets (at least 16), moving every entry.  Returns false if
 * out of memory (then @m is unchanged). */
static bool
grow (IdMap *m)
{
  size_t cap = m->cap ? 2 * m->cap : 16;
  uint64_t *keys = malloc (cap * sizeof *keys);
  uint32_t *vals = calloc (cap, sizeof *vals);
  if (keys == NULL || vals == NULL) {
    free (keys);
    free (vals);
    return false;
  }
  IdMap old = *m;
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  m->n = 0;
  for (size_t i = 0; i < old.cap; i++)
    if (old.vals[i])
      insert (m, old.keys[i], old.vals[i] - 1);
  free (old.keys);
  free (old.vals);
  return true;
}

bool
idmap_put (IdMap *m, uint64_t key, uint32_t val)
{
  if (2 * (m->n + 1) > m->cap && !grow (m))
    return false;
  insert (m, key, val);
  return true;
}

void
idmap_clear (IdMap *m)
{
  if (m->cap)
    memset (m->vals, 0, m->cap * sizeof *m->vals);
  m->n = 0;
}

void
idmap_free (IdMap *m)
{
  free (m->keys);
  free (m->vals);
  memset (m, 0, sizeof *m);
}
