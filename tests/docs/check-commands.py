#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-commands.py SOURCE_ROOT BUILD_ROOT — every gst-launch-1.0,
bwss-run, bwss-top and bwssd line of README.md, examples/README.md and the
man pages' EXAMPLES runs as written, against a local HTTP server, and says
no warning.  TAP output.

Which lines: in the Markdown files, the lines of ```sh blocks (continuation
lines joined); in docs/man/*.[1-8], the lines between .nf and .fi of the
EXAMPLES section (groff escapes undone); of those, the ones whose command
(after VAR=VALUE words) is one of COMMANDS.  The package and systemctl
lines run in the package test's chroot instead (tests/install/check-debs.sh).

How each runs (the only changes made to a line, and why):
  - every URL's scheme and host (http://server/, https://example.org/,
    http://cam/) become this test's server, http://127.0.0.1:PORT/: it
    answers *.m3u8 and the paths below /hls/ with a small HLS stream (one
    MPEG-TS segment of MP3 audio, sent at SEGMENT_RATE_BPS as a network
    would, not in one loopback copy: see there) and
    every other path with a 2-second VP8 video in Matroska (decodebin and
    playbin find the type by content, not by the name);
  - a trailing '&' is dropped: the line runs in the foreground;
  - the machine has no display and no sound card: autovideosink and
    autoaudiosink become fakevideosink and fakeaudiosink, and playbin and
    playbin3 get video-sink=fakevideosink audio-sink=fakeaudiosink (ranking
    the fake sinks first instead makes GStreamer 1.22's playbin crash).
The environment is the build tree's, as examples/README.md sets it (its
`export` line): the build's plugin in GST_PLUGIN_PATH (a registry of the
test's own), the build's programs on PATH; a runtime directory and domain
of the test's own, where a bwssd of the test runs (so `bwss-top --check`
finds protection on).  As root the whole test runs in new network, PID and
mount namespaces (unshare): the bwssd lines adopt no socket of the host's
and the host's bwssd none of the test's.

A line passes if it exits 0 within TIMEOUT_S (bwss-top's live view and
bwssd --foreground run until stopped: still running at RUN_S is a pass; they
get SIGINT/SIGTERM) and nothing it prints contains one of BAD_WORDS (a
property that does not parse is "WARNING: erroneous pipeline: could not set
property"; GStreamer's own warnings of the pipeline's parsing are turned on
with GST_DEBUG=GST_PIPELINE:2)."""
import http.server
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

COMMANDS = ("gst-launch-1.0", "bwss-run", "bwss-top", "bwssd")
# The HLS segment goes out at this rate, in SEGMENT_CHUNK-byte writes (bit/s,
# bytes), as a network delivers it.  GStreamer's adaptivedemux2 (playbin3's
# hlsdemux2) reads a download in 32 KiB pieces, starts its output task when
# the first piece is parsed and exposes its pads from that task; if the
# manifest's last fragment is parsed before the task has run, end_of_manifest
# finds no output to end and posts "Couldn't download fragments"
# (gstadaptivedemux-stream.c, 1.22).  From a real server a fragment arrives
# over round trips, and the task runs meanwhile; from a loopback copy the
# rest of this one-fragment stream follows within a millisecond, and a busy
# host leaves the task unscheduled that long.  At four times the stream's
# 64 kbit/s, a slow link, the 45 kB segment takes 1.4 s, of which the 13 kB
# after the first piece, 0.4 s, is the time the task has to run
# (docs/testing.md, the docs suite).
SEGMENT_RATE_BPS = 256000
SEGMENT_CHUNK = 8 * 188  # eight MPEG-TS packets
DOCS = ("README.md", "examples/README.md")
TIMEOUT_S = 40          # a gst-launch line plays 2 to 4 s of media in real time
RUN_S = 3               # how long a command that runs until stopped is watched
BAD_WORDS = ("WARNING", "CRITICAL", "ERROR", "erroneous", "could not", "Could not",
             "No such element", "not parse", "Failed")
HEADLESS = {"autovideosink": "fakevideosink", "autoaudiosink": "fakeaudiosink",
            "playbin": "playbin video-sink=fakevideosink audio-sink=fakeaudiosink",
            "playbin3": "playbin3 video-sink=fakevideosink audio-sink=fakeaudiosink"}


def isolate():
    """Re-runs this script in new network, PID and mount namespaces (root)."""
    if os.environ.get("BWSS_DOCS_ISOLATED") == "1":
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        return
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("1..0 # SKIP needs root and unshare (the bwssd lines adopt the user's sockets: "
              "the test runs them in namespaces of its own)")
        sys.exit(0)
    env = dict(os.environ, BWSS_DOCS_ISOLATED="1")
    r = subprocess.run(["unshare", "--net", "--pid", "--fork", "--mount", "--mount-proc",
                        sys.executable] + sys.argv, env=env)
    sys.exit(r.returncode)


def unroff(line):
    return (line.replace("\\-", "-").replace("\\(aq", "'").replace("\\(em", "--")
            .replace("\\e", "\\").replace("\\&", ""))


def markdown_lines(path):
    lines, block, cont = [], False, ""
    for n, raw in enumerate(open(path, encoding="utf-8"), 1):
        s = raw.rstrip("\n")
        if s.startswith("```"):
            block = s.strip() == "```sh" if not block else False
            continue
        if not block:
            continue
        if s.endswith("\\"):
            cont += s[:-1] + " "
            continue
        lines.append((n, cont + s))
        cont = ""
    return lines


