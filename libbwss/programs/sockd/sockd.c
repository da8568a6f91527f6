/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-sockd — hands a user the TCP sockets of the user's own dumpable
 * processes, where Yama's ptrace_scope = 1 refuses bwssd pidfd_getfd(2);
 * never more than ptrace_scope = 0 would give (the rules: sockd-check.h;
 * the threat model: docs/adopt.md, "bwss-sockd").
 *
 *   bwss-sockd [--idle-exit SECONDS]                 (socket-activated)
 *   bwss-sockd --socket PATH [--idle-exit SECONDS]   (listens itself)
 *
 * Socket-activated by bwss-sockd.socket (Accept=no: systemd passes one
 * listening AF_UNIX SOCK_SEQPACKET socket as fd 3, LISTEN_FDS=1), or with
 * --socket it listens at PATH itself (made 0666, removed at exit: for tests
 * and machines without systemd).  One connection is one exchange
 * (sockd-proto.h), served in a child process of its own (sockd-serve.h):
 * this process only accepts, counts and reaps, so it never waits for a
 * client.  At most MAX_EXCHANGES exchanges run at once, MAX_PER_UID of one
 * user; past that a caller is answered SOCKD_BUSY at once.  A client has
 * REQUEST_MS to send its request; an exchange still running after
 * EXCHANGE_S is killed (its own alarm(2): SIGALRM's default action ends it
 * even inside pidfd_getfd's wait for a holder's exec).  With --idle-exit it
 * exits after SECONDS without a connection (systemd starts it again at the
 * next one).
 *
 * Exit status: 0 (SIGTERM, SIGINT, idle); 1 if it cannot listen; 2 for a
 * usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sockd-serve.h"
#include "sys.h"

#define MAX_EXCHANGES 16
#define MAX_PER_UID   4
#define REQUEST_MS    2000
#define EXCHANGE_S    5
#define ACCEPTS_PER_WAKEUP 16

typedef struct {
  pid_t    pid;          /* 0: a free slot */
  uid_t    uid;
} Exchange;

typedef struct {
  int         listener;
  int         signals;
  const char *path;      /* --socket: ours to remove at exit */
  struct stat made;      /* what we bound there */
  unsigned    idle_exit_s;
  uint64_t    last_ms;   /* the last connection or exchange's end */
  Exchange    ex[MAX_EXCHANGES];
  unsigned    n_ex;
  uint64_t    busy_said_ms;
  SockdSelf   self;
} Service;

static uint64_t
now_ms (void)
{
  return bwss__clock_now_us () / 1000u;
}

static void
usage (FILE *to)
{
  fprintf (to,
           "Usage: bwss-sockd [--socket PATH] [--idle-exit SECONDS]\n"
           "Hands a user the TCP sockets of the user's own dumpable processes (for bwssd\n"
           "where Yama's ptrace_scope is 1).  Without --socket it expects the listening\n"
           "socket from systemd (bwss-sockd.socket).\n"
           "  --socket PATH         listen at PATH itself (made 0666, removed at exit)\n"
           "  --idle-exit SECONDS   exit after SECONDS without a connection (0: never)\n");
}

/* ---- the listening socket ---- */

/* Listens at @path: a stale socket file there is replaced, anything else
 * refused.  Returns the socket, or -1 with a message. */
static int
listen_at (Service *sv, const char *path)
{
  struct stat st;
  if (lstat (path, &st) == 0) {
    if (!S_ISSOCK (st.st_mode)) {
      fprintf (stderr, "bwss-sockd: %s exists and is not a socket\n", path);
      return -1;
    }
    int probe = sock_unix_connect (path, 0);
    if (probe >= 0) {
      close (probe);
      fprintf (stderr, "bwss-sockd: another process listens at %s\n", path);
      return -1;
    }
    unlink (path);
  }
  int fd = sock_unix_listen (path, 0666);
  int err = fd < 0 ? -fd : lstat (path, &sv->made) != 0 ? errno : 0;
  if (err) {
    fprintf (stderr, "bwss-sockd: cannot listen at %s: %s\n", path, strerror (err));
    if (fd >= 0)
      close (fd);
    return -1;
  }
  sv->path = path;
  return fd;
}

