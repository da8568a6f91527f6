#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs the build into a scratch DESTDIR and builds a program against it
# with nothing but `pkg-config --cflags --libs bwss`, then runs it.
set -euo pipefail
build_root=$1 prefix=$2 libdir=$3
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build_root" --no-rebuild --quiet --destdir "$dest" >/dev/null
pc_dir="$dest$prefix/$libdir/pkgconfig"
[ -f "$pc_dir/bwss.pc" ] || { echo "not ok: no bwss.pc in $pc_dir"; exit 1; }
flags=$(PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs bwss)
cat > "$dest/consumer.c" <<'C'
#include <bwss/bwss.h>
#include <stdio.h>
int main (void)
{
  BwssPrefs p[2] = { { 1, 500e3, 0 }, { 0, 0, 1 } };
  double t[2];
  if (bwss_allocate (1e6, p, 2, t) != 0)
    return 1;
  printf ("%s %.0f %.0f\n", bwss_version_string (), t[0], t[1]);
  return 0;
}
C
cc "$dest/consumer.c" -o "$dest/consumer" $flags
out=$(LD_LIBRARY_PATH="$dest$prefix/$libdir" "$dest/consumer")
echo "# consumer printed: $out"
[[ "$out" =~ ^[0-9]+\.[0-9]+\.[0-9]+\ 500000\ 500000$ ]] || { echo "not ok: unexpected output"; exit 1; }
# The unstable API (bwss/control.h): BwssParams's layout is hidden from a
# consumer that does not ask for it, and given to one that does.
cat > "$dest/tunables.c" <<'C'
#include <bwss/bwss.h>
#include <stdio.h>
int main (void)
{
  BwssParams p;
  bwss_params_init (&p);
  BwssController *c = NULL;
  if (bwss_params_validate (&p, NULL) != 0 || bwss_controller_new (&p, &c) != 0)
    return 1;
  printf ("%s %g\n", bwss_loop_name (bwss_controller_params (c)->loop), p.alpha);
  bwss_controller_free (c);
  return 0;
}
C
if cc "$dest/tunables.c" -o "$dest/tunables" $flags 2>"$dest/cc.err"; then
  echo "not ok: BwssParams's fields compiled without BWSS_USE_UNSTABLE_API"; exit 1
fi
grep -q "storage size of .p. isn't known\|incomplete type" "$dest/cc.err" \
  || { cat "$dest/cc.err"; echo "not ok: unexpected compiler error"; exit 1; }
cc -DBWSS_USE_UNSTABLE_API "$dest/tunables.c" -o "$dest/tunables" $flags
out=$(LD_LIBRARY_PATH="$dest$prefix/$libdir" "$dest/tunables")
echo "# unstable consumer printed: $out"
[[ "$out" =~ ^delay\ 0\.[0-9]+$ ]] || { echo "not ok: unexpected output from the unstable consumer"; exit 1; }
echo "ok: pkg-config --cflags --libs bwss builds and runs a consumer; BwssParams needs BWSS_USE_UNSTABLE_API"
