/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss.h — receiver-driven bandwidth sharing for TCP (umbrella header).
 *
 * libbwss limits the advertised window of each TCP flow a host receives so
 * that the access link is shared the way the user wants (priority, minimum
 * rate, weight) instead of by RTT.  The library has two layers:
 *
 *   bwss/control.h  the pure control laws (FCS, target rate allocation, the
 *                   sigma loop, the controller that ties them together).  No
 *                   I/O, no clock: measurements and time are inputs.
 *   bwss/late.h     the late-packet / prebuffer metric used by the element
 *                   and the lab.
 *   bwss/domain.h   the real-socket side: a per-user domain shared by every
 *                   participating process, flow registration, statistics.
 *
 * Conventions (libuv style): functions that can fail return 0 or a negative
 * BWSS_E* code; bwss_strerror() turns a code into a sentence.  Rates are in
 * bits per second (double), times in microseconds (uint64_t, any monotonic
 * origin), windows in bytes unless a name says "segments".
 */
#ifndef BWSS_BWSS_H
#define BWSS_BWSS_H

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
  BWSS_EVERSION = -1000,   /* a domain segment of another layout version */
};

/* Returns a static, human-readable description of @code (never NULL). */
BWSS_API const char *bwss_strerror (int code);

/* Parses a rate in bit/s with an optional decimal prefix k, M or G (any
 * case) and an optional unit "b", "bps" or "bit/s": "500k", "2.5M",
 * "960000", "1.5Mbit/s".  Returns 0 and sets *out_bps, or BWSS_EINVAL (out
 * untouched) for an empty, negative, non-numeric or trailing-garbage text
 * or a rate above 1 Pbit/s. */
BWSS_API int bwss_parse_rate (const char *text, double *out_bps);

/* Returns the library version as "MAJOR.MINOR.MICRO". */
BWSS_API const char *bwss_version_string (void);

#ifdef __cplusplus
}
#endif

#include <bwss/control.h>
#include <bwss/late.h>

#endif /* BWSS_BWSS_H */
