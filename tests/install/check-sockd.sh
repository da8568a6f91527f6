#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs the build into a scratch DESTDIR and checks what an administrator
# gets of bwss-sockd (bwssd's helper where Yama's ptrace_scope is 1): the
# program in libexecdir, the system units in $prefix/lib/systemd/system, the
# service starting the installed program, the socket at /run/bwss-sockd.sock
# (the path bwssd asks), and both units passing systemd-analyze verify.
set -euo pipefail
build_root=$1 prefix=$2 libexecdir=$3
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build_root" --no-rebuild --quiet --destdir "$dest" >/dev/null
case "$libexecdir" in /*) libexec=$libexecdir ;; *) libexec=$prefix/$libexecdir ;; esac
units="$dest$prefix/lib/systemd/system"
sockd="$dest$libexec/bwss-sockd"
fail () { echo "not ok: $1"; exit 1; }
[ -x "$sockd" ] || fail "no bwss-sockd at $libexec"
"$sockd" --help | grep -q -- "--socket PATH" || fail "bwss-sockd --help"
for u in bwss-sockd.service bwss-sockd.socket; do
  [ -f "$units/$u" ] || fail "no $u at $prefix/lib/systemd/system"
done
grep -qx "ExecStart=$libexec/bwss-sockd --idle-exit 60" "$units/bwss-sockd.service" \
  || fail "the service does not start $libexec/bwss-sockd"
grep -qx "ListenSequentialPacket=/run/bwss-sockd.sock" "$units/bwss-sockd.socket" \
  || fail "the socket unit does not listen where bwssd asks (/run/bwss-sockd.sock)"
grep -qx "Accept=no" "$units/bwss-sockd.socket" || fail "the socket unit must pass the listening socket (Accept=no)"
if command -v systemd-analyze >/dev/null; then
  # the units as installed, ExecStart pointed at the scratch copy
  sed "s|^ExecStart=$libexec|ExecStart=$dest$libexec|" "$units/bwss-sockd.service" >"$dest/bwss-sockd.service"
  cp "$units/bwss-sockd.socket" "$dest/bwss-sockd.socket"
  # (it exits 0 on an unknown key, saying so: any word on the units fails)
  if ! systemd-analyze verify "$dest/bwss-sockd.socket" "$dest/bwss-sockd.service" >"$dest/verify" 2>&1 \
     || grep -q "bwss-sockd\." "$dest/verify"; then
    cat "$dest/verify"; fail "systemd-analyze verify"
  fi
fi
echo "ok: bwss-sockd in $libexec, its socket and service units in $prefix/lib/systemd/system"
