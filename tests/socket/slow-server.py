#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Serves one body of SIZE bytes to every HTTP GET on 127.0.0.1, CHUNK bytes
every DELAY seconds (a download that lasts long enough to be watched); prints
the port once listening and serves until killed.  The body's byte i is
i % 251, so a copy can be checked.

  slow-server.py SIZE CHUNK DELAY
"""
import http.server
import socketserver
import sys
import time

SIZE, CHUNK, DELAY = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
BODY = bytes(i % 251 for i in range(SIZE))


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(SIZE))
        self.end_headers()
        for at in range(0, SIZE, CHUNK):
            self.wfile.write(BODY[at:at + CHUNK])
            self.wfile.flush()
            time.sleep(DELAY)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


with Server(("127.0.0.1", 0), Handler) as srv:
    print(srv.server_address[1], flush=True)
    srv.serve_forever()
