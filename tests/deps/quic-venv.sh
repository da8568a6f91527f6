#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/deps/quic-venv.sh [DIR] — the lab's QUIC download (--set quic=1)
# needs aioquic, which Debian does not package: a virtual environment with
# it, from PyPI (default DIR /opt/bwss-lab-quic; the lab finds it there, or
# at $BWSS_LAB_QUIC_PYTHON).  Needs python3-venv and the network.
set -eu
dir=${1:-/opt/bwss-lab-quic}
python3 -m venv "$dir"
# the version the lab was measured with (docs/lab.md, "A QUIC download")
"$dir/bin/pip" install -q aioquic==1.2.0
"$dir/bin/python" -c 'import aioquic; print("aioquic", aioquic.__version__, "in", "'"$dir"'")'
