#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/install/check-debs.sh — the Debian packages as a user gets them.  For
# each release (default: bookworm trixie):
#   1. build the packages INSIDE a chroot of that release (mmdebstrap
#      --variant=buildd plus the Build-Depends of debian/control, nothing
#      else: a missing Build-Depends fails here), as a user, with
#      dpkg-buildpackage -us -uc -b; lintian (that release's) on the result,
#      no error allowed;
#   2. install them with apt into a fresh minimal chroot (--variant=apt: apt
#      resolves every dependency from the mirror);
#   3. check: gst-inspect-1.0 bwsshttpsrc (and the bwss tracer), bwssd --check
#      reads /etc/bwss/rules.conf, pkg-config --libs bwss, systemd-analyze
#      --user verify on the unit, the unit enabled for every user
#      (systemctl --global is-enabled) and a user's opt-out, bwss-run finds
#      the installed preload shim, the rules a conffile;
#   4. remove (the edited conffile stays), purge: no file of dpkg -L is left,
#      /etc/bwss is gone, no path named *bwss* anywhere.
# Chroots are cached as tarballs under /var/cache/bwss-chroots (rebuilt when
# older than 7 days, tests/deps/chroot.sh); each run extracts fresh copies.
# Every step's time is printed ("# time ...") and summed up at the end.
# TAP output.  Needs root, mmdebstrap, zstd and the Debian mirror.
#
# usage: check-debs.sh [--release R]... [--debs R=DIR]... [--out DIR]
#                      [--source DIR] [--keep] [--gate]
#   --debs R=DIR  install the .debs of DIR for release R instead of building
#   --out DIR     where the built packages and logs go (default build-debs/
#                 in the source tree, ignored by git)
#   --keep        keep the chroots (printed) instead of removing them
#   --gate        skip unless BWSS_TEST_DEBS=1 (how meson runs it: suite
#                 'debian', not part of the default run; it takes minutes)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
releases=() out= keep=0 gate=0
declare -A given_debs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --release) releases+=("$2"); shift 2 ;;
    --debs) given_debs[${2%%=*}]=$(cd "${2#*=}" && pwd); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --source) src=$(cd "$2" && pwd); shift 2 ;;
    --keep) keep=1; shift ;;
    --gate) gate=1; shift ;;
    *) echo "usage: $0 [--release R]... [--debs R=DIR]... [--out DIR] [--source DIR] [--keep] [--gate]" >&2; exit 2 ;;
  esac
done
[ ${#releases[@]} -gt 0 ] || releases=(bookworm trixie)
[ -n "$out" ] || out=$src/build-debs

skip_all() { echo "1..0 # SKIP $*"; exit 0; }
[ "$gate" = 0 ] || [ "${BWSS_TEST_DEBS:-0}" = 1 ] ||
  skip_all "set BWSS_TEST_DEBS=1 to build and install the Debian packages in bookworm and trixie chroots (root, mmdebstrap, the mirror; ~2 min with cached chroots, ~4.5 min without)"
[ "$(id -u)" = 0 ] || skip_all "needs root (chroots)"
for tool in mmdebstrap zstd unshare; do
  command -v "$tool" >/dev/null || skip_all "no $tool (apt-get install mmdebstrap zstd)"
done
[ -f "$src/debian/control" ] || skip_all "no debian/ in $src"

# shellcheck source=../deps/chroot.sh
. "$src/tests/deps/chroot.sh"

n=0 failed=0 times=()
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=1; }
comment() { sed 's/^/# /'; }
now() { date +%s.%N; }
timed() {   # timed LABEL T0: prints and records the time since T0
  local s; s=$(chroot_since "$2")
  echo "# time $1: $s s"
  times+=("$(printf '%-44s %7s s' "$1" "$s")")
}

debian_version=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$src/debian/changelog")
upstream=${debian_version%-*}
meson_version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -1)
if [ "$upstream" = "$meson_version" ]; then
  ok "debian/changelog's $debian_version is meson's version $meson_version"
else
  not_ok "debian/changelog's $debian_version is not meson's version $meson_version"
