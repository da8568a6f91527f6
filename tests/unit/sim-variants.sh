#!/bin/bash
# runs every sim subtest under env "$@"; prints failures
cd ${BUILD:-/tmp/cost-exp/build}
n=0; tot=0; fails=""
for t in capacity controller rtt-mix player; do
  for p in $(./tests/unit/test-$t -l | grep ^/); do
    tot=$((tot+1))
    if ! env "$@" ./tests/unit/test-$t -p $p >/dev/null 2>&1; then n=$((n+1)); fails="$fails ${p#/}"; fi
  done
done 2>/dev/null
echo "$*: $n of $tot fail:$fails"
