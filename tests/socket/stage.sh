# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the tests that run our programs and scripts as other users
# (test-sockd.sh, test-shared-files.sh).  `stage DIR VAR...` copies the files
# the variables name into DIR (made, mode 755: every user may enter and read
# it) and points the variables at the copies.
#
# Why: a clone may live where only root can enter (root's home, mode 700).
# A user the test makes could then neither run a program of the build nor
# load libbwss.so.1 beside it, nor read a script of the source tree.
#
# A file of the build keeps its place relative to the build root (the
# directory with meson-info/): its RUNPATH, $ORIGIN/../.., finds the copy
# of libbwss/libbwss.so.1, and bwss-run finds the preload shim at
# ../shim/libbwss-preload.so, both copied with it.  Any other file (a
# script) goes to DIR itself.  The copies are owned by root and not
# writable by the others.
stage_build_root () {   # the build root above file @1, or nothing
  local d
  d=$(cd "$(dirname "$1")" && pwd -P) || return 0
  while [ "$d" != / ]; do
    [ -d "$d/meson-info" ] && { echo "$d"; return 0; }
    d=$(dirname "$d")
  done
}
stage_copy () {   # stage_copy FROM TO: a copy readable (and, if it was, runnable) by all
  mkdir -p "$(dirname "$2")" && chmod 755 "$(dirname "$2")" &&
    cp -L "$1" "$2" && chmod go+rX,go-w "$2"
}
stage () {
  local dir=$1 var src root rel extra
  shift
  mkdir -p "$dir" && chmod 755 "$dir" || return 1
  for var in "$@"; do
    src=$(cd "$(dirname "${!var}")" && pwd -P)/$(basename "${!var}")
    root=$(stage_build_root "$src")
    if [ -n "$root" ]; then
      rel=${src#"$root"/}
      stage_copy "$src" "$dir/$rel" || return 1
      for extra in libbwss/libbwss.so.1 libbwss/programs/shim/libbwss-preload.so; do
        [ ! -e "$root/$extra" ] || [ -e "$dir/$extra" ] || stage_copy "$root/$extra" "$dir/$extra" || return 1
      done
      printf -v "$var" '%s' "$dir/$rel"
    else
      stage_copy "$src" "$dir/$(basename "$src")" || return 1
      printf -v "$var" '%s' "$dir/$(basename "$src")"
    fi
  done
  # the directories between: every user may pass
  find "$dir" -type d -exec chmod 755 {} +
}
