#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# isolated.sh COMMAND [ARG...] — runs a loopback test, as root, in network,
# PID and mount namespaces of its own (as the Debian 13 leg runs every
# suite: tests/deps/chroot.sh); otherwise runs it as it is.
#
# Why: bwssd adopts every TCP socket of its user it can see.  A root test's
# downloads and sockets on the machine's loopback are seen by any other
# bwssd of root — another test running beside it, or root's own from the
# package — which then clamps them under the test (seen: test-domain's
# released clamp 32768 instead of 127488, bwssd-deaths' clamp held at
# 65483), and the test's own bwssd would adopt the machine's.  In a network
# namespace of its own, sock_diag shows each only its own sockets.
#
# bash stays PID 1 of the namespace (the test is its child, not exec'd) so
# that the processes a test orphans (a killed bwssd's watchdog) are reaped;
# --kill-child ends the namespace when meson stops unshare.
if [ "$(id -u)" = 0 ] && [ -z "${BWSS_TEST_ISOLATED:-}" ] && command -v unshare >/dev/null &&
   unshare --net --pid --fork --mount --mount-proc true 2>/dev/null; then
  BWSS_TEST_ISOLATED=1 exec unshare --net --pid --fork --mount --mount-proc --kill-child \
    /bin/bash -c 'ip link set lo up || exit 1; "$@"; rc=$?; exit $rc' isolated "$@"
fi
exec "$@"
