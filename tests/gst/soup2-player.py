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
  libsoup2 0|1, libsoup3 0|1   which libsoups the process has mapped
  result eos|error TEXT   how playback ended

Usage: soup2-player.py SECONDS
"""
import http.server
import io
import sys
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


def serve(data):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Type", "audio/x-wav")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()

        def do_GET(self):
            self.do_HEAD()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def mapped(name):
    with open("/proc/self/maps") as f:
        return int(any(name in line for line in f))


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
    print("libsoup2", mapped("libsoup-2.4.so"))
    print("libsoup3", mapped("libsoup-3.0.so"))
    print("result", result[0] if result else "none")
    server.shutdown()
    return 0 if result and result[0] == "eos" else 1


if __name__ == "__main__":
    sys.exit(main())
