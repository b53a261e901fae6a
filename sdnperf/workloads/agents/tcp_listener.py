"""TCP listener for the connect-timing probe: accept every connection and close it.

usage: tcp_listener.py BIND_IP PORT READY_FILE
"""

import socket
import sys

ip, port, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((ip, port))
srv.listen(1024)  # a deep backlog: the probe's handshakes must never wait for accept()
open(ready, "w").close()
while True:
    conn, _ = srv.accept()
    conn.close()
