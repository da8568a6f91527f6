# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# tests/deps/chroot.sh — Debian chroots made with mmdebstrap from Debian's
# packages, cached as tarballs; sourced by tests/bootstrap (trixie) and
# tests/install/check-debs.sh.  Needs root, mmdebstrap, unshare, zstd.
#
#   chroot_tarball NAME RELEASE VARIANT [PACKAGE...]
#       prints the path of a cached tarball of that chroot; makes it when it
#       is missing or older than BWSS_CHROOT_MAX_AGE_DAYS (default 7: a stale
#       cache is rebuilt, so the packages are the release's current ones)
#   chroot_extract TARBALL DIR   a fresh chroot in DIR
#   chroot_run DIR COMMAND       runs the shell line COMMAND as root in DIR
#   chroot_run_isolated DIR COMMAND   the same in new network, PID, IPC and
#                                UTS namespaces (only a loopback, only its own
#                                processes): for test suites
#   chroot_remove DIR            removes DIR (only if nothing is mounted there)
#
# Environment: BWSS_CHROOT_CACHE (default /var/cache/bwss-chroots),
# BWSS_MIRROR (default: the host's Debian mirror, else deb.debian.org),
# CHROOT_ENV (extra VAR=VALUE words for chroot_run).
#
# chroot_run mounts /proc, a read-only /sys, a devpts instance and a tmpfs on
# /dev/shm in a private mount namespace (unshare): they exist only while the
# command runs and vanish with it, whatever happens to the caller.  The host's
# network is shared (apt needs it).  chroot_run_isolated gives the command its
# own network and PID namespaces: sock_diag and /proc then show the chroot's
# sockets and processes only, so neither a bwssd on the host adopts the
# tests' downloads nor the tests' bwssd the host's (both run as root), and
# every process left behind dies with the namespace's init.  A download cache per release
# (BWSS_CHROOT_CACHE/apt-RELEASE) is bound on /var/cache/apt/archives, so a
# package is fetched once; each chroot is still a fresh extraction.

BWSS_CHROOT_CACHE=${BWSS_CHROOT_CACHE:-/var/cache/bwss-chroots}
BWSS_CHROOT_MAX_AGE_DAYS=${BWSS_CHROOT_MAX_AGE_DAYS:-7}

chroot_log() { echo "chroot: $*" >&2; }

chroot_mirror() {
  local m=
  if [ -n "${BWSS_MIRROR:-}" ]; then echo "$BWSS_MIRROR"; return; fi
  # deb822: the first URIs of debian.sources is the main archive (the
  # second stanza is debian-security)
  [ -f /etc/apt/sources.list.d/debian.sources ] &&
    m=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  [ -n "$m" ] || [ ! -f /etc/apt/sources.list ] ||
    m=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; exit } }' /etc/apt/sources.list)
  echo "${m:-http://deb.debian.org/debian}"
}

