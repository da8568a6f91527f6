/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serve.c — bwssd's clients (see serve.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <glib-unix.h>
#include "serve.h"
#include "wire.h"

typedef struct {
  Serve      *s;
  int         fd;
  guint       source;
  pid_t       pid;
  GHashTable *flows;           /* the client's id → CtlFlow */
} Client;

struct Serve {
  Ctl        *ctl;
  ServeFuncs  funcs;
  int         listen_fd;
  guint       listen_source;
  GHashTable *clients;         /* Client (owned) */
  GPtrArray  *held;            /* every client's flows: what serve_check_held() goes through */
  pid_t       told_version;    /* the last process told its wire version is not ours */
};

/* Sends @len bytes of @msg (and @fd if >= 0) if the client's buffer has
 * room: never waits. */
static void
send_to (Client *cl, const void *msg, size_t len, int fd)
{
  sock_send_msg (cl->fd, msg, len, fd, 0);
}

void
serve_pace (CtlFlow *f, double rate, gpointer data)
{
  Client *cl = f->owner;
  if (cl == NULL)
    return;
  WirePace m = { .read_rate_bps = rate, .mss = f->have_st ? f->st.mss : 0 };
  wire_head (&m.h, WIRE_PACE, 0, f->owner_id, 0);
  send_to (cl, &m, sizeof m, -1);
}

/* Removes @cl's flow @f: its socket given back, bwssd's duplicate closed
 * (out of @cl's table first: its key is in @f). */
static void
drop_flow (Client *cl, CtlFlow *f)
{
  g_hash_table_remove (cl->flows, &f->owner_id);
  g_ptr_array_remove_fast (cl->s->held, f);
  ctl_remove (cl->s->ctl, f);
}

static void
client_free (gpointer data)
{
  Client *cl = data;
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, cl->flows);
  while (g_hash_table_iter_next (&it, NULL, &v)) {
    g_ptr_array_remove_fast (cl->s->held, v);
    ctl_remove (cl->s->ctl, v);
  }
  g_hash_table_unref (cl->flows);
  if (cl->source)
    g_source_remove (cl->source);
  close (cl->fd);
  g_free (cl);
}

/* The key of @cl's stream @stream (0: none): its connection's fd and the
 * number, so that two clients' streams never meet (a client's flows leave
 * bwssd before its fd is closed) and the key stays below 2^62 (an fd is
 * below 2^30, the kernel's nr_open). */
static guint64
stream_key (Client *cl, guint32 stream)
{
  return stream ? (guint64) cl->fd << 32 | stream : 0;
}

/* The display pid of a flow a client says is @owner's: that process if it
 * is this user's, else the client's own. */
static pid_t
owner_of (Client *cl, pid_t owner)
{
  uid_t uid;
  if (owner > 0 && owner != cl->pid && proc_owner (owner, &uid) == 0 && uid == geteuid ())
    return owner;
  return cl->pid;
}

/* A REGISTER's or an UPDATE's preferences, pacing and share for @f (a
 * share whose key is not found leaves it alone). */
static void
on_update (Client *cl, CtlFlow *f, const WireFlow *m)
{
  if (f == NULL)
    return;
  ctl_set_prefs (cl->s->ctl, f, &m->prefs);
  ctl_set_paced (cl->s->ctl, f, m->paced != 0);
  f->key_stream = stream_key (cl, m->stream);
  if (ctl_set_share (cl->s->ctl, f, (BwssShare) m->share) != 0)
    ctl_set_share (cl->s->ctl, f, BWSS_SHARE_FLOW);
}

