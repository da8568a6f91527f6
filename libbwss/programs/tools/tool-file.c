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
  struct stat st;
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  int e = fd < 0 || fstat (fd, &st) != 0 ? errno : 0;
  /* a regular file's size may change meanwhile: at most max + 1 bytes are
   * read, into a buffer of the bound */
  gboolean fits = e == 0 && S_ISREG (st.st_mode) && (guint64) st.st_size <= max;
  g_autofree char *buf = fits ? g_malloc (max + 2) : NULL;
  gsize n = 0;
  for (ssize_t r = 1; buf && n <= max && r != 0;) {
    r = read (fd, buf + n, max + 1 - n);
    if (r > 0)
      n += (gsize) r;
    else if (r < 0 && errno != EINTR) {
      e = errno;
      break;
    }
  }
  if (fd >= 0)
    close (fd);
  g_autofree char *bound = size_text (max);
  if (e == ELOOP)
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_LOOP, "%s: a symbolic link (not followed)", path);
  else if (e)
    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: %s", path, g_strerror (e));
  else if (!S_ISREG (st.st_mode))
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s, not a regular file", path,
                 type_name (st.st_mode));
  else if (!fits || n > max)
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: larger than %s", path, bound);
  if (e || !fits || n > max)
    return FALSE;
  buf[n] = '\0';
  *data = g_realloc (g_steal_pointer (&buf), n + 1);
  *len = n;
  return TRUE;
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
