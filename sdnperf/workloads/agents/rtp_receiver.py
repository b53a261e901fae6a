"""Live-video receiver: record every packet of the paced stream, then print them.

Prints one line per packet 'SEQ SEND RECV FRAME_TIME FRAME NPKT IDX BYTES' (times in unix
seconds) and, if the sender's END arrived, 'END SENT FRAMES'. Stops at END or after
DEADLINE_S seconds.
usage: rtp_receiver.py BIND_IP PORT DEADLINE_S READY_FILE
"""

import socket
import struct
import sys
import time

ip, port, deadline, ready = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
OURS = struct.Struct("!IddIHH")
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
sock.bind((ip, port))
open(ready, "w").close()
stop = time.monotonic() + deadline
rows, end = [], None
while time.monotonic() < stop:
    sock.settimeout(max(0.01, stop - time.monotonic()))
    try:
        data = sock.recv(65535)
    except socket.timeout:
        break
    now = time.time()
    if data.startswith(b"END "):
        end = data.decode().split()[1:3]
        break
    if len(data) < 12 + OURS.size:
        continue
    rows.append((now, len(data), OURS.unpack_from(data, 12)))
out = sys.stdout
for now, size, (seq, sent, ftime, frame, npkt, idx) in rows:
    out.write(f"{seq} {sent:.6f} {now:.6f} {ftime:.6f} {frame} {npkt} {idx} {size}\n")
if end:
    out.write(f"END {end[0]} {end[1]}\n")
out.flush()
