/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace.c — $BWSS_TRACE_FIRST: the file each process appends one line to
 * per event of a flow's start (the shim: the domain joined, a socket's
 * first data and its registration; bwssd: a flow admitted, a first clamp),
 * as "<CLOCK_MONOTONIC s.µs> pid <pid> <who>: <event>", on the lab
 * recorder's clock, so a run can tell when each flow met bwssd against when
 * its bytes came.  A measurement aid; unset, nothing.
 *
 * Written with the system calls themselves (open, write, close), not libc's
 * entry points: inside an application the preload shim hooks close(), and
 * no stdio buffer or lock is taken in whatever thread traces.  The line is
 * one write(2) on an O_APPEND file, so lines of several processes never
 * interleave.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "sys.h"

/* bytes of one line, its end included: an event is one short sentence */
#define TRACE_LINE_MAX 512

void
sys_trace_first (const char *who, const char *fmt, ...)
{
  const char *path = getenv ("BWSS_TRACE_FIRST");
  if (path == NULL || *path == '\0')
    return;
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  char line[TRACE_LINE_MAX];
  int n = snprintf (line, sizeof line, "%ld.%06ld pid %d %s: ", (long) ts.tv_sec, ts.tv_nsec / 1000,
                    (int) getpid (), who);
  if (n <= 0 || (size_t) n >= sizeof line)
    return;
  va_list ap;
  va_start (ap, fmt);
  int m = vsnprintf (line + n, sizeof line - (size_t) n, fmt, ap);
  va_end (ap);
  if (m < 0 || (size_t) (n + m) >= sizeof line - 1)
    return;                              /* a cut line would mislead: none */
  n += m;
  line[n++] = '\n';
  int fd = (int) syscall (SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  ssize_t w = (ssize_t) syscall (SYS_write, fd, line, (size_t) n);
  (void) w;
  sys_close (fd);
}
