#!/usr/bin/python3
"""The cost of a run's network namespace and egress proxy (SPEC N1), start to report.

bench_network.py CW_RUNNER ROUNDS: times `cw-runner run` of the command engine running
/bin/true, from the spawn to the report line on its stdout, in three configurations
that take turns, one start of each per round (so the machine's load falls on all alike):

  allowlist   the default: a network namespace (lo brought up, the bridge's and the
              proxy's listening sockets made there and handed over with SCM_RIGHTS) and
              the egress proxy (its resolver reading resolv.conf and /etc/hosts)
  open        network: open: the host's network, no proxy
  sandbox-off CW_SANDBOX=off: no namespace at all (the runner's own cost)

Each run's stdin stays open until its report has come (a runner whose daemon goes away
waits for it), then is closed; the time is the report's arrival. Prints the medians,
p90s and the difference the namespace and proxy make."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    runner, rounds = sys.argv[1], int(sys.argv[2])
    root = tempfile.mkdtemp(prefix="cw-bench-net.", dir=os.environ.get("CW_TEST_TMP"))
    os.makedirs(root + "/wd")
    homes = {}
    for name, cfg in (("allowlist", ""), ("open", "network: open\n"), ("sandbox-off", "")):
        h = root + "/" + name
        os.makedirs(h + "/.clockwork", mode=0o700)
        with open(h + "/.clockwork/config.yaml", "w") as f:
            f.write(cfg)
        homes[name] = h
    times = {k: [] for k in homes}
    cpus = {k: [] for k in homes}
    failures = {k: 0 for k in homes}
    for i in range(rounds + 5):
        for name, h in homes.items():
            env = {"HOME": h, "CLOCKWORK_HOME": h + "/.clockwork", "PATH": "/usr/bin:/bin"}
            if name == "sandbox-off":
                env["CW_SANDBOX"] = "off"
            msg = {"v": 1, "type": "run", "run_id": "b%d" % i, "task": "bench",
                   "engine": "command", "argv": ["/bin/true"], "workdir": root + "/wd",
                   "budget": {"seconds": 60}}
            t0 = time.monotonic()
            p = subprocess.Popen([runner, "run"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            p.stdin.write((json.dumps(msg) + "\n").encode())
            p.stdin.flush()
            ok = False
            for line in p.stdout:
                if b'"type":"report"' in line:
                    ok = b'"status":"completed"' in line or b'"exit_code":0' in line
                    break
            t = (time.monotonic() - t0) * 1000
            p.stdin.close()
            _, _, ru = os.wait4(p.pid, 0)
            p.returncode = 0
            if i >= 5:
                times[name].append(t)
                # CPU of the runner and what it waited for (the run's init and command):
                # far less disturbed by a busy machine than the wall clock.
                cpus[name].append((ru.ru_utime + ru.ru_stime) * 1000)
                failures[name] += 0 if ok else 1
    print("machine: %s, %d cores, load %s; %d rounds" % (os.uname().release, os.cpu_count(),
          open("/proc/loadavg").read().split()[0], rounds))
    print("%-40s %10s %10s %10s %10s %9s" % ("cw-runner run of /bin/true, to report",
          "median ms", "p90 ms", "min ms", "cpu ms", "failures"))
    med, cmed = {}, {}
    for name, v in times.items():
        v.sort()
        med[name] = statistics.median(v)
        cmed[name] = statistics.median(cpus[name])
        print("%-40s %10.2f %10.2f %10.2f %10.2f %9d" % (name, med[name],
              v[int(len(v) * 0.9)], v[0], cmed[name], failures[name]))
    print("\nnetwork namespace + egress proxy (allowlist minus open): %.2f ms wall, "
          "%.2f ms cpu (medians)" % (med["allowlist"] - med["open"],
                                     cmed["allowlist"] - cmed["open"]))
    subprocess.run(["rm", "-rf", root])
    sys.exit(1 if any(failures.values()) else 0)


if __name__ == "__main__":
    main()
