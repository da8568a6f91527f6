/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ownsockets.c — the process's TCP connections to some servers. */
#include <string.h>
#include <sys/socket.h>
#include <bwss/control.h>
#include "ownsockets.h"
#include "sys.h"

/* TRUE if @sa (a peer) is one of @peers. */
static gboolean
is_peer (const struct sockaddr_storage *sa, socklen_t len, GPtrArray *peers)
{
  g_autoptr (GSocketAddress) a = g_socket_address_new_from_native ((gpointer) sa, len);
  if (a == NULL || !G_IS_INET_SOCKET_ADDRESS (a))
    return FALSE;
  GInetSocketAddress *ia = G_INET_SOCKET_ADDRESS (a);
  GInetAddress *addr = g_inet_socket_address_get_address (ia);
  guint16 port = g_inet_socket_address_get_port (ia);
  /* an IPv4 peer of an IPv6 socket shows as ::ffff:a.b.c.d */
  g_autoptr (GInetAddress) v4 = NULL;
  if (g_inet_address_get_family (addr) == G_SOCKET_FAMILY_IPV6) {
    const guint8 *b = g_inet_address_to_bytes (addr);
    static const guint8 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    if (memcmp (b, mapped, 12) == 0)
      v4 = g_inet_address_new_from_bytes (b + 12, G_SOCKET_FAMILY_IPV4);
  }
  for (guint i = 0; i < peers->len; i++) {
    GInetSocketAddress *p = peers->pdata[i];
    GInetAddress *pa = g_inet_socket_address_get_address (p);
    if (g_inet_socket_address_get_port (p) == port
        && (g_inet_address_equal (pa, addr) || (v4 && g_inet_address_equal (pa, v4))))
      return TRUE;
  }
  return FALSE;
}

/* One fd of this process: kept if a connected TCP socket to one of @peers. */
typedef struct {
  GPtrArray *peers;
  GArray    *out;
} Scan;

static bool
scan_fd (int fd, void *data)
{
  Scan *scan = data;
  KnobInfo k;
  if (!knob_is_connected_tcp (fd) || knob_read_info (fd, &k) != 0)
    return true;
  struct sockaddr_storage sa;
  socklen_t salen = sizeof sa;
  if (getpeername (fd, (struct sockaddr *) &sa, &salen) != 0 || !is_peer (&sa, salen, scan->peers))
    return true;
  OwnSocket s = { .fd = fd, .inode = k.inode, .bytes_received = k.bytes_received,
                  .idle_ms = k.last_recv_ms, .sent_idle_ms = k.last_sent_ms, .rtt_us = k.rtt_us,
                  .mss = bwss_sender_segment (k.mss, k.advmss) };
  g_array_append_val (scan->out, s);
  return true;
}

GArray *
own_sockets_to (GPtrArray *peers)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (OwnSocket));
  if (peers == NULL || peers->len == 0)
    return out;
  Scan scan = { peers, out };
  proc_each_fd (0, scan_fd, &scan);
  return out;
}