static void
on_register (Client *cl, const WireFlow *m, int fd)
{
  Serve *s = cl->s;
  int err = 0;
  char origin[BWSS_ORIGIN_MAX];
  g_strlcpy (origin, m->origin, sizeof origin);
  CtlFlow *f = NULL;
  if (fd < 0)
    err = BWSS_EBADF;
  else if (m->h.flow == 0 || g_hash_table_contains (cl->flows, &m->h.flow))
    err = BWSS_EEXIST;
  else if (g_hash_table_size (cl->flows) >= SERVE_CLIENT_MAX_FLOWS)
    err = BWSS_ENOSPC;
  if (err) {
    if (fd >= 0)
      close (fd);
  } else {
    KnobInfo k;
    if (knob_read_info (fd, &k) == 0 && ctl_holds_inode (s->ctl, k.inode) && s->funcs.yield)
      s->funcs.yield (k.inode, s->funcs.data);   /* adopted: its owner's preferences win */
    err = ctl_add (s->ctl, fd, &m->prefs, origin, owner_of (cl, m->owner_pid), cl->pid, &f);
  }
  if (err == 0) {
    f->key_pid = cl->pid;                /* a client joins no other process's group */
    f->owner = cl;
    f->owner_id = m->h.flow;
    f->owner_fd = m->fd;
    on_update (cl, f, m);
    g_hash_table_insert (cl->flows, &f->owner_id, f);
    g_ptr_array_add (s->held, f);
    if (s->funcs.changed)
      s->funcs.changed (s->funcs.data);
    return;
  }
  WireHead h;
  wire_head (&h, WIRE_REJECT, m->h.seq, m->h.flow, err);
  send_to (cl, &h, sizeof h, -1);
}

/* Answers @q with a LISTED of @n (entries or bytes) and @len bytes of
 * @data in a memfd (more than a socket buffer holds: up to 10240 flow
 * entries of ~500 bytes); n 0 and BWSS_ENOMEM if no memfd can hold them. */
static void
send_listed (Client *cl, const WireHead *q, uint64_t n, const void *data, size_t len)
{
  int fd = memfd_create ("bwss-list", MFD_CLOEXEC);
  if (fd >= 0 && len && write (fd, data, len) != (ssize_t) len) {
    close (fd);
    fd = -1;
  }
  WireListed m = { .n = fd >= 0 ? n : 0 };
  wire_head (&m.h, WIRE_LISTED, q->seq, 0, fd >= 0 ? 0 : BWSS_ENOMEM);
  send_to (cl, &m, sizeof m, fd);
  if (fd >= 0)
    close (fd);
}

/* LIST: every flow with its group. */
static void
on_list (Client *cl, const WireHead *q)
{
  g_autoptr (GPtrArray) all = ctl_flows (cl->s->ctl);
  g_autofree WireListEntry *e = g_new0 (WireListEntry, all->len);
  /* each group's member count, in one pass (a group may hold every flow) */
  g_autoptr (GHashTable) members = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (guint i = 0; i < all->len; i++) {
    CtlFlow *f = all->pdata[i];
    if (f->group)
      g_hash_table_insert (members, &f->group,
                           GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (members, &f->group)) + 1));
  }
  for (guint i = 0; i < all->len; i++) {
    const CtlFlow *f = all->pdata[i];
    WireListEntry *x = &e[i];
    x->info.pid = f->pid;
    x->info.participant = f->participant;
    x->info.inode = f->diag.inode;
    memcpy (x->info.origin, f->origin, sizeof x->info.origin);
    memcpy (x->info.comm, f->comm, sizeof x->info.comm);
    memcpy (x->info.local, f->local, sizeof x->info.local);
    memcpy (x->info.remote, f->remote, sizeof x->info.remote);
    ctl_flow_stats (cl->s->ctl, f, &x->info.stats);
    x->group.share = f->share;
    x->group.group = f->group;
    x->group.members = f->group ? GPOINTER_TO_UINT (g_hash_table_lookup (members, &f->group)) : 1;
  }
  send_listed (cl, q, all->len, e, all->len * sizeof *e);
}

/* Handles one message of @cl.  Returns FALSE if it is malformed (the
 * connection is closed). */
