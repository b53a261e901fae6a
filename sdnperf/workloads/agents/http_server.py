"""Static HTTP/1.1 server (keep-alive) for the video workload: serves DIR on IP:PORT.

usage: http_server.py BIND_IP PORT DIR READY_FILE
"""

import functools
import socketserver
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

ip, port, root, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]


class Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # persistent connections, as players use

    def log_message(self, *args):  # one line per segment would only cost CPU
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self):
        # HTTPServer.server_bind asks DNS for the address's name (getfqdn); inside an
        # emulated host with no resolver that blocks for seconds. The name is not needed.
        socketserver.TCPServer.server_bind(self)
        host, self.server_port = self.server_address[:2]
        self.server_name = str(host)  # an IPv4/IPv6 address: already a str


server = Server((ip, port), functools.partial(Handler, directory=root))
open(ready, "w").close()
server.serve_forever()
