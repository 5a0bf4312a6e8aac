#!/usr/bin/env python3
"""The approver of scripts/bench approval: it listens on GET /api/events (types=approval)
over the daemon's unix socket and answers each pending approval at once with
POST /api/approvals/ID {"decision": "allow"} on a kept-alive connection. Each answer is
one JSON line on stdout: the approval, when the daemon published the request (at_ms,
its wall clock), when this process had read it, and when the answer's 200 came back.
Starts by writing "ready" to READYFILE once the stream is open (subscribed).

With --poll MS it is instead the approver the stream replaces: it asks
GET /api/approvals every MS milliseconds and answers what it finds (at_ms is then the
approval's created time, from the listing), for the before/after comparison.

usage: bench_approver.py SOCKET READYFILE [--poll MS]
"""
import http.client
import json
import socket
import sys
import time


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=60)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.unix_path)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
        self.sock = s


def now_ms():
    return time.time() * 1000.0


def answer(post, sock, aid):
    body = json.dumps({"decision": "allow"})
    for attempt in (1, 2):
        try:
            post.request("POST", "/api/approvals/" + aid, body,
                         {"Content-Type": "application/json",
                          "X-Clockwork-Client": "bench-approver"})
            r = post.getresponse()
            r.read()
            return post, r.status
        except (http.client.HTTPException, OSError):
            post.close()
            post = UnixHTTP(sock)
    return post, 0


def poll(sock, ready, ms):
    conn, post = UnixHTTP(sock), UnixHTTP(sock)
    done = set()
    with open(ready, "w") as f:
        f.write("ready\n")
    while True:
        conn.request("GET", "/api/approvals", headers={"X-Clockwork-Client": "bench-approver"})
        r = conn.getresponse()
        listing = json.loads(r.read() or b"{}")
        seen = now_ms()
        for a in listing.get("approvals", []):
            if a.get("id") in done or a.get("state", "pending") != "pending":
                continue
            done.add(a["id"])
            post, status = answer(post, sock, a["id"])
            print(json.dumps({"approval": a["id"], "at_ms": None, "seen_ms": seen,
                              "answered_ms": now_ms(), "status": status}), flush=True)
        time.sleep(ms / 1000.0)


def main():
    sock, ready = sys.argv[1], sys.argv[2]
    if len(sys.argv) == 5 and sys.argv[3] == "--poll":
        return poll(sock, ready, int(sys.argv[4]))
    stream = UnixHTTP(sock)
    stream.request("GET", "/api/events?types=approval",
                   headers={"X-Clockwork-Client": "bench-approver"})
    resp = stream.getresponse()
    if resp.status != 200:
        sys.exit("approver: /api/events: HTTP %d" % resp.status)
    with open(ready, "w") as f:
        f.write("ready\n")
    post = UnixHTTP(sock)
    event, data = None, None
    while True:
        line = resp.readline()
        if not line:
            return
        line = line.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "":
            if event == "approval" and data is not None:
                seen = now_ms()
                e = json.loads(data)
                d = e.get("data", {})
                if d.get("state") == "pending":
                    post, status = answer(post, sock, d["approval"])
                    print(json.dumps({"approval": d["approval"], "at_ms": e.get("at_ms"),
                                      "seen_ms": seen, "answered_ms": now_ms(),
                                      "status": status}), flush=True)
            event, data = None, None


if __name__ == "__main__":
    main()
