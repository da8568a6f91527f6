/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sockd-proto.h — what bwss-sockd and its clients say to each other.
 *
 * bwss-sockd (libbwss/programs/sockd/) hands a caller a duplicate of a TCP
 * socket held by one of the caller's own processes, where Yama's
 * ptrace_scope = 1 refuses the caller pidfd_getfd(2), and never more than
 * ptrace_scope = 0 would give it (docs/adopt.md, "bwss-sockd").
 *
 * Transport: an AF_UNIX SOCK_SEQPACKET socket (BWSS_SOCKD_PATH; socket
 * activated).  One connection carries one exchange: the client sends one
 * SockdRequest in one message, the service answers with one SockdReply in
 * one message, carrying the socket (SCM_RIGHTS, exactly one fd) when and
 * only when status is SOCKD_OK, then closes.  Both are fixed-size, in the
 * host's byte order (the two ends share the machine).
 */
#ifndef BWSS_SOCKD_PROTO_H
#define BWSS_SOCKD_PROTO_H

#include <stdint.h>

#define BWSS_SOCKD_PATH  "/run/bwss-sockd.sock"
#define BWSS_SOCKD_MAGIC 0x62777331u          /* "bws1": protocol version 1 */

typedef struct {
  uint32_t magic;      /* BWSS_SOCKD_MAGIC */
  int32_t  pid;        /* the process holding the socket (the service's pid namespace) */
  int32_t  fd;         /* the socket's fd number in that process */
  uint32_t reserved;   /* 0 */
  uint64_t inode;      /* the socket's inode (sock_diag, /proc/PID/fd) */
} SockdRequest;

typedef struct {
  uint32_t magic;      /* BWSS_SOCKD_MAGIC */
  uint32_t status;     /* a SockdStatus */
  uint64_t inode;      /* the request's */
} SockdReply;

_Static_assert (sizeof (SockdRequest) == 24, "SockdRequest is 24 bytes on the wire");
_Static_assert (sizeof (SockdReply) == 16, "SockdReply is 16 bytes on the wire");

/* The answers, with what they mean.  The service sends the codes up to
 * SOCKD_INTERNAL; the last three are the client's own (it never got an
 * answer).  The numbers are the protocol's: append only. */
#define SOCKD_STATUSES(X) \
  X (SOCKD_OK,               "granted") \
  X (SOCKD_BAD_REQUEST,      "a malformed request") \
  X (SOCKD_BUSY,             "too many requests at once (try again later)") \
  X (SOCKD_YAMA_STRICT,      "Yama ptrace_scope is 2 or 3: the administrator allows no user to take another process's files") \
  X (SOCKD_CALLER_ROOT,      "the caller is root (it needs no helper)") \
  X (SOCKD_CALLER_IDS,       "the caller's real, effective, saved and filesystem ids differ") \
  X (SOCKD_CALLER_SANDBOXED, "the caller is sandboxed (no_new_privs or a seccomp filter)") \
  X (SOCKD_CALLER_NAMESPACE, "the caller is in another user or pid namespace") \
  X (SOCKD_CALLER_CONFINED,  "the caller is confined by a security module (not unconfined)") \
  X (SOCKD_GONE,             "the process is gone") \
  X (SOCKD_OTHER_USER,       "the process is another user's (or changed its user ids)") \
  X (SOCKD_OTHER_GROUP,      "the process runs with other group ids than the caller's") \
  X (SOCKD_NOT_DUMPABLE,     "the process is not dumpable") \
  X (SOCKD_CAPABILITIES,     "the process has capabilities the caller lacks") \
  X (SOCKD_TARGET_NAMESPACE, "the process is in another user namespace") \
  X (SOCKD_NO_SUCH_FD,       "the process has no such fd") \
  X (SOCKD_NOT_TCP,          "the fd is not a TCP socket") \
  X (SOCKD_STALE,            "the fd is not that socket (closed and reused)") \
  X (SOCKD_SOCKET_OTHER_USER, "the socket is another user's") \
  X (SOCKD_NOT_CONNECTED,    "the socket is not a connected TCP socket of this network namespace") \
  X (SOCKD_CHANGED,          "the process changed while its socket was taken") \
  X (SOCKD_INTERNAL,         "the helper failed (see its log)") \
  X (SOCKD_UNREACHABLE,      "not running (no socket to connect to)") \
  X (SOCKD_TIMEOUT,          "no answer in time") \
  X (SOCKD_PROTOCOL,         "a malformed answer")

#define SOCKD_ENUM_ITEM(code, text) code,
typedef enum { SOCKD_STATUSES (SOCKD_ENUM_ITEM) SOCKD_N_STATUSES } SockdStatus;
#undef SOCKD_ENUM_ITEM

/* Returns what @status means (static). */
static inline const char *
sockd_status_text (uint32_t status)
{
#define SOCKD_TEXT_ITEM(code, text) [code] = text,
  static const char *const texts[] = { SOCKD_STATUSES (SOCKD_TEXT_ITEM) };
#undef SOCKD_TEXT_ITEM
  return status < SOCKD_N_STATUSES ? texts[status] : "an unknown answer";
}

#endif
