/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.c — reading /proc/<pid>/{stat,status,maps} (see proc.h).  Every
 * function reads one small file and never blocks on another process.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "sys.h"

/* Reads proc(5) fields 3 (state) and 22 (start time) of @pid.  Returns 0,
 * or -1 if there is no such task or the file cannot be parsed. */
static int
read_stat (pid_t pid, char *state, uint64_t *starttime)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return -1;
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = '\0';
  /* comm may hold spaces and parentheses: fields restart after the last ')' */
  char *p = strrchr (buf, ')');
  unsigned long long st = 0;
  char c = 0;
  if (p == NULL
      || sscanf (p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                 &c, &st) != 2)
    return -1;
  *state = c;
  *starttime = st;
  return 0;
}

uint64_t
proc_starttime (pid_t pid)
{
  char state;
  uint64_t st;
  return pid > 0 && read_stat (pid, &state, &st) == 0 ? st : 0;
}

char
proc_state (pid_t pid)
{
  char state;
  uint64_t st;
  return pid > 0 && read_stat (pid, &state, &st) == 0 ? state : 0;
}

bool
proc_alive (pid_t pid, uint64_t starttime)
{
  if (pid <= 0 || kill (pid, 0) != 0)     /* gone, or another user's */
    return false;
  char state;
  uint64_t st;
  if (read_stat (pid, &state, &st) != 0)
    return starttime == 0;                 /* no /proc: trust kill() alone */
  if (state == 'Z' || state == 'X')
    return false;
  return starttime == 0 || st == starttime;
}

int
proc_foreign (pid_t tid)
{
  char path[64], line[256];
  snprintf (path, sizeof path, "/proc/%d/status", (int) tid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return -1;
  int result = -1;
  while (fgets (line, sizeof line, f)) {
    unsigned long real, effective;
    if (sscanf (line, "Uid: %lu %lu", &real, &effective) == 2) {
      result = effective != (unsigned long) geteuid ();
      break;
    }
  }
  fclose (f);
  return result;
}

int
proc_maps_file (pid_t tid, dev_t dev, ino_t ino)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/maps", (int) tid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return errno == ENOENT ? 0 : -1;
  char *line = NULL;
  size_t cap = 0;
  int found = 0;
  /* "start-end perms offset major:minor inode path" */
  while (!found && getline (&line, &cap, f) > 0) {
    unsigned maj, min;
    unsigned long long inode;
    if (sscanf (line, "%*x-%*x %*s %*x %x:%x %llu", &maj, &min, &inode) == 3)
      found = maj == major (dev) && min == minor (dev) && inode == (unsigned long long) ino;
  }
  /* reading someone else's maps without permission gives an empty file */
  bool unreadable = ferror (f) != 0;
  free (line);
  fclose (f);
  return found ? 1 : unreadable ? -1 : 0;
}

bool
proc_is_own_thread (pid_t tid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/task/%d", (int) tid);
  return access (path, F_OK) == 0;
}
