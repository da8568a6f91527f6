#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Serves a directory over HTTP on 127.0.0.1 with byte ranges (one range per
request, as players ask), which python's http.server does not: a player in
pull mode (typefind, matroskademux) reads where it wants.  With --port 0
(the default: any free port) it prints the port once listening; it serves
until killed.  With --hold FILE each response stops after the first half of
its body until FILE exists, so a test can look at a download that is
certain to be open, for as long as the test needs.

  range-server.py [--port N] [--hold FILE] DIRECTORY
"""
import argparse
import functools
import http.server
import os
import re
import sys
import time

# --hold: how often a held response looks for its file, seconds
HOLD_POLL_S = 0.05


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    def send_head(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return None
        size = os.path.getsize(path)
        start, end = 0, size - 1
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if m and (m.group(1) or m.group(2)):
            if m.group(1):
                start = int(m.group(1))
                end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            else:                                   # the last N bytes
                start = max(size - int(m.group(2)), 0)
            if start > end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        else:
            self.send_response(200)
        f = open(path, "rb")
        f.seek(start)
        self.remaining = end - start + 1
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Length", str(self.remaining))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        return f

    hold = None       # --hold FILE

    def copyfile(self, source, outputfile):
        held = self.hold is not None
        half = self.remaining // 2
        while self.remaining > 0:
            if held and self.remaining <= half:
                outputfile.flush()
                while not os.path.exists(self.hold):
                    time.sleep(HOLD_POLL_S)
                held = False
            step = self.remaining - half if held else self.remaining
            chunk = source.read(min(step, 64 * 1024))
            if not chunk:
                break
            outputfile.write(chunk)
            self.remaining -= len(chunk)

    def log_message(self, *args):
        pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--hold", help="send the second half of each body once this file exists")
    p.add_argument("directory")
    a = p.parse_args()
    RangeHandler.hold = a.hold
    handler = functools.partial(RangeHandler, directory=a.directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), handler)
    if a.port == 0:
        print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