def man_lines(path):
    lines, section, fill = [], None, False
    for n, raw in enumerate(open(path, encoding="utf-8"), 1):
        s = raw.rstrip("\n")
        if s.startswith(".SH "):
            section = s[4:].strip().strip('"')
            continue
        if section != "EXAMPLES":
            continue
        if s.startswith(".nf"):
            fill = True
        elif s.startswith(".fi"):
            fill = False
        elif fill and not s.startswith("."):
            lines.append((n, unroff(s)))
    return lines


def words_of(line):
    """The words of @line before its comment."""
    words = line.split()
    return words[:words.index("#")] if "#" in words else words


def command_of(line):
    """The command word of @line after its VAR=VALUE words, or None."""
    for word in words_of(line):
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            continue
        return word
    return None


def rewrite(line, port):
    line = re.sub(r"https?://[A-Za-z0-9.-]+(:[0-9]+)?/", "http://127.0.0.1:%d/" % port, line)
    line = re.sub(r"\s*&\s*(#.*)?$", "", line)
    if command_of(line) == "gst-launch-1.0":
        line = re.sub(r"(?<![\w=/.-])(autovideosink|autoaudiosink|playbin3|playbin)(?![\w=-])",
                      lambda m: HEADLESS[m.group(1)], line)
    return line


def runs_until_stopped(line):
    words = words_of(line)
    cmd = command_of(line)
    if cmd == "bwss-top":
        return not any(w in words for w in ("--once", "-1", "--check", "--paths", "--suspend", "--resume"))
    if cmd == "bwssd":
        return "--foreground" in words or "-f" in words
    return False


def make_media(media, env):
    """A 2-s VP8 video in Matroska; an HLS stream of one 4-s segment of MP3
    in MPEG-TS (one pipeline: splitmuxsink hangs at EOS now and then in
    GStreamer 1.22)."""
    def gst(pipeline):
        subprocess.run(["gst-launch-1.0", "-q"] + pipeline.split(), check=True, timeout=60,
                       stdout=subprocess.DEVNULL, env=env)
    gst("videotestsrc num-buffers=60 ! video/x-raw,width=320,height=240,framerate=30/1 ! "
        "vp8enc deadline=1 ! matroskamux ! filesink location=%s/movie.mkv" % media)
    os.makedirs(media + "/hls", exist_ok=True)
    gst("audiotestsrc num-buffers=173 ! audio/x-raw,rate=44100,channels=1 ! lamemp3enc bitrate=64 ! "
        "mpegaudioparse ! mpegtsmux ! filesink location=%s/hls/seg0.ts" % media)
    with open(media + "/hls/media.m3u8", "w") as f:
        f.write("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:0\n"
                "#EXTINF:4.0,\n/hls/seg0.ts\n#EXT-X-ENDLIST\n")
    with open(media + "/hls/master.m3u8", "w") as f:
        f.write("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=80000,CODECS=\"mp4a.40.34\"\n/hls/media.m3u8\n")