/* Removes the socket file we made, if it is still ours. */
static void
unlisten (Service *sv)
{
  struct stat st;
  if (sv->path && lstat (sv->path, &st) == 0 && st.st_dev == sv->made.st_dev && st.st_ino == sv->made.st_ino)
    unlink (sv->path);
}

/* ---- exchanges ---- */

static unsigned
exchanges_of (const Service *sv, uid_t uid)
{
  unsigned n = 0;
  for (unsigned i = 0; i < MAX_EXCHANGES; i++)
    if (sv->ex[i].pid && sv->ex[i].uid == uid)
      n++;
  return n;
}

/* Answers @conn SOCKD_BUSY, saying so at most once a second. */
static void
busy (Service *sv, int conn, uid_t uid)
{
  sockd_reply (conn, SOCKD_BUSY, 0, -1);
  uint64_t now = now_ms ();
  if (now - sv->busy_said_ms >= 1000) {
    fprintf (stderr, "bwss-sockd: uid %u: refused: %s (%u exchanges, %u of this uid)\n", (unsigned) uid,
             sockd_status_text (SOCKD_BUSY), sv->n_ex, exchanges_of (sv, uid));
    sv->busy_said_ms = now;
  }
}

/* Starts the exchange of connection @conn in a child process. */
static void
start_exchange (Service *sv, int conn)
{
  struct ucred cr = { 0 };
  if (sock_peer_cred (conn, &cr) != 0)
    return;
  if (sv->n_ex >= MAX_EXCHANGES || exchanges_of (sv, cr.uid) >= MAX_PER_UID) {
    busy (sv, conn, cr.uid);
    return;
  }
  pid_t pid = fork ();
  if (pid < 0) {
    fprintf (stderr, "bwss-sockd: cannot fork: %s\n", strerror (errno));
    sockd_reply (conn, SOCKD_INTERNAL, 0, -1);
    return;
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    close (sv->listener);
    close (sv->signals);
    alarm (EXCHANGE_S);
    sockd_serve (conn, &sv->self, REQUEST_MS);
    _exit (0);
  }
  for (unsigned i = 0; i < MAX_EXCHANGES; i++)
    if (sv->ex[i].pid == 0) {
      sv->ex[i] = (Exchange) { .pid = pid, .uid = cr.uid };
      sv->n_ex++;
      break;
    }
}

