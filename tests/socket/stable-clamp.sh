# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the tests that compare an adopted socket's clamp with the window
# bwss-top shows (test-bwssd.sh through bwssd-common.sh, test-sockd.sh).
# The window bwss-top shows for the flow of @1 (pid) and the clamp on the
# socket itself, read by the command @2... (prints the clamp): "CLAMP
# WINDOW", taken while the window held still across the clamp's read — the
# controller may move it between two reads (a test that compared one read
# of each failed once, 130966 against 65483).  Needs flow_of.  Returns 1
# (and prints the last pair) if the window never held still in 2 s.
stable_clamp () {
  local pid=$1 w1 w2 c; shift
  for _ in $(seq 40); do
    w1=$(flow_of "$pid" | cut -d" " -f3)
    c=$("$@")
    w2=$(flow_of "$pid" | cut -d" " -f3)
    if [ -n "$w1" ] && [ "$w1" = "$w2" ]; then echo "$c $w1"; return 0; fi
    sleep 0.05
  done
  echo "$c ${w1:-none}"
  return 1
}
