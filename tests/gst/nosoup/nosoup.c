/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nosoup.c — a library with libsoup's file name and none of its functions:
 * test-nosoup.sh puts it first in LD_LIBRARY_PATH, as libsoup-3.0.so.0 and
 * libsoup-2.4.so.1, so that no libsoup can be loaded. */
int nosoup_marker (void);

int
nosoup_marker (void)
{
  return 0;
}
