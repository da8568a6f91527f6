/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sys.h — the system layer of libbwss, private to the library: everything
 * that asks the kernel something or sets something in it, and nothing else.
 *
 *   the clock    CLOCK_MONOTONIC in µs: the clock bwss_domain_dispatch(), the
 *                controller's heartbeat and the shim's read pacing use
 *   knobs.c      a socket's TCP receive-side knobs (the window clamp, the
 *                receive buffer, TCP_INFO) and the kernel's view of every TCP
 *                socket of the namespace (sock_diag dumps and exact lookups)
 *   sockinfo.c   what a socket says about itself and its peer: its kind,
 *                listening, the peer's credentials, pidfd and label; a UNIX
 *                socket connected or bound, one message sent or received on
 *                it with a descriptor, the poll(2) and close(2) it uses (the
 *                system calls, not libc's)
 *   rundir.c     the runtime directory: the session's and the shared tmpfs, and
 *                whether a directory is this user's alone
 *   trace.c      the $BWSS_TRACE_FIRST line writer of the shim and bwssd
 *   proc.c       what /proc says about a process or a thread (alive, same
 *                process as before, whose, its name, executable, cgroup and
 *                fds) and about this kernel (Yama's
 *                ptrace_scope, this process's capabilities and namespaces)
 *
 * The laws (libbwss/lib/laws/) never see this header: the build gives them no
 * include path to it (libbwss/meson.build).
 */
#ifndef BWSS_SYS_H
#define BWSS_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <linux/inet_diag.h>

/* ---- the clock -------------------------------------------------------- */

static inline uint64_t
bwss__clock_now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000ull + (uint64_t) ts.tv_nsec / 1000;
}

/* ---- TCP states -------------------------------------------------------- */

/* The kernel's TCP states, as TCP_INFO's tcpi_state and sock_diag's
 * idiag_state give them (include/net/tcp_states.h: not in the uapi headers,
 * and glibc's netinet/tcp.h, which has them, cannot come beside linux/tcp.h,
 * whose struct tcp_info has tcpi_bytes_received). */
enum {
  SYS_TCP_ESTABLISHED = 1,
  SYS_TCP_FIN_WAIT1 = 4,
  SYS_TCP_FIN_WAIT2 = 5,
  SYS_TCP_CLOSE_WAIT = 8,
};

/* ---- socket knobs and sock_diag (knobs.c) ------------------------------ */

typedef struct {
  uint64_t inode;          /* socket inode: the key across processes */
  uint32_t uid;
  uint64_t bytes_received; /* tcpi_bytes_received */
  uint32_t rtt_us;         /* tcpi_rcv_rtt, else tcpi_rtt */
  uint32_t min_rtt_us;     /* tcpi_min_rtt: the handshake's RTT for a receiver */
  uint32_t mss;            /* tcpi_rcv_mss */
  uint32_t advmss;         /* tcpi_advmss */
  uint32_t window_clamp;   /* tcpi_rcv_ssthresh, what the clamp bounds */
  uint32_t unread;         /* bytes received, not yet read (idiag_rqueue, SIOCINQ) */
  uint32_t rcv_ooopack;    /* tcpi_rcv_ooopack: segments received after a hole, i.e.
                            * losses on its path (Linux >= 5.4; 0 before) */
  uint8_t  state;          /* TCP_ESTABLISHED, … */
  uint8_t  family;         /* AF_INET, AF_INET6 (sock_diag only) */
  struct inet_diag_sockid id; /* sock_diag only: what names it in an exact query */
  uint32_t last_recv_ms;   /* tcpi_last_data_recv: ms since data last arrived */
  uint32_t last_sent_ms;   /* tcpi_last_data_sent: ms since it last sent data (a request) */
  char     remote[64];     /* "addr:port", filled by knob_dump only */
} KnobInfo;

/* Returns true if @fd is a connected (ESTABLISHED) TCP socket over IPv4 or
 * IPv6; false for UDP, UNIX, listening or not-yet-connected sockets. */
bool knob_is_connected_tcp (int fd);

/* Fills @out's measurement fields (state, bytes received, RTTs, MSS,
 * out-of-order segments: what a sock_diag answer gives but the unread
 * bytes, left 0) from TCP_INFO of @fd, a socket the caller holds; leaves
 * @out's identity (inode, uid, family, id, remote) as it was.  0 or
 * -errno. */
int knob_read_sample (int fd, KnobInfo *out);
/* The bytes received and not yet read (SIOCINQ: rcv_nxt − copied_seq, what
 * a sock_diag answer carries as idiag_rqueue) of the connected socket @fd.
 * Never more than the bytes received since a moment it was 0.  0 or
 * -errno. */
int knob_read_unread (int fd, uint32_t *unread);

/* Returns true if @fd still names the socket @inode: an fd number is reused
 * once its socket is closed. */
bool knob_fd_is (int fd, uint64_t inode);

/* Fills @out from TCP_INFO of @fd (inode from fstat).  0 or -errno. */
int knob_read_info (int fd, KnobInfo *out);

/* The window clamp, bytes.  0 or -errno.  Setting needs an established
 * socket (never before connect: the window scale is chosen from it). */
int knob_get_clamp (int fd, uint32_t *bytes);
int knob_set_clamp (int fd, uint32_t bytes);
/* The clamp of a socket nobody clamps: the largest window its scale can
 * advertise, 65535 << tcpi_rcv_wscale (the buffer bounds the window).
 * The kernel writes the clamp of a socket whose buffer autotuning owns
 * itself, to the window the buffer allows, whenever autotuning grows the
 * buffer (tcp_rcvbuf_grow) and whenever the payload-to-memory ratio it
 * measures on a segment larger than the last changes
 * (tcp_measure_rcv_mss), up or down: a clamp we set holds only while we
 * set it again, and a window the buffer allows is never above this one
 * (the scale is chosen so that the largest buffer fits).  0 or -errno. */
int knob_free_clamp (int fd, uint32_t *bytes);
/* Gives a socket's clamp back to the kernel: the free clamp (above), from
 * which the kernel's own writes take over as on a socket never clamped,
 * whenever autotuning owns the buffer or we set it (@buffer_ours: pacing
 * fixed it, and knob_restore_rcvbuf() enlarged it); @orig, the clamp the
 * socket came with, only where the application set the buffer
 * (SO_BUF_LOCK) — the window it chose.  Never a clamp recorded at some
 * moment of the buffer's growth: put back after the buffer stopped
 * growing, that caps the rest of the transfer at a window the path may
 * well exceed, and which moment depends on when the flow was handed over.
 * 0 or -errno. */
int knob_give_back_clamp (int fd, uint32_t orig, bool buffer_ours);

/* The receive buffer (SO_RCVBUF), bytes: set ends the kernel's autotuning
 * for the socket for good (the kernel doubles the value for its overhead);
 * restore sets the largest the kernel allows an unprivileged process
 * (net.core.rmem_max), the nearest to autotuning's room.  0 or -errno. */
int knob_set_rcvbuf (int fd, uint32_t bytes);
int knob_restore_rcvbuf (int fd);

/* A small first window for a TCP socket about to connect, its scale kept:
 * SO_RCVBUF @bytes with the buffer's lock cleared (SO_BUF_LOCK, Linux 5.14),
 * so the kernel chooses the window scale from the system's largest buffer
 * and the SYN's window from this one.  On success *kernel_buf is the
 * socket's buffer before (the kernel's default) and *small_buf after.
 * -EPROTOTYPE: not a TCP socket; -EBUSY: the program set a buffer of its
 * own (left alone); -errno otherwise (nothing changed). */
int knob_first_window_begin (int fd, uint32_t bytes, int *kernel_buf, int *small_buf);
/* Ends it once data came: if the buffer is still @small_buf, back to
 * @kernel_buf unlocked (autotuning), and the clamp the small buffer set at
 * the handshake lifted to the largest window the scale offers (the buffer
 * bounds the window, as on any socket).  0, -ESTALE (the buffer is another
 * now: autotuning grew it, or the fd is another socket) or -errno. */
int knob_first_window_end (int fd, int kernel_buf, int small_buf);

/* "addr:port" / "[addr]:port" of the local and remote ends of @fd. */
void knob_endpoints (int fd, char *local, size_t local_len, char *remote, size_t remote_len);

/* sock_diag: one dump of every TCP socket of this network namespace. */
typedef struct {
  KnobInfo *items;
  size_t    n, cap;
} KnobDump;

/* Dumps the IPv4 and IPv6 TCP sockets of the namespace, in inode order.
 * @dump's array is reused, and given back down to a few times what the
 * dump holds (knobs.c, dump_fit(); knob_query() the same).  0 or -errno. */
int  knob_dump (KnobDump *dump);
/* Asks the kernel about each socket of @want (entries of an earlier dump)
 * by its id, one exact lookup each instead of a walk of the whole
 * connection table (which a dump is, however few sockets we want: ~1 ms a
 * family on a desktop's 256k-bucket table).  @out gets the sockets still
 * there under the same inode, in inode order, in the states a dump lists
 * and others (check ->state).  0 or -errno. */
int  knob_query (const KnobDump *want, KnobDump *out);
/* Fills @out with what names @fd's socket to sock_diag — inode, uid,
 * family and the id an exact query needs (addresses, ports, interface,
 * cookie) — without walking the connection table: @out can go to
 * knob_query() as it is.  0 or -errno (not an IPv4/IPv6 socket, not
 * connected). */
int  knob_diag_id (int fd, KnobInfo *out);
/* Appends @k to @d (0 or -ENOMEM); puts @d in inode order again. */
int  knob_dump_push (KnobDump *d, const KnobInfo *k);
void knob_dump_sort (KnobDump *d);
/* Returns the entry with @inode, or NULL (a binary search). */
const KnobInfo *knob_dump_find (const KnobDump *dump, uint64_t inode);
void knob_dump_clear (KnobDump *dump);

/* ---- what a socket says about itself and its peer (sockinfo.c) --------- */

/* Its family, type and protocol (SO_DOMAIN, SO_TYPE, SO_PROTOCOL).  0 or
 * -errno. */
int sock_kind (int fd, int *domain, int *type, int *protocol);
/* 1 if @fd listens (SO_ACCEPTCONN), 0 if not, or -errno. */
int sock_listening (int fd);
/* The credentials of the peer of the UNIX socket @fd at connect(2)
 * (SO_PEERCRED).  0 or -errno. */
int sock_peer_cred (int fd, struct ucred *cr);
/* A pidfd of the process that connected the UNIX socket @fd, whatever its
 * pid names since (SO_PEERPIDFD, Linux 6.5).  The pidfd, or -errno. */
int sock_peer_pidfd (int fd);
/* The security module's label of the peer (SO_PEERSEC), @len bytes in and
 * out, not terminated.  0 or -errno (-ENOPROTOOPT: no module labels it). */
int sock_peer_label (int fd, char *label, size_t *len);
/* Connects to the AF_UNIX SOCK_SEQPACKET socket at @path (@flags:
 * SOCK_NONBLOCK or 0; close-on-exec always).  The socket, or -errno
 * (-ENAMETOOLONG: no such socket address). */
int sock_unix_connect (const char *path, int flags);
/* Binds a listening AF_UNIX SOCK_SEQPACKET socket (non-blocking,
 * close-on-exec) at @path, its file made with the permissions @mode (under
 * a umask set for the bind: the process's umask meanwhile is not its own,
 * so call it before threads that make files).  The socket, or -errno
 * (-EADDRINUSE: a file is there). */
int sock_unix_listen (const char *path, mode_t mode);
/* The listening socket systemd passed this process (sd_listen_fds(3)'s
 * protocol: $LISTEN_PID this pid, $LISTEN_FDS how many, from fd 3), made
 * close-on-exec and non-blocking; $LISTEN_PID, $LISTEN_FDS and
 * $LISTEN_FDNAMES unset (a child never takes it for its own).  Returns 3;
 * -ENOENT if systemd passed this process none; -EINVAL if not exactly one
 * listening AF_UNIX SOCK_SEQPACKET socket. */
int sock_systemd_listener (void);
/* Tells the service manager @state ("READY=1", "STOPPING=1"): the sending
 * side of the same protocols (sd_notify(3)), without libsystemd — one
 * datagram to the AF_UNIX socket $NOTIFY_SOCKET names (a path, or an
 * abstract name written with a leading '@').  Returns 1 if it was sent, 0
 * without $NOTIFY_SOCKET (started by hand, by a test), -errno if it could
 * not be (-EINVAL: not a socket address systemd writes). */
int sock_systemd_notify (const char *state);
/* Sends @len bytes of @msg on the connected UNIX socket @fd as one message
 * (SOCK_SEQPACKET, SOCK_DGRAM), with @pass (if >= 0) as SCM_RIGHTS,
 * waiting at most @wait_us for room in the peer's buffer (0: never waits;
 * the wait is a ppoll(2) syscall, not the libc call a preload shim hooks).
 * 0, or -errno (-EAGAIN: no room in time). */
int sock_send_msg (int fd, const void *msg, size_t len, int pass, uint64_t wait_us);
/* Receives one message of at most @len bytes on the UNIX socket @fd
 * without waiting, as the recvmsg system call itself (as sys_poll): *@pass
 * gets the descriptor it carries (close-on-exec; -1 if none), *@flags (if
 * not NULL) the message's flags: MSG_TRUNC, MSG_CTRUNC (no room here for
 * its descriptor, or it carried more than one: the others are closed).
 * Returns its length (0: the peer closed), or -errno (-EAGAIN: none waits). */
ssize_t sock_recv_msg (int fd, void *msg, size_t len, int *pass, int *flags);
/* close(2) as the system call itself (as sys_poll). */
int sys_close (int fd);
/* poll(2) for @ms milliseconds (< 0: no bound) as the ppoll system call
 * itself: code that runs inside an application under the preload shim
 * waits without the libc entry point the shim hooks.  poll(2)'s return. */
int sys_poll (struct pollfd *p, nfds_t n, int ms);

/* ---- $BWSS_TRACE_FIRST (trace.c) ---------------------------------------- */

/* Appends "<CLOCK_MONOTONIC s.µs> pid <pid> @who: <@fmt...>" as one line to
 * the file $BWSS_TRACE_FIRST names, with the system calls themselves (safe
 * under the preload shim); unset or empty, nothing.  A line longer than 512
 * bytes is not written. */
void sys_trace_first (const char *who, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* ---- the runtime directory (rundir.c) ----------------------------------- */

/* The session's runtime directory as logind makes it, /run/user/<euid> (a
 * tmpfs of this user's), and the fallback's path on the shared-memory
 * tmpfs, /dev/shm/bwss-<euid>.d.  0 or -ENAMETOOLONG. */
int rundir_session_base (char *path, size_t len);
int rundir_shared_base (char *path, size_t len);

/* Checks the directory @path, creating it (0700) first if @create and it is
 * missing: opened without following a link (O_NOFOLLOW) and looked at with
 * fstat() on what was opened, it must be a directory owned by the effective
 * user with no permission for group or others, and each directory above its
 * real path root's or this user's, one that others may write sticky (so no
 * other user can replace it).  Returns 0 with its real path in @real
 * (PATH_MAX bytes), -EPERM if it fails the check, or another -errno. */
int rundir_check (const char *path, bool create, char *real);

/* ---- procfs (proc.c) ---------------------------------------------------- */

/* Returns the start time of @pid (clock ticks since boot, proc(5) field
 * 22), 0 if unknown. */
uint64_t proc_starttime (pid_t pid);

/* Returns the PID namespace of this process (the inode of
 * /proc/self/ns/pid), 0 if unknown.  Process ids, and so whether a process
 * is alive, mean something only within one. */
uint64_t proc_pid_namespace (void);

/* Returns true if @pid is a live (not zombie) process this user may signal
 * and, unless @starttime is 0 (unknown), started at @starttime. */
bool proc_alive (pid_t pid, uint64_t starttime);

/* Returns 1 if task @tid belongs to another user than this process's
 * effective user, 0 if to this user, -1 if unknown (no such task). */
int proc_foreign (pid_t tid);

/* Writes the name of process @pid (0: this one; proc(5) comm, at most 15
 * bytes) to @comm, without its newline.  0 or -errno (@comm then ""). */
int proc_comm (pid_t pid, char *comm, size_t len);

/* Writes the path of the executable of @pid (0: this one) to @path.
 * Returns its length, or -errno (-ENAMETOOLONG if @len is too small). */
int proc_exe (pid_t pid, char *path, size_t len);

/* Executes this process's executable afresh with @argv (the same file even
 * if its path was replaced since).  Returns only on failure, -errno. */
int proc_exec_self (char *const argv[]);

/* Writes the cgroup of @pid in the unified (v2) hierarchy to @path.  0,
 * -ENOENT if it is in none, or -errno. */
int proc_cgroup (pid_t pid, char *path, size_t len);

/* Sets *@id to the inode of @pid's cgroup (v2) directory under
 * /sys/fs/cgroup: its unit's identity while the unit exists, the same for
 * every process in it (the kernel's cgroup id).  0 or -errno (-ENOENT: in
 * no unified hierarchy, or no cgroup2 file system mounted there: a hybrid
 * system's v1 controllers). */
int proc_cgroup_id (pid_t pid, uint64_t *id);

/* Sets *@uid to the owner of /proc/@pid: the process's effective uid, or
 * root if it is not dumpable.  0 or -errno (-ENOENT: no such process). */
int proc_owner (pid_t pid, uid_t *uid);

/* Calls @fn (@pid, @data) for each process of the pid namespace, until it
 * returns false.  0 or -errno. */
int proc_each_pid (bool (*fn) (pid_t pid, void *data), void *data);

/* Calls @fn (@fd, @data) for each open fd of @pid (0: this process; the fd
 * that reads the list is not given), until it returns false.  0, or
 * -EACCES / -EPERM if its fds may not be read (another user's, or not
 * dumpable), or another -errno. */
int proc_each_fd (pid_t pid, bool (*fn) (int fd, void *data), void *data);

/* Returns the inode of the socket fd @fd of @pid (0: this process) names,
 * 0 if it names no socket (or is gone). */
uint64_t proc_fd_socket (pid_t pid, int fd);
/* Returns 1 if fd @fd of @pid names the open file this process's fd @mine
 * does (the one a socket passed over SCM_RIGHTS or duplicated shares), 0
 * if it names another or none (closed, or @pid gone); -EPERM if @pid's
 * files may not be compared (another user's, or not dumpable), -ENOSYS
 * where the kernel has no kcmp(2).  One system call, no path walked: what
 * a check of many fds a second can afford where proc_fd_socket()'s
 * readlink(2) of /proc costs several times more. */
int proc_fd_same_file (pid_t pid, int fd, int mine);


/* Returns Yama's ptrace_scope (0 to 3), -1 if this kernel has no Yama, 3
 * if Yama is there but its setting cannot be read (the strictest). */
int proc_yama_scope (void);

/* Returns true if this process has capability @cap (linux/capability.h's
 * number) in its effective set. */
bool proc_self_has_cap (int cap);

/* A pidfd of @pid (pidfd_open(2), Linux 5.3: it names that process
 * whatever its pid names later), close-on-exec.  The fd, or -errno. */
int proc_pidfd (pid_t pid);

/* Returns true if the process of @pidfd has exited (or @pidfd is bad). */
bool proc_pidfd_exited (int pidfd);

/* Sends signal @sig to the process of @pidfd (pidfd_send_signal(2), Linux
 * 5.1: never another that took its pid).  0 or -errno. */
int proc_pidfd_signal (int pidfd, int sig);

/* Duplicates fd @fd of @pid into this process, close-on-exec
 * (pidfd_getfd(2), Linux 5.6; ptrace's access rules).  The new fd, or
 * -errno (-EPERM: not allowed, -ESRCH: gone, -EBADF: no such fd, -ENOSYS). */
int proc_take_fd (pid_t pid, int fd);

/* Opens the /proc directory of @pid, O_DIRECTORY | O_CLOEXEC, for reads
 * relative to it (openat) that stay with that process.  fd or -errno. */
int proc_open_dir (pid_t pid);

/* Fills @st from stat(2) of this process's namespace @ns ("user", "pid",
 * ...).  0 or -errno. */
int proc_self_ns (const char *ns, struct stat *st);

/* Reads relative to a /proc directory @dir (proc_open_dir()), so that what
 * is read is the process that was opened, whatever its pid names since. */

/* What proc(5)'s status says of a process's ids, capabilities and sandbox. */
typedef struct {
  unsigned uid[4], gid[4];     /* real, effective, saved, filesystem */
  uint64_t cap_prm;            /* CapPrm */
  int      no_new_privs, seccomp;
  unsigned seen;               /* a bit per field found */
} ProcStatus;

/* Fills @st from the status of @dir's process.  0, or -errno (-ESRCH: it
 * is gone; -EPROTO: a field is missing). */
int proc_status_at (int dir, ProcStatus *st);

/* Returns true if @dir's process is in this process's namespace @mine of
 * kind @ns ("user", "pid": its /proc/PID/ns/NS link). */
bool proc_ns_is_at (int dir, const char *ns, const struct stat *mine);

/* Sets *@uid to the owner of @dir's fd directory: the effective uid while
 * the process is dumpable, root otherwise (fs/proc/base.c
 * task_dump_owner()).  0 or -errno. */
int proc_fds_owner_at (int dir, uid_t *uid);

/* Reads the security module's label of @dir's process (attr/current) into
 * @label, at most @len bytes, not terminated.  Returns its length, or
 * -errno (-ENOENT: a kernel without security modules; -EINVAL: no module
 * labels the process). */
ssize_t proc_label_at (int dir, char *label, size_t len);

#endif /* BWSS_SYS_H */
