/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sockd-check.h — bwss-sockd's rules: who may ask (the caller), whose
 * socket it may get (the holder), and which socket (docs/adopt.md,
 * "bwss-sockd").  Each rule is the kernel's own for pidfd_getfd(2) at
 * Yama ptrace_scope = 0 (kernel/ptrace.c __ptrace_may_access,
 * security/commoncap.c cap_ptrace_access_check), made stricter where the
 * helper cannot tell what the kernel would decide, plus what the issue
 * asks beyond it: never another uid's socket, TCP only.
 *
 *   caller  not root; real = effective = saved = filesystem uid and gid
 *           (SO_PEERCRED's); no no_new_privs and no seccomp filter (no
 *           sandbox); the service's user and pid namespaces; no security
 *           module confines it (SO_PEERSEC / attr/current "unconfined")
 *   holder  real = effective = saved = filesystem uid and gid the
 *           caller's; permitted capabilities a subset of the caller's; the
 *           service's user namespace; dumpable (/proc/PID/fd is owned by
 *           the caller: fs/proc/base.c task_dump_owner() gives a
 *           non-dumpable process's files to root)
 *   socket  the fd is a TCP socket (IPv4 or IPv6), the inode asked for,
 *           of the caller's uid (fstat, and sock_diag by its cookie), in
 *           a connected state of this network namespace
 *
 * The holder is named by a pidfd opened first; its /proc directory is
 * opened next and checked to be that process (the pidfd not yet exited),
 * so a pid reused meanwhile is never looked at; the holder is checked
 * again after its socket was taken.
 */
#ifndef BWSS_SOCKD_CHECK_H
#define BWSS_SOCKD_CHECK_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "sockd-proto.h"

/* What the service compares callers and holders with: its own user and pid
 * namespaces. */
typedef struct {
  struct stat user_ns;
  struct stat pid_ns;
} SockdSelf;

/* Who asks: SO_PEERCRED's, once sockd_check_caller() accepted it. */
typedef struct {
  pid_t    pid;
  uid_t    uid;
  gid_t    gid;
  uint64_t cap_prm;    /* its permitted capabilities */
} SockdCaller;

/* Reads the service's namespaces.  0 or -errno. */
int sockd_self_init (SockdSelf *self);

/* Returns SOCKD_OK and fills @caller if the peer of connection @conn may
 * ask at all; else the refusal (@caller's pid and uid are filled as far
 * as known, for the log). */
SockdStatus sockd_check_caller (int conn, const SockdSelf *self, SockdCaller *caller);

/* Returns SOCKD_OK and a duplicate of the socket (*@fd, close-on-exec) if
 * @caller may have the socket @req names; else the refusal, and *@fd is
 * -1.  *@err gets the errno of a SOCKD_INTERNAL failure, for the log. */
SockdStatus sockd_take (const SockdSelf *self, const SockdCaller *caller, const SockdRequest *req,
                        int *fd, int *err);


#endif
