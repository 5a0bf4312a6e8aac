#!/usr/bin/python3
"""Stand-in services on the host for test/escape/network.sh, all in one process:

  netstand.py DIR ADDR:PORT...   an HTTP/1.1 server on each address. Every accepted
      connection appends "ADDR:PORT" to DIR/connections. GET /hello answers
      "hello from ADDR:PORT"; any other path is a file under DIR/www (a dumb git
      repository, an npm registry's package document and tarball), with the
      document's "@PORT@" replaced by the server's port.
  A UDP socket on the first address records every datagram as "udp ADDR:PORT".
DIR/ready holds the pid once everything listens."""
import http.server
import os
import socket
import socketserver
import sys
import threading


def main():
    root, addrs = sys.argv[1], sys.argv[2:]
    rec = os.path.join(root, "connections")
    lock = threading.Lock()

    def note(text):
        with lock, open(rec, "a") as f:
            f.write(text + "\n")

    servers = []
    for a in addrs:
        host, port = a.rsplit(":", 1)

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            me = a

            def setup(self):
                note(self.me)
                super().setup()

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path == "/hello":
                    body = ("hello from %s\n" % self.me).encode()
                else:
                    p = os.path.normpath(os.path.join(root, "www", self.path.lstrip("/").split("?")[0]))
                    if os.path.isdir(p):
                        p = os.path.join(p, "index")
                    if not p.startswith(os.path.join(root, "www")) or not os.path.isfile(p):
                        self.send_response(404)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    body = open(p, "rb").read()
                    if p.endswith("index"):
                        body = body.replace(b"@PORT@", self.me.rsplit(":", 1)[1].encode())
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        s = S((host, int(port)), H)
        servers.append(s)
        threading.Thread(target=s.serve_forever, daemon=True).start()
    host, port = addrs[0].rsplit(":", 1)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind((host, int(port)))
    with open(os.path.join(root, "ready"), "w") as f:
        f.write(str(os.getpid()) + "\n")
    while True:
        u.recvfrom(4096)
        note("udp " + addrs[0])


if __name__ == "__main__":
    main()
