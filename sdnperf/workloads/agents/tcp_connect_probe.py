"""Connect-timing probe: time connect() of COUNT new TCP connections to DST:PORT.

connect() returns when the SYN-ACK has arrived (the client's side of the handshake is
complete), so the time measured is SYN -> SYN-ACK plus a few microseconds of syscall.
Prints one line per connection:  SEQ UNIX_START MS        or  SEQ UNIX_START FAIL REASON
usage: tcp_connect_probe.py DST PORT COUNT INTERVAL_S TIMEOUT_S
"""

import socket
import sys
import time

dst, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
interval, timeout = float(sys.argv[4]), float(sys.argv[5])
for seq in range(1, count + 1):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    # RST on close, no TIME_WAIT pile-up over many short connections
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    wall = time.time()
    t0 = time.perf_counter()
    try:
        s.connect((dst, port))
        ms = (time.perf_counter() - t0) * 1000.0
        print(f"{seq} {wall:.6f} {ms:.4f}", flush=True)
    except OSError as exc:
        reason = (
            type(exc).__name__ if isinstance(exc, socket.timeout) else (exc.strerror or str(exc))
        )
        print(f"{seq} {wall:.6f} FAIL {reason.replace(' ', '_')}", flush=True)
    finally:
        s.close()
    if seq < count:
        time.sleep(interval)
