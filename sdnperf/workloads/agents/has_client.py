"""HTTP adaptive streaming player: fetch segments, keep a playout buffer, adapt the bitrate.

Reads manifest.json from the server, then plays SEGMENTS segments: before each request it
waits while the buffer is full (more than MAX_BUFFER - one segment), picks a rendition
with the named adaptation rule (sdnperf/workloads/playout.py) and downloads the segment
over one persistent HTTP/1.1 connection. Prints one line per segment:
    SEG INDEX RENDITION BITRATE_BPS BYTES T_REQUEST T_DONE BUFFER_S
(times in seconds since the player started: before its manifest request) and 'END' when done.
usage: has_client.py HOST PORT SEGMENTS RULE STARTUP_SEGMENTS MAX_BUFFER_S
"""

import http.client
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import playout  # noqa: E402  (the pure player model, by path: no package import here)

host, port, segments = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rule, startup, max_buffer = sys.argv[4], int(sys.argv[5]), float(sys.argv[6])

conn = http.client.HTTPConnection(host, port, timeout=30)


def get(path):
    conn.request("GET", "/" + path)
    resp = conn.getresponse()
    body = resp.read()
    if resp.status != 200:
        raise SystemExit(f"GET /{path}: HTTP {resp.status}")
    return body


t0 = time.monotonic()  # start-up delay counts from here: connect + manifest + segments
manifest = json.loads(get("manifest.json"))
seg_s = float(manifest["segment_s"])
ladder = [float(r["bitrate"]) for r in manifest["renditions"]]
n_avail = min(len(r["segments"]) for r in manifest["renditions"])
segments = min(segments, n_avail)
player = playout.Player(seg_s, startup)
history: list[float] = []  # bit/s of each segment
for i in range(segments):
    now = time.monotonic() - t0
    while player.startup_delay is not None and player.buffer_level(now) > max_buffer - seg_s:
        time.sleep(min(0.05, player.buffer_level(now) - (max_buffer - seg_s)))
        now = time.monotonic() - t0
    if rule == "buffer":
        r = playout.choose_buffer(player.buffer_level(now), max_buffer, ladder)
    else:
        r = playout.choose_throughput(history, ladder)
    seg = manifest["renditions"][r]["segments"][i]
    t_req = time.monotonic() - t0
    size = len(get(seg["uri"]))
    t_done = time.monotonic() - t0
    history.append(size * 8 / max(t_done - t_req, 1e-6))
    player.on_segment(t_done)
    print(
        f"SEG {i} {r} {ladder[r]:.0f} {size} {t_req:.6f} {t_done:.6f} "
        f"{player.buffer_level(t_done):.3f}",
        flush=True,
    )
print("END", flush=True)
