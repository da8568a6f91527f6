/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * runtime.c — where the user's runtime files live, and their names: the
 * domains' sockets, bwssd's lock, the record of the sockets bwssd adopted.  The one place that says so (bwss/domain.h:
 * bwss_runtime_dir(), bwss_domain_path(); the tools, bwssd and the tests ask
 * it, the lab through `bwss-top --paths`).
 *
 * One directory per user that no other local user can enter, so nobody else
 * can plant a file there (a FIFO, a forged record, a huge one), hold a lock
 * bwssd needs, or take a name first:
 *
 *   1. $XDG_RUNTIME_DIR/bwss, if $XDG_RUNTIME_DIR is a directory of this
 *      user closed to everyone else (the session's tmpfs, /run/user/UID);
 *   2. else /run/user/<euid>/bwss, if that is one (a process started
 *      without the session's environment — su, cron, sudo — finds the
 *      desktop's domains);
 *   3. else /dev/shm/bwss-<euid>.d, created if missing.
 *
 * A directory is used only if, opened without following a symbolic link
 * (O_NOFOLLOW) and looked at with fstat() on what was opened, it is a
 * directory owned by the effective user with no permission for group or
 * others, and no other user can replace it: each directory above its real
 * path is root's or this user's, and one that others may write has the
 * sticky bit (/dev/shm, /tmp).  The path handed out is that real path, so
 * no symbolic link another user controls is followed later.  bwss/ is
 * created 0700 inside 1 or 2; the fallback 3 is created 0700 and, if another
 * user made it first, refused (BWSS_EPERM), never used.  A $XDG_RUNTIME_DIR
 * that fails the check (`sudo -E` keeps another user's) is skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bwss/domain.h>
#include "sys.h"

/* Longest suffix of a domain file's name (".bwssd.lock"). */
#define SUFFIX_MAX 32

/* ---- names ---- */

/* Returns true if the @n bytes of @s are all [A-Za-z0-9._-] (so no '/'). */
static bool
name_chars (const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '-' || c == '_' || c == '.'))
      return false;
  }
  return true;
}

int
bwss_domain_check_name (const char *name)
{
  if (name == NULL || name[0] == '\0' || name[0] == '.')
    return BWSS_EINVAL;
  size_t n = strlen (name);
  return n <= BWSS_DOMAIN_NAME_MAX && name_chars (name, n) ? BWSS_OK : BWSS_EINVAL;
}

/* ---- the directory ---- */

static int
from_errno (int e)
{
  switch (e) {
    case ENOENT: return BWSS_ENOENT;
    case ENOMEM: return BWSS_ENOMEM;
    case ENOSPC: case EDQUOT: return BWSS_ENOSPC;
    case ENAMETOOLONG: return BWSS_EINVAL;
    default: return BWSS_EPERM;      /* EACCES, ELOOP (a link), ENOTDIR, EROFS, ... */
  }
}

/* Makes or checks the runtime directory @dir (rundir_check(), sys.h);
 * writes its real path (or, if refused, @dir) to @path.  Returns 0 or a
 * BWSS_E code. */
static int
finish (const char *dir, char *path, size_t len)
{
  char real[PATH_MAX];
  int err = rundir_check (dir, true, real);
  const char *out = err ? dir : real;
  if (strlen (out) >= len)
    return err ? from_errno (-err) : BWSS_EINVAL;
  memcpy (path, out, strlen (out) + 1);
  return err ? from_errno (-err) : 0;
}

int
bwss_runtime_dir (char *path, size_t len)
{
  if (path == NULL || len == 0)
    return BWSS_EINVAL;
  char run_user[64], base[PATH_MAX], dir[PATH_MAX + 8];
  if (rundir_session_base (run_user, sizeof run_user) != 0)
    return BWSS_EINVAL;
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  const char *bases[] = { xdg && xdg[0] == '/' ? xdg : NULL, run_user };
  for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
    if (bases[i] == NULL || rundir_check (bases[i], false, base) != 0)
      continue;                        /* unset, missing or not private: the next */
    snprintf (dir, sizeof dir, "%s/bwss", base);
    return finish (dir, path, len);
  }
  if (rundir_shared_base (dir, sizeof dir) != 0)
    return BWSS_EINVAL;
  return finish (dir, path, len);
}

int
bwss_domain_path (const char *name, const char *suffix, char *path, size_t len)
{
  char own[32];
  if (name == NULL)
    name = getenv ("BWSS_DOMAIN");
  if (name == NULL) {
    snprintf (own, sizeof own, "bwss-%u", (unsigned) geteuid ());
    name = own;
  }
  if (bwss_domain_check_name (name) != BWSS_OK || suffix == NULL || strlen (suffix) > SUFFIX_MAX
      || !name_chars (suffix, strlen (suffix)) || path == NULL || len == 0)
    return BWSS_EINVAL;
  int err = bwss_runtime_dir (path, len);
  if (err)
    return err;
  size_t n = strlen (path);
  if ((size_t) snprintf (path + n, len - n, "/%s%s", name, suffix) >= len - n)
    return BWSS_EINVAL;
  return 0;
}
