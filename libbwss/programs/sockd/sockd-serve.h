/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sockd-serve.h — one exchange of bwss-sockd (sockd-proto.h), in a process
 * of its own: sockd.c forks one per connection, so that no client and no
 * holder the kernel keeps waiting (pidfd_getfd waits for an exec in
 * progress) can hold up the service.
 */
#ifndef BWSS_SOCKD_SERVE_H
#define BWSS_SOCKD_SERVE_H

#include <stdbool.h>
#include <stdint.h>
#include "sockd-check.h"

/* Serves connection @conn (non-blocking): waits at most @timeout_ms for
 * one request, answers it, and logs one line on stderr saying who asked
 * for what and what it got. */
void sockd_serve (int conn, const SockdSelf *self, int timeout_ms);

/* Sends the answer @status for socket @inode on @conn, with @fd (SCM_RIGHTS)
 * unless it is -1, without waiting.  Returns false if it could not. */
bool sockd_reply (int conn, uint32_t status, uint64_t inode, int fd);

#endif