/* Accepts what is waiting (a bounded number per wakeup). */
static void
accept_some (Service *sv)
{
  for (int i = 0; i < ACCEPTS_PER_WAKEUP; i++) {
    int conn = accept4 (sv->listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (conn < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        fprintf (stderr, "bwss-sockd: accept: %s\n", strerror (errno));
      return;
    }
    sv->last_ms = now_ms ();
    start_exchange (sv, conn);
    close (conn);                          /* the child has its own */
  }
}

/* Reaps the exchanges that ended. */
static void
reap (Service *sv)
{
  pid_t pid;
  int status;
  while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
    for (unsigned i = 0; i < MAX_EXCHANGES; i++)
      if (sv->ex[i].pid == pid) {
        if (WIFSIGNALED (status) && WTERMSIG (status) == SIGALRM)
          fprintf (stderr, "bwss-sockd: uid %u: an exchange took more than %d ms: killed\n",
                   (unsigned) sv->ex[i].uid, EXCHANGE_S * 1000);
        sv->ex[i].pid = 0;
        sv->n_ex--;
        sv->last_ms = now_ms ();
      }
}

/* Reads the pending signals.  Returns false on SIGTERM or SIGINT. */
static bool
read_signals (Service *sv)
{
  struct signalfd_siginfo si;
  bool go_on = true;
  while (read (sv->signals, &si, sizeof si) == (ssize_t) sizeof si)
    if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
      go_on = false;
  reap (sv);
  return go_on;
}

/* Serves until SIGTERM, SIGINT or the idle time. */
static void
run (Service *sv)
{
  sv->last_ms = now_ms ();
  for (;;) {
    int timeout = -1;
    if (sv->idle_exit_s && sv->n_ex == 0) {
      uint64_t idle_until = sv->last_ms + (uint64_t) sv->idle_exit_s * 1000u, now = now_ms ();
      if (now >= idle_until)
        return;
      timeout = (int) (idle_until - now);
    }
    struct pollfd p[2] = { { .fd = sv->listener, .events = POLLIN }, { .fd = sv->signals, .events = POLLIN } };
    if (poll (p, 2, timeout) < 0 && errno != EINTR) {
      fprintf (stderr, "bwss-sockd: poll: %s\n", strerror (errno));
      return;
    }
    if ((p[1].revents & POLLIN) && !read_signals (sv))
      return;
    if (p[0].revents & POLLIN)
      accept_some (sv);
  }
}

/* Parses the command line into @sv and *@path.  0, or 2 with a message. */
static int
parse_options (int argc, char **argv, Service *sv, const char **path)
{
  static const struct option opts[] = {
    { "socket", required_argument, NULL, 's' },
    { "idle-exit", required_argument, NULL, 'i' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  char *end;
  while ((c = getopt_long (argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 's':
      *path = optarg;
      break;
    case 'i': {
      unsigned long v = strtoul (optarg, &end, 10);
      if (*optarg == '\0' || *end != '\0' || v > 86400) {
        fprintf (stderr, "bwss-sockd: --idle-exit: '%s' is not a number of seconds (0 to 86400)\n", optarg);
        return 2;
      }
      sv->idle_exit_s = (unsigned) v;
      break;
    }
    case 'h':
      usage (stdout);
      exit (0);
    default:
      usage (stderr);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf (stderr, "bwss-sockd: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  return 0;
}

/* Blocks the signals we read from a signalfd.  Returns it, or -1. */
static int
signals_fd (void)
{
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  sigprocmask (SIG_BLOCK, &set, NULL);
  signal (SIGPIPE, SIG_IGN);
  return signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int
main (int argc, char **argv)
{
  static Service sv;
  const char *path = NULL;
  int status = parse_options (argc, argv, &sv, &path);
  if (status)
    return status;
  if (sockd_self_init (&sv.self) != 0) {
    fprintf (stderr, "bwss-sockd: cannot read its own namespaces: %s\n", strerror (errno));
    return 1;
  }
  sv.listener = path ? listen_at (&sv, path) : sock_systemd_listener ();
  if (sv.listener == -ENOENT && path == NULL) {
    fprintf (stderr, "bwss-sockd: no socket: start it with bwss-sockd.socket, or give --socket PATH\n");
    usage (stderr);
    return 2;
  }
  if (sv.listener < 0 && path == NULL)
    fprintf (stderr, "bwss-sockd: systemd must pass exactly one listening SOCK_SEQPACKET socket "
             "(see bwss-sockd.socket): %s\n", strerror (-sv.listener));
  if (sv.listener < 0)
    return 1;
  sv.signals = signals_fd ();
  if (sv.signals < 0) {
    fprintf (stderr, "bwss-sockd: signalfd: %s\n", strerror (errno));
    unlisten (&sv);
    return 1;
  }
  struct sockaddr_un a;
  socklen_t alen = sizeof a;
  memset (&a, 0, sizeof a);
  getsockname (sv.listener, (struct sockaddr *) &a, &alen);
  int scope = proc_yama_scope ();
  fprintf (stderr, "bwss-sockd: listening at %s (%s%s)\n", a.sun_path[0] ? a.sun_path : "?",
           scope < 0 ? "no Yama in this kernel" : scope < 2 ? "Yama ptrace_scope " : "",
           scope < 0 ? "" : scope == 0 ? "0" : scope == 1 ? "1" : "Yama ptrace_scope is 2 or 3: every request is refused");
  run (&sv);
  unlisten (&sv);
  return 0;
}