static gboolean
on_message (Client *cl, const WireMsg *m, size_t n, int fd)
{
  Serve *s = cl->s;
  gboolean ok = n >= sizeof m->h && m->h.version == WIRE_VERSION;
  if (n >= sizeof m->h && !ok && s->told_version != cl->pid) {
    /* a library of another version: said once, not on each of its reconnections */
    g_printerr ("bwssd: process %d speaks wire version %u, this bwssd %u: not served (its sockets stay its own)\n",
                (int) cl->pid, (unsigned) m->h.version, WIRE_VERSION);
    s->told_version = cl->pid;
  }
  /* the least a message of its type carries */
  size_t need = !ok ? 0 : m->h.type == WIRE_REGISTER || m->h.type == WIRE_UPDATE ? sizeof m->flow
                : m->h.type == WIRE_LATE ? sizeof m->late : sizeof m->h;
  ok = ok && n >= need;
  if (fd >= 0 && !(ok && m->h.type == WIRE_REGISTER))
    close (fd);                          /* only a well-formed REGISTER hands a socket over */
  if (!ok)
    return FALSE;
  CtlFlow *f = g_hash_table_lookup (cl->flows, &m->h.flow);   /* the flow it names, if any */
  switch (m->h.type) {
  case WIRE_REGISTER:
    on_register (cl, &m->flow, fd);
    return TRUE;
  case WIRE_UPDATE:
    on_update (cl, f, &m->flow);
    return TRUE;
  case WIRE_LATE:
    if (f && wire_late_valid (m->late.late_fraction, m->late.required_prebuffer_s)) {
      f->late_fraction = m->late.late_fraction;
      f->required_prebuffer_s = m->late.required_prebuffer_s;
    }
    return TRUE;
  case WIRE_UNREGISTER:
    if (f)
      drop_flow (cl, f);
    if (f && s->funcs.changed)
      s->funcs.changed (s->funcs.data);
    return TRUE;
  case WIRE_GET_FLOW: {
    WireFlowStats r = { 0 };
    if (f)
      ctl_flow_stats (s->ctl, f, &r.st);
    wire_head (&r.h, f ? WIRE_FLOW : WIRE_DONE, m->h.seq, m->h.flow, f ? 0 : BWSS_ENOENT);
    send_to (cl, &r, f ? sizeof r : sizeof r.h, -1);
    return TRUE;
  }
  case WIRE_GET_DOMAIN: {
    WireDomain r;
    ctl_stats (s->ctl, &r.st);
    wire_head (&r.h, WIRE_DOMAIN, m->h.seq, 0, 0);
    send_to (cl, &r, sizeof r, -1);
    return TRUE;
  }
  case WIRE_LIST:
    on_list (cl, &m->h);
    return TRUE;
  case WIRE_STATUS: {
    g_autofree char *text = s->funcs.status ? s->funcs.status (s->funcs.data) : g_strdup ("{}");
    size_t len = strlen (text);
    send_listed (cl, &m->h, len, text, len);
    return TRUE;
  }
  case WIRE_SUSPEND: {
    WireHead r;
    if (s->funcs.suspend)
      s->funcs.suspend (m->h.arg != 0, s->funcs.data);
    else
      ctl_set_suspended (s->ctl, m->h.arg != 0);
    wire_head (&r, WIRE_DONE, m->h.seq, 0, 0);
    send_to (cl, &r, sizeof r, -1);
    return TRUE;
  }
  default:
    return FALSE;
  }
}

static void
client_gone (Client *cl)
{
  Serve *s = cl->s;
  g_hash_table_remove (s->clients, cl);
  if (s->funcs.changed)
    s->funcs.changed (s->funcs.data);
}

