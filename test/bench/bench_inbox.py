#!/usr/bin/env python3
"""The Inbox's event streams under clockworkd (issue 24): see bench_inbox.sh.

Usage: bench_inbox.py CW_BIN PID PORT TOKEN STREAMS IDLE_SECONDS ROUNDS
(env CW_BENCH_PATH: the stream's path, /inbox/api/events unless told)

1. The daemon alone, idle: its CPU (utime + stime from /proc) and its wakeups (the
   voluntary context switches of all its threads: each is a sleep in epoll_wait that
   ended) over IDLE_SECONDS.
2. STREAMS Inbox sessions, each signed in for real (a `cwctl inbox` link, traded for
   the session cookie at /inbox/login), each with GET /inbox/api/events open: the same
   figures over IDLE_SECONDS while they are open and nothing happens.
3. ROUNDS times: POST /api/runs (a command run) and the time from just before the POST
   until each stream has read the run's first "run" event; then the run is waited for
   (every stream sees its end) before the next round.
"""
import http.client
import json
import os
import re
import selectors
import socket
import subprocess
import sys
import threading
import time

EVENT = re.compile(rb"event: (\w+)\ndata: ([^\n]*)\n")
# The stream's path; CW_BENCH_PATH=/inbox/events measures the old fingerprint stream.
PATH = os.environ.get("CW_BENCH_PATH", "/inbox/api/events")
TERMINAL = {"completed", "failed", "stopped", "refused", "interrupted"}


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def wakeups(pid):
    n = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        n += int(line.split()[1])
        except FileNotFoundError:
            pass
    return n


def sign_in(cw_bin, port):
    url = subprocess.run([f"{cw_bin}/cwctl", "inbox"], check=True, capture_output=True,
                         text=True).stdout.strip()
    path = url.split(f"127.0.0.1:{port}", 1)[1]
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path)
    r = c.getresponse()
    r.read()
    if r.status != 303:
        sys.exit(f"bench_inbox: sign-in answered {r.status}")
    cookie = r.getheader("Set-Cookie").split(";", 1)[0]
    c.close()
    return cookie


class Stream:
    def __init__(self, port, cookie):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall((f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                           f"Cookie: {cookie}\r\nAccept: text/event-stream\r\n\r\n").encode())
        self.buf = b""
        self.events = []  # (monotonic ns, type, data)

    def read(self):
        b = self.sock.recv(65536)
        if not b:
            raise SystemExit("bench_inbox: a stream ended")
        now = time.monotonic_ns()
        self.buf += b
        pos = 0
        for m in EVENT.finditer(self.buf):
            try:
                data = json.loads(m.group(2))
            except ValueError:
                data = None
            self.events.append((now, m.group(1).decode(), data))
            pos = m.end()
        self.buf = self.buf[pos:]


def measure_idle(pid, secs, sel=None):
    c0, w0 = cpu_ticks(pid), wakeups(pid)
    end = time.monotonic() + secs
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        if sel is None:
            time.sleep(left)
        else:
            for key, _ in sel.select(timeout=left):
                key.data.read()
    c1, w1 = cpu_ticks(pid), wakeups(pid)
    hz = os.sysconf("SC_CLK_TCK")
    return (c1 - c0) / hz / secs * 100.0, w1 - w0


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def main():
    cw_bin, pid, port, token = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    nstreams, idle, rounds = int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])

    cpu, wk = measure_idle(pid, idle)
    print(f"idle, no streams ({idle:.0f} s): daemon CPU {cpu:.3f} %, {wk} wakeups "
          f"({wk / idle:.2f}/s)")

    sel = selectors.DefaultSelector()
    streams = []
    for _ in range(nstreams):
        s = Stream(port, sign_in(cw_bin, port))
        sel.register(s.sock, selectors.EVENT_READ, s)
        streams.append(s)
    # Open: each has its answer's headers.
    deadline = time.monotonic() + 10
    while any(b"\r\n\r\n" not in s.buf for s in streams):
        if time.monotonic() > deadline:
            sys.exit("bench_inbox: the streams did not open")
        for key, _ in sel.select(timeout=1):
            key.data.read()
    for s in streams:
        if not s.buf.startswith(b"HTTP/1.1 200"):
            sys.exit(f"bench_inbox: {PATH}: {s.buf[:200]!r}")
        s.buf = s.buf[s.buf.index(b"\r\n\r\n") + 4:]
    cpu, wk = measure_idle(pid, idle, sel)
    print(f"idle, {nstreams} Inbox streams open ({idle:.0f} s): daemon CPU {cpu:.3f} %, "
          f"{wk} wakeups ({wk / idle:.2f}/s)")

    lat, worst = [], []
    if rounds == 0:
        return
    for rnd in range(rounds):
        for s in streams:
            s.events.clear()
        result = {}

        def post():
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("POST", "/api/runs", body=json.dumps({"task": "bench"}),
                      headers={"Authorization": f"Bearer {token}",
                               "Content-Type": "application/json"})
            r = c.getresponse()
            result["status"], result["body"] = r.status, r.read()
            c.close()

        t0 = time.monotonic_ns()
        th = threading.Thread(target=post)
        th.start()
        got = [None] * nstreams
        ended = [False] * nstreams
        deadline = time.monotonic() + 30
        while not all(ended):
            if time.monotonic() > deadline:
                sys.exit(f"bench_inbox: round {rnd}: not every stream saw the run end")
            for key, _ in sel.select(timeout=1):
                key.data.read()
            for i, s in enumerate(streams):
                for at, typ, data in s.events:
                    if typ != "run" or not data:
                        continue
                    if got[i] is None:
                        got[i] = (at - t0) / 1e6
                    st = (data.get("data") or {}).get("status")
                    if st in TERMINAL:
                        ended[i] = True
        th.join()
        if result.get("status") not in (200, 201, 202):
            sys.exit(f"bench_inbox: POST /api/runs: {result}")
        lat.extend(got)
        worst.append(max(got))
        print(f"round {rnd + 1}: a run queued -> all {nstreams} streams in "
              f"{max(got):.1f} ms (p50 {pct(got, 50):.1f} ms)")
    print(f"run event to {nstreams} streams over {rounds} rounds (from just before POST "
          f"/api/runs): p50 {pct(lat, 50):.1f} ms, max {max(lat):.1f} ms; per-round max: "
          f"median {pct(worst, 50):.1f} ms")
    for s in streams:
        s.sock.close()


if __name__ == "__main__":
    main()
