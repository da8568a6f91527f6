#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A libsoup-2.4 application that plays an http URL through playbin.

What Rhythmbox, grilo 0.3 or a WebKitGTK 4.0 application is to GStreamer:
libsoup 2.4 is in the process (a SoupSession of its own makes a request)
before playbin picks an http source.  Run by test-soup2-app.c with the
plugin in GST_PLUGIN_PATH; serves SECONDS of WAV (8 kHz mono S16, so the
download lasts the playback) on 127.0.0.1 from a thread, plays it to EOS
through fakesinks that sync to the clock, and prints what the harness
checks, one "key value" per line:

  soup-request STATUS     the application's own libsoup-2.4 request
  source FACTORY          the source playbin chose
  rate-headroom X         the source's rate-headroom
  bytes N / seconds S     the resource served
  stats MIN SOURCE        the source's bwss-stats (min-rate, bitrate-source)
  check NAME ok|fail ...  then, the paths where libsoup 2.4 and 3 differ,
                          each a bwsshttpsrc ! fakesink pipeline:
                          auth (user-id/user-pw: SoupSession::authenticate),
                          auth-refused (none: RESOURCE/NOT_AUTHORIZED),
                          tls-untrusted (refused, ssl-strict), tls-ca-file,
                          tls-not-strict (the TLS connection's accept-certificate)
  libsoup2 0|1, libsoup3 0|1   which libsoups the process has mapped
  result eos|error TEXT   how playback ended

Usage: soup2-player.py SECONDS
"""
import base64
import http.server
import io
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import wave

import gi

gi.require_version("Soup", "2.4")
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst, Soup  # noqa: E402

RATE = 48000


def make_wav(seconds):
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        # a 500 Hz square wave: any content plays, silence is as good
        period = RATE // 500
        frame = (b"\x00\x40\x00\x40" * (period // 2)) + (b"\x00\xc0\x00\xc0" * (period // 2))
        w.writeframes(frame * (seconds * RATE // period))
    return out.getvalue()


CREDENTIALS = "Basic " + base64.b64encode(b"user:secret").decode()


def serve(data, tls=None):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):
            if self.path.startswith("/auth/") and self.headers.get("Authorization") != CREDENTIALS:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="bwss"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return False
            self.send_response(200)
            self.send_header("Content-Type", "audio/x-wav")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()

        def do_GET(self):
            if self.do_HEAD() is False:
                return
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*tls)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def mapped(name):
    with open("/proc/self/maps") as f:
        return int(any(name in line for line in f))


def fetch(url, **props):
    """bwsshttpsrc location=URL PROPS ! fakesink to the end: (bytes, error)."""
    pipe = Gst.Pipeline()
    src = Gst.ElementFactory.make("bwsshttpsrc", None)
    sink = Gst.ElementFactory.make("fakesink", None)
    src.set_property("location", url)
    src.set_property("retries", 0)
    for k, v in props.items():
        src.set_property(k.replace("_", "-"), v)
    sink.set_property("signal-handoffs", True)
    got = [0]
    sink.connect("handoff", lambda _s, buf, _p: got.__setitem__(0, got[0] + buf.get_size()))
    pipe.add(src)
    pipe.add(sink)
    src.link(sink)
    pipe.set_state(Gst.State.PLAYING)
    m = pipe.get_bus().timed_pop_filtered(30 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    error = None
    if m is None:
        error = "timeout"
    elif m.type == Gst.MessageType.ERROR:
        err, _dbg = m.parse_error()
        error = "%s:%d %s" % (err.domain, err.code, err.message)
    pipe.set_state(Gst.State.NULL)
    return got[0], error


def check(name, ok, detail):
    print("check %s %s %s" % (name, "ok" if ok else "fail", detail))
    sys.stdout.flush()


def checks(data, url):
    """The paths where the element's libsoup 2.4 code differs from 3's."""
    n, err = fetch(url.replace("/audio.wav", "/auth/audio.wav"), user_id="user", user_pw="secret")
    check("auth", err is None and n == len(data), "%d bytes, error %s" % (n, err))
    n, err = fetch(url.replace("/audio.wav", "/auth/audio.wav"))
    check("auth-refused", err is not None and "resource" in err and ":%d " % Gst.ResourceError.NOT_AUTHORIZED in err,
          "error %s" % err)
    with tempfile.TemporaryDirectory() as d:
        key, crt = os.path.join(d, "key.pem"), os.path.join(d, "cert.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", crt], check=True, capture_output=True)
        tls = serve(data, (crt, key))
        https = "https://127.0.0.1:%d/audio.wav" % tls.server_address[1]
        n, err = fetch(https)
        check("tls-untrusted", err is not None and n == 0, "%d bytes, error %s" % (n, err))
        n, err = fetch(https, ssl_ca_file=crt)
        check("tls-ca-file", err is None and n == len(data), "%d bytes, error %s" % (n, err))
        n, err = fetch(https, ssl_strict=False)
        check("tls-not-strict", err is None and n == len(data), "%d bytes, error %s" % (n, err))
        tls.shutdown()


def main():
    seconds = int(sys.argv[1])
    data = make_wav(seconds)
    server = serve(data)
    url = "http://127.0.0.1:%d/audio.wav" % server.server_address[1]
    print("bytes", len(data))
    print("seconds", seconds)

    # the application's own use of libsoup 2.4, before GStreamer plays
    session = Soup.Session()
    msg = Soup.Message.new("HEAD", url)
    print("soup-request", session.send_message(msg))

    Gst.init(None)
    playbin = Gst.ElementFactory.make("playbin", None)
    playbin.set_property("uri", url)
    for prop in ("audio-sink", "video-sink"):
        sink = Gst.ElementFactory.make("fakesink", None)
        sink.set_property("sync", True)
        playbin.set_property(prop, sink)

    def source_setup(_bin, source):
        print("source", source.get_factory().get_name())
        if source.find_property("rate-headroom"):
            print("rate-headroom", source.get_property("rate-headroom"))
        sys.stdout.flush()

    playbin.connect("source-setup", source_setup)
    loop = GLib.MainLoop()
    result = []

    def on_message(_bus, m):
        if m.type == Gst.MessageType.EOS:
            result.append("eos")
            loop.quit()
        elif m.type == Gst.MessageType.ERROR:
            err, dbg = m.parse_error()
            result.append("error %s (%s)" % (err.message, dbg))
            loop.quit()
        elif m.type == Gst.MessageType.ELEMENT and m.get_structure().get_name() == "bwss-stats":
            s = m.get_structure()
            print("stats %.0f %s" % (s.get_value("min-rate"), s.get_value("bitrate-source")))
            sys.stdout.flush()

    bus = playbin.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)
    GLib.timeout_add_seconds(seconds + 60, lambda: (result.append("error timeout"), loop.quit()))
    playbin.set_state(Gst.State.PLAYING)
    loop.run()
    playbin.set_state(Gst.State.NULL)
    checks(data, url)
    print("libsoup2", mapped("libsoup-2.4.so"))
    print("libsoup3", mapped("libsoup-3.0.so"))
    print("result", result[0] if result else "none")
    server.shutdown()
    return 0 if result and result[0] == "eos" else 1


if __name__ == "__main__":
    sys.exit(main())