static gboolean
on_client (gint fd, GIOCondition cond, gpointer data)
{
  Client *cl = data;
  for (int i = 0; i < SERVE_BUDGET; i++) {
    WireMsg m;
    int got, flags;
    ssize_t n = sock_recv_msg (fd, &m, sizeof m, &got, &flags);
    if (n == -EAGAIN)
      return G_SOURCE_CONTINUE;
    if (n > 0 && (flags & MSG_CTRUNC) && m.h.type == WIRE_REGISTER && got < 0) {
      WireHead h;                        /* no fd left here for its socket */
      wire_head (&h, WIRE_REJECT, m.h.seq, m.h.flow, BWSS_ENOSPC);
      send_to (cl, &h, sizeof h, -1);
      continue;
    }
    if (n <= 0 || (flags & MSG_TRUNC) || !on_message (cl, &m, (size_t) n, got)) {
      if (n > 0 && got >= 0 && (flags & MSG_TRUNC))
        close (got);
      cl->source = 0;                    /* removed by returning G_SOURCE_REMOVE */
      client_gone (cl);
      return G_SOURCE_REMOVE;
    }
  }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_accept (gint fd, GIOCondition cond, gpointer data)
{
  Serve *s = data;
  int c = accept4 (fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (c < 0)
    return G_SOURCE_CONTINUE;
  struct ucred cr;
  if (sock_peer_cred (c, &cr) != 0 || cr.uid != geteuid ()) {
    close (c);                           /* another user's: never served */
    return G_SOURCE_CONTINUE;
  }
  Client *cl = g_new0 (Client, 1);
  cl->s = s;
  cl->fd = c;
  cl->pid = cr.pid;
  cl->flows = g_hash_table_new (g_int64_hash, g_int64_equal);
  cl->source = g_unix_fd_add (c, G_IO_IN | G_IO_HUP | G_IO_ERR, on_client, cl);
  g_hash_table_add (s->clients, cl);
  if (s->funcs.changed)
    s->funcs.changed (s->funcs.data);
  return G_SOURCE_CONTINUE;
}

Serve *
serve_new (Ctl *ctl, int listen_fd, const ServeFuncs *funcs)
{
  Serve *s = g_new0 (Serve, 1);
  s->ctl = ctl;
  s->funcs = *funcs;
  s->listen_fd = listen_fd;
  s->clients = g_hash_table_new_full (NULL, NULL, client_free, NULL);
  s->held = g_ptr_array_new ();
  s->listen_source = g_unix_fd_add (listen_fd, G_IO_IN, on_accept, s);
  return s;
}

void
serve_free (Serve *s)
{
  g_source_remove (s->listen_source);
  g_hash_table_unref (s->clients);
  g_ptr_array_unref (s->held);
  g_free (s);
}

guint
serve_clients (const Serve *s)
{
  return g_hash_table_size (s->clients);
}

void
serve_check_held (Serve *s, guint slice, guint slices)
{
  g_autoptr (GPtrArray) gone = NULL;
  for (guint i = slice; i < s->held->len; i += MAX (slices, 1)) {   /* the others: another round's */
    CtlFlow *f = g_ptr_array_index (s->held, i);
    Client *cl = f->owner;
    int same = proc_fd_same_file (cl->pid, f->owner_fd, f->fd);
    if (same == 1 || same == -EPERM)
      continue;                          /* held, or a process that hides its fds */
    if (same < 0) {                      /* no kcmp(2): the socket its fd names */
      errno = 0;
      guint64 inode = proc_fd_socket (cl->pid, f->owner_fd);
      if (inode == f->diag.inode || (inode == 0 && errno == EACCES))
        continue;
    }
    if (gone == NULL)
      gone = g_ptr_array_new ();
    g_ptr_array_add (gone, f);
  }
  for (guint i = 0; gone && i < gone->len; i++) {
    CtlFlow *f = g_ptr_array_index (gone, i);
    drop_flow (f->owner, f);
  }
  if (gone && s->funcs.changed)
    s->funcs.changed (s->funcs.data);
}