def serve(media):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path):
            p = path.split("?", 1)[0]
            base = os.path.basename(p)
            if base.endswith(".ts") and os.path.exists(media + "/hls/" + base):
                return media + "/hls/" + base
            if base == "media.m3u8":
                return media + "/hls/media.m3u8"
            if p.endswith(".m3u8"):
                return media + "/hls/master.m3u8"
            return media + "/movie.mkv"

        def copyfile(self, source, outputfile):
            if not self.path.split("?", 1)[0].endswith(".ts"):
                return super().copyfile(source, outputfile)
            while True:
                chunk = source.read(SEGMENT_CHUNK)
                if not chunk:
                    return
                outputfile.write(chunk)
                time.sleep(len(chunk) * 8 / SEGMENT_RATE_BPS)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def run_line(line, env, cwd):
    """Returns (passed, why, output)."""
    p = subprocess.Popen(["bash", "-c", line], env=env, cwd=cwd, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    long_running = runs_until_stopped(line)
    try:
        out, _ = p.communicate(timeout=RUN_S if long_running else TIMEOUT_S)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGINT if command_of(line) == "bwss-top" else signal.SIGTERM)
        try:
            out, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
        if not long_running:
            return False, "still running after %d s" % TIMEOUT_S, out.decode(errors="replace")
        rc = 0 if p.returncode in (0, -signal.SIGINT, -signal.SIGTERM) else p.returncode
    text = out.decode(errors="replace")
    bad = [w for w in BAD_WORDS if w in text]
    if rc != 0:
        return False, "exit status %d" % rc, text
    if bad:
        return False, "it printed %s" % ", ".join(repr(w) for w in bad), text
    return True, "exit 0" if not long_running else "ran until stopped", text


def main():
    src, build = sys.argv[1], sys.argv[2]
    isolate()
    tmp = tempfile.mkdtemp(prefix="bwss-docs-")
    os.chmod(tmp, 0o700)
    media, work = tmp + "/media", tmp + "/work"
    for d in (media, work, tmp + "/run", tmp + "/home", tmp + "/config"):
        os.makedirs(d, mode=0o700, exist_ok=True)
    tools = [build + "/libbwss/programs/tools", build + "/libbwss/programs/bwssd"]
    env = dict(os.environ,
               PATH=":".join(tools) + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
               GST_PLUGIN_PATH=build + "/gst-plugin", GST_REGISTRY=tmp + "/registry.bin",
               GST_DEBUG="GST_PIPELINE:2", GST_DEBUG_NO_COLOR="1",
               XDG_RUNTIME_DIR=tmp + "/run", HOME=tmp + "/home", XDG_CONFIG_HOME=tmp + "/config",
               BWSS_DOMAIN="bwss-docs-%d" % os.getpid(), LC_ALL="C.UTF-8")
    env.pop("BWSS_DOCS_ISOLATED", None)
    make_media(media, env)
    srv = serve(media)
    port = srv.server_address[1]
    # the user's bwssd, as the unit starts it
    bwssd = subprocess.Popen(["bwssd", "--foreground"], env=env, stdout=subprocess.DEVNULL,
                             stderr=open(tmp + "/bwssd.log", "w"))
    for _ in range(100):
        top = subprocess.run(["bwss-top", "--once", "--json"], env=env, capture_output=True, text=True)
        if '"bwssd_pid":%d' % bwssd.pid in top.stdout:
            break
        time.sleep(0.1)

    sources = [os.path.join(src, d) for d in DOCS]
    sources += sorted(os.path.join(src, "docs/man", f) for f in os.listdir(os.path.join(src, "docs/man"))
                      if re.search(r"\.[1-8]$", f))
    n = failed = 0
    # the detector itself: the README's line before issue 26, whose min-rate
    # gst-launch cannot parse (a guint64 is a plain number), must fail
    old = rewrite("gst-launch-1.0 bwsshttpsrc location=http://cam/live.ts min-rate=5M ! decodebin ! autovideosink", port)
    passed, why, _ = run_line(old, env, work)
    n += 1
    if passed:
        failed += 1
    print("%s %d - a property that does not parse fails a line (min-rate=5M: %s)" % ("not ok" if passed else "ok", n, why))
    for path in sources:
        lines = markdown_lines(path) if path.endswith(".md") else man_lines(path)
        for lineno, line in lines:
            if line.lstrip().startswith("#") or command_of(line) not in COMMANDS:
                continue
            cmd = rewrite(line, port)
            passed, why, out = run_line(cmd, env, work)
            n += 1
            where = "%s:%d" % (os.path.relpath(path, src), lineno)
            print("%s %d - %s: %s (%s)" % ("ok" if passed else "not ok", n, where, line.strip(), why))
            if not passed:
                failed += 1
                print("# ran: " + cmd)
                for l in out.splitlines()[-15:]:
                    print("# " + l)
    bwssd.send_signal(signal.SIGTERM)
    bwssd.wait(timeout=10)
    srv.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)
    if n == 0:
        print("not ok 1 - no command found in the docs")
        n, failed = 1, 1
    print("1..%d" % n)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
