/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rundir.c — what the kernel and the file system say about a runtime
 * directory: where the session's tmpfs and the shared-memory tmpfs are, and
 * whether a directory is private to this user and cannot be replaced by
 * anyone else (see sys.h).  Which directory the domain uses, and its
 * files' names, are the domain's (libbwss/lib/domain/runtime.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sys.h"

int
rundir_session_base (char *path, size_t len)
{
  return (size_t) snprintf (path, len, "/run/user/%u", (unsigned) geteuid ()) < len ? 0 : -ENAMETOOLONG;
}

int
rundir_shared_base (char *path, size_t len)
{
  return (size_t) snprintf (path, len, "/dev/shm/bwss-%u.d", (unsigned) geteuid ()) < len
         ? 0 : -ENAMETOOLONG;
}

/* Returns 0 if no other user can replace the directory @real names (an
 * absolute path without symbolic links): every directory above it is
 * root's or this user's, and one that group or others may write has the
 * sticky bit; else -EPERM or -errno. */
static int
safe_ancestors (const char *real)
{
  size_t n = strlen (real);
  if (real[0] != '/' || n >= PATH_MAX)
    return -EPERM;
  for (size_t i = 0; i < n; i++) {
    if (real[i] != '/')
      continue;
    char dir[PATH_MAX];
    size_t len = i == 0 ? 1 : i;       /* "/", then each prefix up to a '/' */
    memcpy (dir, real, len);
    dir[len] = '\0';
    struct stat st;
    if (lstat (dir, &st) != 0)
      return -errno;
    if (!S_ISDIR (st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid ())
        || ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)))
      return -EPERM;
  }
  return 0;
}

int
rundir_check (const char *path, bool create, char *real)
{
  if (create && mkdir (path, 0700) != 0 && errno != EEXIST)
    return -errno;
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  struct stat st;
  int err = 0;
  if (fstat (fd, &st) != 0)
    err = -errno;
  else if (!S_ISDIR (st.st_mode) || st.st_uid != geteuid () || (st.st_mode & 077) != 0)
    err = -EPERM;
  close (fd);
  if (err)
    return err;
  if (realpath (path, real) == NULL)
    return -errno;
  return safe_ancestors (real);
}
