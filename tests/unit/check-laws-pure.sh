#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-laws-pure.sh LIBBWSS_LAWS_A — the laws do no I/O: every symbol the
# objects of libbwss/lib/laws/ take from outside must be a pure function of libc
# (memory, strings, sorting, the C locale the parsers read numbers in) or of
# libm.  A law that calls read(), clock_gettime(), a GLib function or the
# kernel layer fails here, with the symbol and the object named (a sanitizer
# build's own hooks and _FORTIFY_SOURCE's checked copies are allowed).  TAP
# output.
set -euo pipefail
lib=$1
allowed='^(_GLOBAL_OFFSET_TABLE_|__(asan|ubsan|sanitizer|lsan)_[A-Za-z0-9_]+|calloc|malloc|realloc|free|memcpy|memmove|memset|__memcpy_chk|__memmove_chk|__memset_chk|memcmp|strcmp|strncmp|strlen|strnlen|strchr|strrchr|qsort|qsort_r|bsearch|newlocale|freelocale|strtod_l|pthread_once|__stack_chk_fail|__assert_fail|(sqrt|pow|exp|log|log2|log10|floor|ceil|round|lround|llround|trunc|fmin|fmax|fabs|fmod|nextafter)f?)$'
echo "1..2"
defined=$(nm --defined-only --format=just-symbols "$lib" | sort -u)
undefined=$(nm -u --format=just-symbols "$lib" | sort -u)
[ -n "$defined" ] || { echo "not ok 1 - $lib defines symbols"; exit 1; }
echo "ok 1 - $lib defines $(echo "$defined" | wc -l) symbols"
outside=$(comm -23 <(echo "$undefined") <(echo "$defined"))
bad=$(echo "$outside" | grep -Ev "$allowed" || true)
if [ -n "$bad" ]; then
  echo "not ok 2 - the laws call outside what a pure law may:"
  for s in $bad; do
    # which object asks for it
    nm -A -u "$lib" 2>/dev/null | awk -v s="$s" '$NF == s { print "#   " $1 " " s }'
  done
  exit 1
fi
echo "ok 2 - the laws call only: $(echo $outside)"
