/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ownsockets.c — the process's TCP connections to some servers. */
#include <dirent.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ownsockets.h"

/* include/net/tcp_states.h (glibc's netinet/tcp.h, which has it, lacks
 * tcpi_bytes_received) */
#define STATE_ESTABLISHED 1

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

GArray *
own_sockets_to (GPtrArray *peers)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (OwnSocket));
  if (peers == NULL || peers->len == 0)
    return out;
  DIR *dir = opendir ("/proc/self/fd");
  if (dir == NULL)
    return out;
  int dfd = dirfd (dir);
  struct dirent *de;
  while ((de = readdir (dir)) != NULL) {
    char *end;
    long fd = strtol (de->d_name, &end, 10);
    if (*end || fd < 0 || fd == dfd)
      continue;
    struct stat st;
    if (fstat ((int) fd, &st) != 0 || !S_ISSOCK (st.st_mode))
      continue;
    int type = 0, proto = 0;
    socklen_t l = sizeof type;
    if (getsockopt ((int) fd, SOL_SOCKET, SO_TYPE, &type, &l) != 0 || type != SOCK_STREAM)
      continue;
    l = sizeof proto;
    if (getsockopt ((int) fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) != 0 || proto != IPPROTO_TCP)
      continue;
    struct tcp_info ti;
    memset (&ti, 0, sizeof ti);
    l = sizeof ti;
    if (getsockopt ((int) fd, IPPROTO_TCP, TCP_INFO, &ti, &l) != 0 || ti.tcpi_state != STATE_ESTABLISHED)
      continue;
    struct sockaddr_storage sa;
    socklen_t salen = sizeof sa;
    if (getpeername ((int) fd, (struct sockaddr *) &sa, &salen) != 0 || !is_peer (&sa, salen, peers))
      continue;
    OwnSocket s = { .fd = (int) fd, .inode = st.st_ino, .idle_ms = ti.tcpi_last_data_recv,
                    .sent_idle_ms = ti.tcpi_last_data_sent };
    if (l >= offsetof (struct tcp_info, tcpi_bytes_received) + sizeof ti.tcpi_bytes_received)
      s.bytes_received = ti.tcpi_bytes_received;
    g_array_append_val (out, s);
  }
  closedir (dir);
  return out;
}
