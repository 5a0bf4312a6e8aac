#!/usr/bin/python3
"""Stand-in services on the host for test/escape/network.sh, all in one process:

  netstand.py DIR ADDR:PORT...   an HTTP/1.1 server on each address. Every accepted
      connection appends "ADDR:PORT" to DIR/connections. GET /hello answers
      "hello from ADDR:PORT"; any other path is a file under DIR/www (a dumb git
      repository, an npm registry's package document and tarball), with the
      document's "@PORT@" replaced by the server's port.
    vhost=ADDR:PORT   a keep-alive server as lax as a virtual-hosting front can be: it
      ignores "Connection: close", answers every request a connection carries
      (pipelined ones too), frames bodies by Transfer-Encoding before Content-Length
      and reads chunks leniently, and appends "METHOD PATH host=HOST" for each request
      to DIR/requests: what a smuggled request would reach ("open" and "end" mark
      each connection's start and close).
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
    vhosts = [a[len("vhost="):] for a in addrs if a.startswith("vhost=")]
    addrs = [a for a in addrs if not a.startswith("vhost=")]
    for a in vhosts:
        host, port = a.rsplit(":", 1)
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((host, int(port)))
        ls.listen(16)
        threading.Thread(target=vhost_serve, args=(ls, a, note, root), daemon=True).start()
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


def vhost_serve(ls, me, note, root):
    lock = threading.Lock()

    def mark(what):
        with lock, open(os.path.join(root, "requests"), "a") as r:
            r.write(what + "\n")

    def one(conn):
        f = conn.makefile("rb")
        note(me)
        mark("open")
        try:
            while True:
                line = f.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    continue
                parts = line.decode("latin-1").split()
                hdrs = {}
                while True:
                    h = f.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    hdrs.setdefault(k.strip().lower(), v.strip())
                mark("%s %s host=%s" % (parts[0] if parts else "?",
                     parts[1] if len(parts) > 1 else "?", hdrs.get("host", "")))
                if "chunked" in hdrs.get("transfer-encoding", "").lower():
                    while True:
                        size = f.readline().split(b";")[0].strip()
                        n = int(size or b"0", 16)
                        if n == 0:
                            while f.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            break
                        f.read(n)
                        f.readline()
                elif hdrs.get("content-length"):
                    f.read(int(hdrs["content-length"].split(",")[0]))
                body = b"vhost saw " + (parts[1] if len(parts) > 1 else "?").encode() + b"\n"
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        except (OSError, ValueError):
            return
        finally:
            mark("end")
            conn.close()

    while True:
        c, _ = ls.accept()
        threading.Thread(target=one, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
