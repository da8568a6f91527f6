/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* error.c — error strings and the version string. */
#include <bwss/base.h>

/* BWSS_VERSION: the project version, given by libbwss/lib/laws/meson.build */
#ifndef BWSS_VERSION
#error "BWSS_VERSION comes from meson.build (project version)"
#endif

const char *
bwss_strerror (int code)
{
  switch (code) {
    case BWSS_OK:       return "success";
    case BWSS_EINVAL:   return "invalid argument (out of range, NaN or NULL)";
    case BWSS_ENOMEM:   return "out of memory";
    case BWSS_ENOENT:   return "no such flow or domain";
    case BWSS_EEXIST:   return "already registered";
    case BWSS_ENOSPC:   return "the domain's flow table is full";
    case BWSS_EBADF:    return "not a connected TCP socket";
    case BWSS_EPERM:    return "not this user's: the domain segment is not owned by this user with mode 0600, "
                               "or the runtime directory is not a directory of this user closed to others";
    case BWSS_EPROTO:   return "corrupt or foreign domain segment";
    case BWSS_EBUSY:    return "the domain is busy: its lock was not free in time (try again)";
    case BWSS_EVERSION: return "domain segment of another layout version";
    default:            return "unknown error";
  }
}

const char *
bwss_version_string (void)
{
  return BWSS_VERSION;
}
