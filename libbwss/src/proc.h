/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.h — what /proc says about a process or a thread (Linux): is it alive,
 * is it the same process as before (start time), is it stopped, whose is it,
 * does it map a given file.  Internal to libbwss.
 */
#ifndef BWSS_PROC_H
#define BWSS_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Returns the start time of @pid (clock ticks since boot, proc(5) field
 * 22), 0 if unknown. */
uint64_t proc_starttime (pid_t pid);

/* Returns the state letter of @pid (proc(5) field 3: 'R', 'S', 'D', 'T'
 * stopped, 't' traced, 'Z' zombie, ...), or 0 if there is no such task. */
char proc_state (pid_t pid);

/* Returns true if @pid is a live (not zombie) process this user may signal
 * and, unless @starttime is 0 (unknown), started at @starttime. */
bool proc_alive (pid_t pid, uint64_t starttime);

/* Returns 1 if task @tid belongs to another user than this process's
 * effective user, 0 if to this user, -1 if unknown (no such task). */
int proc_foreign (pid_t tid);

/* Returns 1 if task @tid maps the file @dev:@ino, 0 if it does not, -1 if
 * that cannot be known (no permission to read its maps). */
int proc_maps_file (pid_t tid, dev_t dev, ino_t ino);

/* Returns true if @tid is a thread of this process. */
bool proc_is_own_thread (pid_t tid);

#endif
