#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs the build into a scratch DESTDIR and checks what a user gets of
# bwssd: the systemd user unit starts the installed bwssd (Type=notify, and
# runs bwssd --restore after it stops), its man pages are installed, the default rules file is installed where bwssd
# looks for it and bwssd --check accepts it.
set -euo pipefail
build_root=$1 prefix=$2 libdir=$3 bindir=$4 sysconfdir=$5
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build_root" --no-rebuild --quiet --destdir "$dest" >/dev/null
case "$sysconfdir" in /*) etc=$sysconfdir ;; *) etc=$prefix/$sysconfdir ;; esac
unit="$dest$prefix/lib/systemd/user/bwssd.service"
rules="$dest$etc/bwss/rules.conf"
bwssd="$dest$prefix/$bindir/bwssd"
fail () { echo "not ok: $1"; exit 1; }
[ -x "$bwssd" ] || fail "no bwssd at $prefix/$bindir"
[ -f "$unit" ] || fail "no user unit at $prefix/lib/systemd/user/bwssd.service"
[ -f "${unit%.service}.socket" ] || fail "no user unit at $prefix/lib/systemd/user/bwssd.socket"
grep -qx "ListenSequentialPacket=%t/bwss/bwss-%U.sock" "${unit%.service}.socket" ||
  fail "bwssd.socket does not listen on the default domain's socket"
grep -qx "ExecStart=$prefix/$bindir/bwssd --foreground" "$unit" || fail "the unit does not start $prefix/$bindir/bwssd"
grep -qx "ExecStopPost=$prefix/$bindir/bwssd --restore" "$unit" || fail "the unit does not run bwssd --restore when bwssd stops"
grep -qx "Type=notify" "$unit" || fail "the unit is not Type=notify (bwssd says READY=1)"
# the man pages, where man(1) finds them
for page in man1/bwssd.1 man1/bwss-top.1 man1/bwss-run.1 man1/bwss-late.1 man5/bwss-rules.conf.5 man8/bwss-sockd.8; do
  [ -n "$(find "$dest$prefix" -path "*/man/$page" -print -quit)" ] || fail "no $page installed"
done
[ -f "$rules" ] || fail "no default rules at $etc/bwss/rules.conf"
out=$(LD_LIBRARY_PATH="$dest$prefix/$libdir" "$bwssd" --check --rules "$rules") || fail "bwssd --check refuses the shipped rules"
echo "# $out"
if command -v systemd-analyze >/dev/null; then
  # the unit as installed, its ExecStart pointed at the scratch copy; in
  # system mode (--user needs a user manager, which CI has not): the
  # syntax, the keys and the command line are the same
  sed "s|^\(Exec[A-Za-z]*\)=$prefix/$bindir/bwssd|\1=$bwssd|" "$unit" >"$dest/bwssd.service"
  cp "${unit%.service}.socket" "$dest/bwssd.socket"
  systemd-analyze verify "$dest/bwssd.service" "$dest/bwssd.socket" >"$dest/verify" 2>&1 ||
    { cat "$dest/verify"; fail "systemd-analyze verify"; }
fi
echo "ok: the user unit starts the installed bwssd, and its default rules pass bwssd --check"
