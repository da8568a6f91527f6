#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""churn.py SECONDS RATE — short downloads on loopback for bwssd's churn test:
a server that answers each connection with 64 kB every 100 ms for 0.8 s
(512 kB in all, then it closes), and a client that opens RATE connections a
second for SECONDS seconds and reads each to its end.  Prints
"opened N completed M" and exits 0 if every download got its 512 kB."""
import asyncio
import sys

CHUNK, CHUNKS, GAP = 65536, 8, 0.1


async def serve(reader, writer):
    try:
        await reader.read(16)
        for _ in range(CHUNKS):
            writer.write(b"\0" * CHUNK)
            await writer.drain()
            await asyncio.sleep(GAP)
    finally:
        writer.close()


async def fetch(port, done):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"go")
    got = 0
    while True:
        data = await reader.read(1 << 16)
        if not data:
            break
        got += len(data)
    writer.close()
    if got == CHUNK * CHUNKS:
        done.append(1)


async def main():
    seconds, rate = float(sys.argv[1]), float(sys.argv[2])
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    done, tasks = [], []
    loop = asyncio.get_running_loop()
    start = loop.time()
    n = 0
    while loop.time() - start < seconds:
        tasks.append(asyncio.create_task(fetch(port, done)))
        n += 1
        await asyncio.sleep(max(0.0, start + n / rate - loop.time()))
    await asyncio.gather(*tasks, return_exceptions=True)
    server.close()
    print("opened %d completed %d" % (n, len(done)))
    return 0 if len(done) == n else 1


sys.exit(asyncio.run(main()))