chroot_security_mirror() {
  local m=
  if [ -n "${BWSS_SECURITY_MIRROR:-}" ]; then echo "$BWSS_SECURITY_MIRROR"; return; fi
  [ -f /etc/apt/sources.list.d/debian.sources ] &&
    m=$(awk '/^URIs:/ && /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  echo "${m:-http://deb.debian.org/debian-security}"
}

# the release with its updates and security suites, as a user's system has
chroot_sources() {
  local release=$1 mirror
  mirror=$(chroot_mirror)
  printf '%s\n' "deb $mirror $release main" "deb $mirror $release-updates main" \
    "deb $(chroot_security_mirror) $release-security main"
}

chroot_tarball() {
  local name=$1 release=$2 variant=$3; shift 3
  local key tarball new lock includes t0 sources=()
  mapfile -t sources < <(chroot_sources "$release")
  key=$(printf '%s\n' "$variant" "${sources[@]}" "$@" | sort -u | sha256sum | cut -c1-12)
  tarball=$BWSS_CHROOT_CACHE/$name-$release-$key.tar.zst
  mkdir -p "$BWSS_CHROOT_CACHE"
  exec {lock}>"$BWSS_CHROOT_CACHE/.$name-$release.lock"
  flock "$lock"
  if [ -f "$tarball" ] && [ -z "$(find "$tarball" -mmin +$((BWSS_CHROOT_MAX_AGE_DAYS * 1440)))" ]; then
    chroot_log "cached $tarball"
  else
    [ -f "$tarball" ] && chroot_log "stale (older than $BWSS_CHROOT_MAX_AGE_DAYS days): $tarball"
    rm -f "$BWSS_CHROOT_CACHE/$name-$release-"*.tar.zst
    includes=$(IFS=,; echo "$*")
    new=$BWSS_CHROOT_CACHE/.new-$name-$release-$key.tar.zst
    chroot_log "mmdebstrap --variant=$variant $release ($# packages more) from ${sources[0]#deb }"
    t0=$(date +%s.%N)
    if ! mmdebstrap --quiet --variant="$variant" ${includes:+--include="$includes"} \
        "$release" "$new" "${sources[@]}"; then
      rm -f "$new"; exec {lock}>&-; return 1
    fi
    mv "$new" "$tarball"
    chroot_log "made $tarball in $(chroot_since "$t0") s"
  fi
  exec {lock}>&-
  echo "$tarball"
}

chroot_since() { echo "$(date +%s.%N) $1" | awk '{ printf "%.1f", $1 - $2 }'; }

chroot_extract() {
  local tarball=$1 dir=$2
  mkdir -p "$dir"
  tar --zstd -xpf "$tarball" -C "$dir" --numeric-owner
  cp -L --remove-destination /etc/resolv.conf "$dir/etc/resolv.conf"
  # no daemon of a package installed later starts in the chroot
  printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
  chmod 755 "$dir/usr/sbin/policy-rc.d"
  # the tarball's /dev has the basic nodes; the lab's delay stage needs a tun
  mkdir -p "$dir/dev/net"
  [ -e "$dir/dev/net/tun" ] || mknod -m 666 "$dir/dev/net/tun" c 10 200
}

chroot_run() { chroot_unshare "$1" shared -- "${@:2}"; }
chroot_run_isolated() { chroot_unshare "$1" isolated -- "${@:2}"; }

chroot_unshare() {   # chroot_unshare DIR shared|isolated -- COMMAND
  local dir=$1 mode=$2 opts=(--mount --propagation private); shift 3
  [ "$mode" = shared ] || opts+=(--net --pid --fork --ipc --uts)
  local release archives
  release=$(. "$dir/etc/os-release" && echo "${VERSION_CODENAME:-unknown}")
  archives=$BWSS_CHROOT_CACHE/apt-$release
  mkdir -p "$archives/partial"
  unshare "${opts[@]}" -- /bin/bash -ec '
    d=$1 archives=$2 env=$3 mode=$4; shift 4
    # a new network namespace has a loopback that is down
    [ "$mode" = shared ] || ip link set lo up
    # the chroot'"'"'s / a mount point of its own (ip netns exec remounts it)
    mount --bind "$d" "$d"
    mount -t proc proc "$d/proc"
    mount -t sysfs -o ro sysfs "$d/sys" 2>/dev/null || mount --bind -o ro /sys "$d/sys"
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$d/dev/pts"
    mount --bind "$d/dev/pts/ptmx" "$d/dev/ptmx"
    mount -t tmpfs -o mode=1777,size=1g tmpfs "$d/dev/shm"
    mount --bind "$archives" "$d/var/cache/apt/archives"
    exec chroot "$d" /usr/bin/env -i \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive $env \
      /bin/bash -ec "$*"
  ' chroot-run "$dir" "$archives" "${CHROOT_ENV:-}" "$mode" "$@"
}

chroot_remove() {
  local dir=$1
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  # chroot_run's mounts live in their own namespace; this only guards
  # against a mount made by hand under the chroot
  if findmnt -rn -o TARGET | grep -q "^$dir/"; then
    findmnt -rn -o TARGET | grep "^$dir/" | sort -r | xargs -r -n1 umount -l || true
  fi
  if findmnt -rn -o TARGET | grep -q "^$dir/"; then
    chroot_log "not removing $dir: something is still mounted there"
    return 1
  fi
  rm -rf --one-file-system "$dir"
}

# the source tree as a checkout has it (tracked files and new ones git does
# not ignore; a tree without .git: everything but build directories) into DIR
chroot_copy_source() {
  local src=$1 dest=$2
  mkdir -p "$dest"
  if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$src" && { git ls-files -z --cached --others --exclude-standard; } |
       xargs -0 -r sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done' sh |
       tar --null -T - -cf -) | tar -xf - -C "$dest"
  else
    (cd "$src" && tar --exclude='./build*' --exclude='./obj-*' --exclude='./results' -cf - .) |
      tar -xf - -C "$dest"
  fi
}
