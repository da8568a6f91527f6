/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sd-notify.c — systemd's notification protocol, the sending side
 * (sd-notify.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "sd-notify.h"

int
bwssd_notify (const char *state)
{
  const char *path = getenv ("NOTIFY_SOCKET");
  if (path == NULL || path[0] == '\0')
    return 0;
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  size_t len = strlen (path);
  /* an absolute path, or '@' for the abstract namespace (its name starts
   * with a NUL byte and is not NUL-terminated); anything else is not
   * systemd's and is refused */
  if ((path[0] != '/' && path[0] != '@') || len < 2 || len > sizeof addr.sun_path - (path[0] == '/'))
    return -EINVAL;
  memcpy (addr.sun_path, path, len);
  if (path[0] == '@')
    addr.sun_path[0] = '\0';
  socklen_t alen = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + len + (path[0] == '/'));
  int fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -errno;
  ssize_t sent;
  do
    sent = sendto (fd, state, strlen (state), MSG_NOSIGNAL, (struct sockaddr *) &addr, alen);
  while (sent < 0 && errno == EINTR);
  int err = sent < 0 ? -errno : 1;
  close (fd);
  return err;
}
