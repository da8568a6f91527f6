/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss/base.h — what every header of libbwss shares: the export macro, the
 * error codes, the one parser per unit with its limits, the version.
 *
 * Every other header includes this one, never the umbrella bwss/bwss.h, so
 * each compiles on its own and none includes itself back.
 *
 * Conventions (libuv style): functions that can fail return 0 or a negative
 * BWSS_E* code; bwss_strerror() turns a code into a sentence.  Rates are in
 * bits per second (double), times in microseconds (uint64_t, any monotonic
 * origin), windows in bytes unless a name says "segments".
 */
#ifndef BWSS_BASE_H
#define BWSS_BASE_H

#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(BWSS_COMPILATION) && defined(__GNUC__)
#define BWSS_API __attribute__((visibility("default")))
#else
#define BWSS_API
#endif

/* Error codes: negated errno values where one fits, so callers can also
 * hand them to strerror(-code). */
enum {
  BWSS_OK = 0,
  BWSS_EINVAL = -22,       /* an argument is out of range, NaN or NULL */
  BWSS_ENOMEM = -12,       /* allocation failed */
  BWSS_ENOENT = -2,        /* no such flow / no domain */
  BWSS_EEXIST = -17,       /* the flow is already registered */
  BWSS_ENOSPC = -28,       /* the domain's flow table is full */
  BWSS_EBADF = -9,         /* not a connected TCP socket */
  BWSS_EPERM = -1,         /* the segment belongs to someone else / bad mode */
  BWSS_EPROTO = -71,       /* a corrupt or foreign domain segment */
  BWSS_EBUSY = -16,        /* the domain's lock was not free within its bound
                            * (a participant may be stopped inside it); nothing
                            * was changed, try again */
  BWSS_EVERSION = -1000,   /* a domain segment of another layout version */
};

/* Returns a static, human-readable description of @code (never NULL). */
BWSS_API const char *bwss_strerror (int code);

/* ---- units and limits: one parser per unit ------------------------------
 *
 * Every preference that enters a domain (bwss-run's options, the preload
 * shim's BWSS_PRIORITY / BWSS_MIN_RATE / BWSS_WEIGHT, the element's
 * properties, a rules file) is read by these parsers and must lie within
 * these limits: bwss_flow_register() and bwss_flow_set_prefs() refuse
 * anything else (bwss_prefs_check(), BWSS_EINVAL) and a domain segment that
 * holds a preference outside them is corrupt.
 *
 * Numbers are decimal only: ASCII digits with at most one '.', at least one
 * digit, at most BWSS_NUMBER_MAX_CHARS characters ("2", "2.5", ".5", "5.").
 * No sign (a priority may start with '-'), exponent, hex, octal reading of a
 * leading 0 ("010" is ten), space, "inf" or "nan".  Each parser returns 0
 * and sets *out, or BWSS_EINVAL and leaves *out untouched. */
#define BWSS_NUMBER_MAX_CHARS 32
#define BWSS_PRIORITY_MIN     (-1000)   /* a larger priority is served first */
#define BWSS_PRIORITY_MAX     1000
#define BWSS_WEIGHT_MAX       1e9       /* weights are in [0, BWSS_WEIGHT_MAX] */
#define BWSS_RATE_MAX_BPS     1e15      /* rates are in [0, 1 Pbit/s] */

/* A decimal number in [0, @max]. */
BWSS_API int bwss_parse_decimal (const char *text, double max, double *out);

/* An integer of decimal digits only in [0, @max] (byte counts, sizes). */
BWSS_API int bwss_parse_count (const char *text, uint64_t max, uint64_t *out);

/* A rate in bit/s: a decimal number, an optional prefix k, M or G (any
 * case: 1e3, 1e6, 1e9) and an optional unit "b", "bps" or "bit/s": "500k",
 * "2.5M", "960000", "1.5Mbit/s"; at most BWSS_RATE_MAX_BPS. */
BWSS_API int bwss_parse_rate (const char *text, double *out_bps);

/* A weight: a decimal number in [0, BWSS_WEIGHT_MAX]. */
BWSS_API int bwss_parse_weight (const char *text, double *out);

/* A priority: an optional '-' and decimal digits, in
 * [BWSS_PRIORITY_MIN, BWSS_PRIORITY_MAX]. */
BWSS_API int bwss_parse_priority (const char *text, int32_t *out);

/* Whose flows share one share of a domain (bwss/domain.h,
 * bwss_flow_set_share(); bwss_allocate_grouped(): the group as one flow of
 * the preferences its flows carry, split among them). */
typedef enum {
  BWSS_SHARE_FLOW = 0,     /* the flow alone: one share per connection (the
                            * default of bwss_flow_register()) */
  BWSS_SHARE_PROCESS = 1,  /* every flow of the socket's owner process (the
                            * default of bwssd and bwss-run) */
  BWSS_SHARE_UNIT = 2,     /* every flow of the owner's systemd unit: its
                            * cgroup (v2), whichever process holds it */
  BWSS_SHARE_STREAM = 3,   /* the flows one process marks as one stream
                            * (bwss_flow_set_stream()), apart from its others */
} BwssShare;

/* Returns "flow", "process", "unit" or "stream" (NULL for an unknown value). */
BWSS_API const char *bwss_share_name (BwssShare share);
/* Parses "flow", "process" or "unit"; returns 0 or BWSS_EINVAL (out
 * untouched).  Not "stream": a stream is a number its process gives. */
BWSS_API int  bwss_share_parse (const char *text, BwssShare *out);

/* Returns the library version as "MAJOR.MINOR.MICRO". */
BWSS_API const char *bwss_version_string (void);

#ifdef __cplusplus
}
#endif

#endif /* BWSS_BASE_H */
