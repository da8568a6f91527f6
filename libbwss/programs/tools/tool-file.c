/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tool-file.c — see tool-file.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tool-file.h"

/* Returns what the file type in @mode is, for messages. */
static const char *
type_name (mode_t mode)
{
  if (S_ISDIR (mode))
    return "a directory";
  if (S_ISFIFO (mode))
    return "a FIFO";
  if (S_ISCHR (mode))
    return "a character device";
  if (S_ISBLK (mode))
    return "a block device";
  if (S_ISSOCK (mode))
    return "a socket";
  return "not a regular file";
}

/* Formats a size bound for messages: "1 MiB", "64 KiB", "100 bytes". */
static char *
size_text (gsize n)
{
  if (n >= 1024 * 1024 && n % (1024 * 1024) == 0)
    return g_strdup_printf ("%" G_GSIZE_FORMAT " MiB", n / (1024 * 1024));
  if (n >= 1024 && n % 1024 == 0)
    return g_strdup_printf ("%" G_GSIZE_FORMAT " KiB", n / 1024);
  return g_strdup_printf ("%" G_GSIZE_FORMAT " bytes", n);
}

gboolean
tool_file_read (const char *path, gsize max, char **data, gsize *len, GError **error)
{
  *data = NULL;
  *len = 0;
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int e = errno;
    if (e == ELOOP)
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_LOOP, "%s: a symbolic link (not followed)", path);
    else
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: %s", path, g_strerror (e));
    return FALSE;
  }
  struct stat st;
  g_autofree char *bound = size_text (max);
  if (fstat (fd, &st) != 0) {
    int e = errno;
    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: %s", path, g_strerror (e));
  } else if (!S_ISREG (st.st_mode)) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s, not a regular file", path,
                 type_name (st.st_mode));
  } else if ((guint64) st.st_size > max) {
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: larger than %s", path, bound);
  } else {
    /* a regular file's size may change meanwhile: read at most max + 1 */
    gsize cap = (gsize) st.st_size + 1 < max + 1 ? (gsize) st.st_size + 1 : max + 1;
    char *buf = g_malloc (cap + 1);
    gsize n = 0;
    for (;;) {
      if (n == cap) {
        if (cap > max)
          break;
        cap = MIN (cap * 2, max + 1);
        buf = g_realloc (buf, cap + 1);
      }
      ssize_t r = read (fd, buf + n, cap - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0) {
        if (r < 0) {
          int e = errno;
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: %s", path, g_strerror (e));
          g_free (buf);
          close (fd);
          return FALSE;
        }
        break;
      }
      n += (gsize) r;
    }
    close (fd);
    if (n > max) {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: larger than %s", path, bound);
      g_free (buf);
      return FALSE;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return TRUE;
  }
  close (fd);
  return FALSE;
}

char *
tool_file_quote (const char *text, gssize len)
{
  gsize n = len < 0 ? strlen (text) : (gsize) len;
  gboolean cut = n > TOOL_FILE_QUOTE_MAX;
  g_autofree char *valid = g_utf8_make_valid (text, (gssize) MIN (n, (gsize) TOOL_FILE_QUOTE_MAX + 4));
  GString *out = g_string_new (NULL);
  for (const char *p = valid; *p; p = g_utf8_next_char (p)) {
    gunichar c = g_utf8_get_char (p);
    gsize w = (gsize) (g_utf8_next_char (p) - p);
    if (out->len + w > TOOL_FILE_QUOTE_MAX) {
      cut = TRUE;
      break;
    }
    if (c < 0x20 || c == 0x7f || c == 0xfffd || (c >= 0x80 && c < 0xa0))
      g_string_append_c (out, '?');
    else
      g_string_append_len (out, p, (gssize) w);
  }
  if (cut)
    g_string_append (out, "...");
  return g_string_free (out, FALSE);
}
