#!/usr/bin/env python3
# fe30f F1: an edit made as actiond starts (renamed over the config the moment actiond has
# read it) is never applied. Usage: N=5 repro/fe30f-f1-start-race.py [BIN]
# Rename a revoking config over the live one the moment actiond closes its first read of it.
import ctypes, os, struct, subprocess, sys, tempfile, time, json, urllib.request, re
libc = ctypes.CDLL(None, use_errno=True)
IN_CLOSE_NOWRITE = 0x10
OLD = "defaultPermissions: {view: true, exec: true, logs: true, kill: true}\nactions:\n  - {id: main, title: main, shell: echo main}\n"
NEW = OLD.replace("exec: true, logs: true, kill: true", "exec: false, logs: true, kill: false")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "../target/debug/actiond")
def attempt():
    d = tempfile.mkdtemp(prefix="fe30f-race-")
    cfg = os.path.join(d, "config.yaml")
    open(cfg, "w").write(OLD)
    fd = libc.inotify_init1(0)
    libc.inotify_add_watch(fd, cfg.encode(), IN_CLOSE_NOWRITE)
    log = open(os.path.join(d, "log"), "w")
    p = subprocess.Popen([BIN, "--config", cfg, "--listen", "127.0.0.1:0"], stdout=log, stderr=log, cwd=d)
    os.read(fd, 4096)  # actiond closed its first read
    open(os.path.join(d, "new"), "w").write(NEW)
    os.rename(os.path.join(d, "new"), cfg)
    os.close(fd)
    for _ in range(100):
        m = re.search(r"listening on http://(\S+)", open(os.path.join(d, "log")).read())
        if m: break
        time.sleep(0.1)
    time.sleep(6)
    req = urllib.request.Request(f"http://{m.group(1)}/api/StartActionAndWait", data=b'{"actionId":"main"}',
        headers={"Content-Type": "application/json", "Connect-Protocol-Version": "1"})
    try:
        body = urllib.request.urlopen(req).read().decode()
    except urllib.error.HTTPError as e:
        body = e.read().decode()
    p.terminate(); p.wait()
    ran = '"exitCode":0' in body
    print(d, "guest RAN after revocation" if ran else "revoked", flush=True)
    return ran
n = int(os.environ.get("N", "5"))
print(sum(attempt() for _ in range(n)), "of", n, "missed the revocation")
