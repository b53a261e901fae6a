"""Live-video sender: a paced UDP stream of RTP packets at a fixed bitrate.

Every frame (1/FPS s) carries BITRATE/FPS/8 bytes split into packets of at most PKT bytes,
spread evenly over the frame interval. Each packet is a 12-byte RTP header (PT 96, marker
on a frame's last packet, 90-kHz timestamp) followed by our fields: 32-bit sequence,
send time, the frame's capture time (both unix seconds, doubles), frame number, packets
in the frame and the packet's index in it. After the last frame, END datagrams tell the
receiver how many packets and frames were sent.
usage: rtp_pacer.py DST PORT BITRATE_BPS FPS PKT DURATION_S
"""

import math
import socket
import struct
import sys
import time

dst, port = sys.argv[1], int(sys.argv[2])
bitrate, fps, pkt = float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
duration = float(sys.argv[6])
RTP = struct.Struct("!BBHII")
OURS = struct.Struct("!IddIHH")
head = RTP.size + OURS.size
frame_bytes = max(1, int(round(bitrate / fps / 8)))
npkt = max(1, math.ceil(frame_bytes / (pkt - head)))
sizes = [frame_bytes // npkt + (1 if i < frame_bytes % npkt else 0) for i in range(npkt)]
frames = max(1, int(round(duration * fps)))
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
ssrc, seq = 0x5D4E5001, 0
start = time.time() + 0.05
for f in range(frames):
    frame_time = start + f / fps
    for i, body in enumerate(sizes):
        due = frame_time + i / (fps * npkt)
        delay = due - time.time()
        if delay > 0:
            time.sleep(delay)
        marker = 0x80 if i == npkt - 1 else 0
        rtp = RTP.pack(0x80, marker | 96, seq & 0xFFFF, int(f * 90000 / fps) & 0xFFFFFFFF, ssrc)
        ours = OURS.pack(seq, time.time(), frame_time, f, npkt, i)
        try:
            sock.sendto(rtp + ours + bytes(max(0, body)), (dst, port))
        except OSError:
            pass  # a full queue or a down link is loss, as for a real encoder
        seq += 1
end = f"END {seq} {frames}".encode()
for _ in range(5):
    sock.sendto(end, (dst, port))
    time.sleep(0.02)
print(f"SENT {seq} {frames} {npkt}", flush=True)
