/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tool-file.h — reading a file someone else may have put in place: bwssd's
 * rules file.
 */
#ifndef BWSS_TOOL_FILE_H
#define BWSS_TOOL_FILE_H

#include <glib.h>

/* Longest line of a file quoted in a message, bytes. */
#define TOOL_FILE_QUOTE_MAX 80

/* Reads the file @path into *@data (NUL-terminated, *@len bytes without the
 * NUL; a NUL inside is kept: see *@len):
 *
 *   - opened without following a symbolic link (O_NOFOLLOW) and without
 *     waiting (O_NONBLOCK: a FIFO or a device opens at once), then refused
 *     unless fstat() says it is a regular file;
 *   - refused if it is larger than @max bytes (read at most @max + 1).
 *
 * Returns TRUE, or FALSE with @error (G_FILE_ERROR) set to one message
 * starting "PATH: " that says which: no such file, a symbolic link, not a
 * regular file (a FIFO, a directory, ...), larger than @max. */
gboolean tool_file_read (const char *path, gsize max, char **data, gsize *len, GError **error);

/* Returns @text (its first @len bytes, or up to a NUL if @len is -1) as a
 * message may quote it: at most TOOL_FILE_QUOTE_MAX bytes, cut at a
 * character and followed by "..." if longer, invalid UTF-8 and control
 * characters shown as '?'.  g_free() it. */
char *tool_file_quote (const char *text, gssize len);

#endif
