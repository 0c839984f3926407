#!/usr/bin/env python3
"""The bench's idle-press row and start-up figure, alone (issue 36, helper i36a).

Starts actiond three times: in group mode (ACTIOND_CGROUP=off); in cgroup mode as
scripts/bench.sh does (a fresh cgroup below the cgroup v2 mount, actiond started outside it);
and in cgroup mode started inside that cgroup, as systemd starts it under the unit (this
script moves itself there first, outside the timing). Each time it measures the time from exec to the
first 200 of /readyz, then presses `exec: [/bin/true]` (StartActionAndWait) once after each
pause of PAUSE seconds, COUNT times, and prints the median and the spread of each. Needs root
(it creates cgroups); removes what it creates.

    repro/i36a-idle-press.py BINARY [COUNT] [PAUSE]
"""
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

BINARY = os.path.abspath(sys.argv[1])
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 15
PAUSE = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3

CONFIG = """maxConcurrentExecutions: 64
actions:
  - id: exec-true
    title: Do nothing, no shell
    exec: [/bin/true]
"""


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            if right.split()[0] == "cgroup2":
                return left.split()[4]
    sys.exit("no cgroup v2 hierarchy is mounted")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ready(port):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        c.request("GET", "/readyz")
        ok = c.getresponse().status == 200
        c.close()
        return ok
    except OSError:
        return False


def press(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.connect()
    body = b'{"actionId":"exec-true"}'
    t = time.perf_counter()
    c.request("POST", "/api/StartActionAndWait", body,
              {"Content-Type": "application/json", "Connect-Protocol-Version": "1"})
    r = c.getresponse()
    text = r.read()
    dt = time.perf_counter() - t
    c.close()
    assert r.status == 200 and b'"exitCode":0' in text, text
    return dt


def drop(cg):
    if os.path.exists(cg + "/cgroup.kill"):
        with open(cg + "/cgroup.kill", "w") as f:
            f.write("1")
    for _ in range(50):
        for root, dirs, _files in os.walk(cg, topdown=False):
            for d in dirs:
                try:
                    os.rmdir(os.path.join(root, d))
                except OSError:
                    pass
        try:
            os.rmdir(cg)
            return
        except OSError:
            time.sleep(0.1)


def move(cgroup_dir):
    with open(os.path.join(cgroup_dir, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))


def run(mode, work, top):
    env = dict(os.environ)
    home = None
    if mode == "group":
        env["ACTIOND_CGROUP"] = "off"
    else:
        cg = tempfile.mkdtemp(prefix="s.", dir=top)
        env["ACTIOND_CGROUP"] = cg
        if mode == "cgroup-unit":
            with open("/proc/self/cgroup") as f:
                own = [l[3:].strip() for l in f if l.startswith("0::")][0]
            home = cgroup2_mount() + own
            move(cg)
            time.sleep(0.5)
    port = free_port()
    log = open(os.path.join(work, mode + ".log"), "w")
    t = time.perf_counter()
    p = subprocess.Popen([BINARY, "--config", os.path.join(work, "conf", "actiond.yaml"),
                          "--listen", "127.0.0.1:%d" % port],
                         env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    while not ready(port):
        time.sleep(0.0005)
    startup = time.perf_counter() - t
    if home is not None:
        move(home)
    # Warm-up: the first presses create the run cgroups and fill caches.
    for _ in range(5):
        press(port)
    lat = []
    for _ in range(COUNT):
        time.sleep(PAUSE)
        lat.append(press(port))
    p.terminate()
    p.wait()
    log.close()
    with open(os.path.join(work, mode + ".log")) as f:
        text = f.read()
    want = "kill containment: process group" if mode == "group" else "each execution in its own cgroup"
    assert want in text, text
    line = [l for l in text.splitlines() if "kill containment" in l][0]
    return startup, lat, line.split("INFO ")[-1]


def ms(x):
    return "%.2f" % (x * 1000)


def main():
    top = os.path.join(cgroup2_mount(), "i36a-repro-%d" % os.getpid())
    os.mkdir(top)
    work = tempfile.mkdtemp(prefix="i36a-repro-")
    os.mkdir(os.path.join(work, "conf"))
    with open(os.path.join(work, "conf", "actiond.yaml"), "w") as f:
        f.write(CONFIG)
    try:
        print("binary %s, %d presses after %.3f s each, kernel %s" % (BINARY, COUNT, PAUSE, os.uname().release))
        for mode in ("group", "cgroup", "cgroup-unit"):
            startup, lat, line = run(mode, work, top)
            print("%-11s start-up to /readyz %s ms; idle press p50 %s ms (min %s, max %s)" % (
                mode, ms(startup), ms(statistics.median(lat)), ms(min(lat)), ms(max(lat))))
            print("            log: %s" % line[:200])
    finally:
        drop(top)
        shutil.rmtree(work)


main()