fi
packages=$(sed -n 's/^Package: *//p' "$src/debian/control" | tr '\n' ' ')
# Build-Depends of debian/control as package names (first alternative, no
# versions, architectures or profiles); debhelper-compat is debhelper's
build_deps=$(sed -n '/^Build-Depends:/,/^[^ ]/{ /^Build-Depends:/{ s/^Build-Depends://; p; d }; /^ /p }' \
               "$src/debian/control" | tr ',' '\n' |
             sed 's/|.*//; s/([^)]*)//g; s/\[[^]]*\]//g; s/<[^>]*>//g; s/[[:space:]]//g' |
             sed '/^$/d; s/^debhelper-compat$/debhelper/' | sort -u | tr '\n' ' ')
echo "# packages: $packages"
echo "# Build-Depends: $build_deps"

work_dirs=()
cleanup() {
  local d
  for d in "${work_dirs[@]}"; do
    if [ "$keep" = 1 ]; then echo "# kept chroot $d"; else chroot_remove "$d" || true; fi
  done
}
trap cleanup EXIT

# in chroot DIR, run the shell line CMD; its output goes to LOG
in_chroot() { local dir=$1 log=$2; shift 2; chroot_run "$dir" "$@" >"$log" 2>&1; }

build_in() {   # build_in RELEASE DEST: the packages, built in RELEASE, into DEST
  local release=$1 dest=$2 t0 tarball dir pkgdir="bwss-$upstream"
  t0=$(now)
  # shellcheck disable=SC2086
  tarball=$(chroot_tarball build "$release" buildd $build_deps)
  timed "$release: build chroot (cache or mmdebstrap)" "$t0"
  dir=$(mktemp -d "/var/tmp/bwss-build-$release.XXXXXX"); work_dirs+=("$dir")
  t0=$(now)
  chroot_extract "$tarball" "$dir"
  chroot_copy_source "$src" "$dir/build/$pkgdir"
  rm -rf "$dir/build/$pkgdir/obj-"* "$dir/build/$pkgdir/debian/.debhelper"
  timed "$release: extract chroot, copy source" "$t0"
  t0=$(now)
  if in_chroot "$dir" "$dest/build.log" "
      useradd --create-home builder
      chown -R builder: /build
      cd /build/$pkgdir
      dpkg-checkbuilddeps
      runuser -u builder -- nice dpkg-buildpackage -us -uc -b"; then
    ok "$release: dpkg-buildpackage -us -uc -b in a chroot with only the Build-Depends"
  else
    not_ok "$release: dpkg-buildpackage -us -uc -b (log: $dest/build.log)"
    tail -30 "$dest/build.log" | comment
    timed "$release: package build" "$t0"
    return 1
  fi
  timed "$release: package build (dpkg-buildpackage -b)" "$t0"
  cp "$dir"/build/*.deb "$dir"/build/*.changes "$dir"/build/*.buildinfo "$dest/"
  t0=$(now)
  if in_chroot "$dir" "$dest/lintian.log" "
      apt-get update -q >/dev/null   # mmdebstrap leaves no package lists
      apt-get install -y -q --no-install-recommends lintian >/dev/null
      lintian --version
      cd /build && runuser -u builder -- lintian -I -E --pedantic --show-overrides --fail-on error bwss_*.changes"; then
    ok "$release: lintian: no error ($(grep -c '^W:' "$dest/lintian.log" || true) warnings, $(grep -c '^O:' "$dest/lintian.log" || true) overridden)"
  else
    not_ok "$release: lintian reports errors (log: $dest/lintian.log)"
  fi
  grep -iE '^(lintian v|[EWIPXO]:)' "$dest/lintian.log" | comment
  timed "$release: lintian (install it, run it)" "$t0"
}

install_in() {   # install_in RELEASE DEBS_DIR LOGS_DIR
  local release=$1 debs=$2 logs=$3 t0 tarball dir out_of file
  t0=$(now)
  tarball=$(chroot_tarball base "$release" apt)
  timed "$release: minimal chroot (cache or mmdebstrap)" "$t0"
  dir=$(mktemp -d "/var/tmp/bwss-install-$release.XXXXXX"); work_dirs+=("$dir")
  chroot_extract "$tarball" "$dir"
  mkdir -p "$dir/debs"
  for file in "$debs"/*.deb; do
    case "$file" in *-dbgsym_*) ;; *) cp "$file" "$dir/debs/" ;; esac
  done
  t0=$(now)
  if in_chroot "$dir" "$logs/install.log" '
      apt-get update -q
      apt-get install -y -q /debs/*.deb
      dpkg-query -W -f="\${Package} \${Status}\n" '"$packages"; then
    ok "$release: apt installs $(ls "$dir/debs" | wc -l) packages and what they depend on into a minimal chroot"
  else
    not_ok "$release: apt install (log: $logs/install.log)"
    tail -20 "$logs/install.log" | comment
    return 1
  fi
  timed "$release: apt install of the packages" "$t0"
  t0=$(now)
  in_chroot "$dir" "$logs/tools.log" \
    'apt-get install -y -q --no-install-recommends gstreamer1.0-tools pkgconf systemd man-db' ||
    { not_ok "$release: installing the test tools (log: $logs/tools.log)"; return 1; }
  timed "$release: test tools (gstreamer1.0-tools pkgconf systemd man-db)" "$t0"

  t0=$(now)
  check() {   # check DESCRIPTION SHELL-LINE: ok if it exits 0 (no network
    # needed: own network and PID namespaces, as the suites of tests/bootstrap trixie)
    local desc=$1 output
    if output=$(chroot_run_isolated "$dir" "$2" 2>&1); then
      ok "$release: $desc"
      [ -z "$output" ] || echo "$output" | head -5 | comment
    else
      not_ok "$release: $desc"
      echo "$output" | tail -15 | comment
    fi
  }
  check "gst-inspect-1.0 bwsshttpsrc" \
    'gst-inspect-1.0 bwsshttpsrc | grep -E "^  (Long-name|Rank) "'
  check "gst-inspect-1.0 lists the plugin's element and tracer" \
    'out=$(gst-inspect-1.0 | grep "^bwss: "); echo "$out"; echo "$out" | grep -q "bwsshttpsrc: " && echo "$out" | grep -q "bwss (GstTracerFactory)"'
  check "bwssd --check accepts /etc/bwss/rules.conf" \
    'out=$(bwssd --check); echo "$out"; echo "$out" | grep -q "^/etc/bwss/rules.conf: .*good"'
  check "pkg-config --libs bwss is -lbwss, --modversion $upstream" \
    'test "$(pkg-config --libs bwss)" = "-lbwss " || test "$(pkg-config --libs bwss)" = "-lbwss"
     test "$(pkg-config --modversion bwss)" = '"$upstream"'
     test -e "$(pkg-config --variable=libdir bwss)/libbwss.so" && test -f /usr/include/bwss/bwss.h'
  check "systemd-analyze --user verify bwssd.service (ExecStart, man:bwssd(1))" \
    'mkdir -p -m 700 /run/user/0; XDG_RUNTIME_DIR=/run/user/0 systemd-analyze --user verify /usr/lib/systemd/user/bwssd.service'
  check "systemctl --global is-enabled bwssd: enabled (on by default for every user)" \
    'out=$(systemctl --global is-enabled bwssd); echo "$out"; test "$out" = enabled
     test -L /etc/systemd/user/default.target.wants/bwssd.service'
  # a user opts out (no user manager in the chroot: systemctl works on the
  # unit files, SYSTEMD_OFFLINE=1), and nothing of it is left afterwards
  check "a user opts out with systemctl --user mask bwssd (disable of a unit enabled for all: what it says)" \
    'useradd --create-home viewer
     as_viewer() { runuser -u viewer -- env SYSTEMD_OFFLINE=1 XDG_RUNTIME_DIR=/tmp "$@" 2>&1; }
     state() { as_viewer systemctl --user is-enabled bwssd || true; }
     before=$(state)
     rc=0; as_viewer systemctl --user disable bwssd >/tmp/disable.log || rc=$?
     after_disable=$(state)
     echo "before: $before; systemctl --user disable -> $rc ($(tr "\n" " " </tmp/disable.log)); then: $after_disable"
     as_viewer systemctl --user mask bwssd >/dev/null
     masked=$(state) global=$(systemctl --global is-enabled bwssd || true)
     echo "after systemctl --user mask bwssd: $masked; for every other user: $global"
     good=0
     [ "$before" = enabled ] && [ "$masked" = masked ] && [ "$global" = enabled ] || good=1
     userdel --remove viewer >/dev/null 2>&1 || true
     exit $good'
  # the README's own install lines, as written but for "sudo " (root here)
  # and "../" (the packages are in /debs): the package names and the
  # architecture come out right, and the systemctl line says "enabled"
  local readme
  readme=$(readme_install_lines "$src/README.md")
  check "README.md's install lines run as written (sudo dropped, ../ is /debs/): $(echo "$readme" | grep -c .) lines" \
    "$readme"
  check "bwss-run puts the installed shim in LD_PRELOAD and runs the command" \
    'out=$(bwss-run -- sh -c "echo \$LD_PRELOAD"); echo "$out"; case "$out" in /usr/lib/*/bwss/libbwss-preload.so*) ;; *) exit 1 ;; esac'
  check "/etc/bwss/rules.conf is a conffile of bwssd" \
    'dpkg-query -W -f="\${Conffiles}\n" bwssd | grep -q "^ /etc/bwss/rules.conf "'
  timed "$release: checks" "$t0"

  t0=$(now)
  # shellcheck disable=SC2016
  check "remove keeps the edited conffile; purge leaves no file of dpkg -L, no /etc/bwss, nothing named *bwss*" '
    dpkg -L '"$packages"' | sort -u >/tmp/ours
    echo "# edited" >>/etc/bwss/rules.conf
    apt-get remove -y -q '"$packages"' >/tmp/remove.log
    test -f /etc/bwss/rules.conf || { echo "remove took the conffile"; exit 1; }
    dpkg --purge '"$packages"' >/tmp/purge.log 2>&1   # apt knows no package it removed without conffiles
    left=0
    while read -r f; do
      [ -d "$f" ] && continue                    # shared directories (/usr/bin...)
      if [ -e "$f" ] || [ -L "$f" ]; then echo "left: $f"; left=1; fi
    done </tmp/ours
    for d in /etc/bwss /usr/include/bwss /usr/lib/*/bwss; do
      if [ -e "$d" ]; then echo "left: $d"; left=1; fi
    done
    # not ours: the domain bwss-run made (runtime state of the user, a tmpfs:
    # /run/user/0/bwss/bwss-0 where the runtime directory exists, else
    # /dev/shm/bwss-0.d), the .debs, /var/cache/man (man-db cached bwssd.1
    # when systemd-analyze ran man)
    found=$(find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /debs -o -path /var/cache/apt \
                           -o -path /var/cache/man -o -path /run/user \) -prune -o -name "*bwss*" -print)
    [ -z "$found" ] || { echo "left: $found"; left=1; }
    [ $left = 1 ] || echo "$(grep -vc "^/\.$" /tmp/ours) paths listed before, none left"
    exit $left'
  timed "$release: remove and purge" "$t0"
}

# The package and systemctl lines of README.md's first ```sh block after
# "## Install" (continuations joined): "arch=...", "sudo apt install ../...",
# "systemctl ...", rewritten for the chroot: no sudo, ../ is /debs/; the
# dpkg-buildpackage line is what build_in runs.
readme_install_lines() {
  awk '/^## Install/ { f = 1 } f && /^```sh/ { b = 1; next } b && /^```/ { exit } b' "$1" |
    sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' |
    grep -E '^(arch=|sudo apt install \.\./|systemctl )' | sed 's/^sudo //; s|\.\./|/debs/|g'
}

mkdir -p "$out"
[ -e "$out/.gitignore" ] || echo '*' >"$out/.gitignore"
for release in "${releases[@]}"; do
  echo "# === $release"
  mkdir -p "$out/$release"
  dest=$(cd "$out/$release" && pwd)
  if [ -n "${given_debs[$release]:-}" ]; then
    echo "# $release: the packages of ${given_debs[$release]}"
    debs=${given_debs[$release]}
  else
    rm -f "$dest"/*.deb "$dest"/*.changes "$dest"/*.buildinfo
    build_in "$release" "$dest" || continue
    debs=$dest
  fi
  install_in "$release" "$debs" "$dest" || continue
done

echo "# times:"
printf '#   %s\n' "${times[@]}"
echo "1..$n"
exit $failed
