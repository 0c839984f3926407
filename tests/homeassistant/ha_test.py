"""actiond against a real Home Assistant: what a user sees of two boards.

Starts Debian's mosquitto and a pinned Home Assistant on free loopback ports, completes
Home Assistant's onboarding and creates its MQTT config entry through its own REST API,
starts two actiond boards, and checks through Home Assistant's REST and websocket APIs what
its users would see: the entities, the device page, icons, device classes and entity
categories, presses, events, the blocked state, availability and removal. Every check runs
and is reported, so one run against an older build names everything it lacks; the run fails
when any check does. Run by scripts/test.sh with the venv's Python (it needs aiohttp, which
Home Assistant brings):

    ACTIOND_BIN=target/debug/actiond target/homeassistant/venv/bin/python \
        tests/homeassistant/ha_test.py

ACTIOND_HA_SCREENSHOT=docs/x.png also writes a screenshot of board A's device page, taken
by Debian's headless chromium through its DevTools protocol.
"""

import asyncio
import base64
import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

HERE = Path(__file__).resolve().parent
ACTIOND = os.environ.get("ACTIOND_BIN", str(HERE.parents[1] / "target/debug/actiond"))
SCREENSHOT = os.environ.get("ACTIOND_HA_SCREENSHOT")
CLIENT_ID = "http://127.0.0.1/"
# Long enough for a loaded two-core machine, short enough to fail within the budget.
WAIT = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def say(text: str) -> None:
    print(f"[ha] {text}", flush=True)


class Checks:
    """Every check, named by what it proves; failures are listed at the end."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.passed = 0

    def check(self, topic: str, ok: bool, detail: str) -> bool:
        if ok:
            self.passed += 1
        else:
            self.failed.append(f"{topic}: {detail}")
            say(f"FAILED {topic}: {detail}")
        return ok


async def until(what, timeout: float = WAIT, every: float = 0.25):
    """Polls the coroutine function `what` until it returns something true; returns it, or
    the last (false) value once `timeout` has passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = await what()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(every)


class Processes:
    """Everything this test starts, stopped at the end whatever happens."""

    def __init__(self) -> None:
        self.all: list[subprocess.Popen] = []

    def start(self, args, **kw) -> subprocess.Popen:
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, **kw)
        self.all.append(p)
        return p

    def stop(self) -> None:
        # In reverse order, each gone before the next: the boards and Home Assistant leave
        # the broker before it stops.
        for p in reversed(self.all):
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


class Board:
    """One actiond, its config in a directory of its own."""

    def __init__(self, procs: Processes, root: Path, name: str, config: dict) -> None:
        self.procs = procs
        self.dir = root / name
        self.dir.mkdir()
        self.port = free_port()
        self.config = config
        self.proc: subprocess.Popen | None = None
        self.log = self.dir / "actiond.log"

    def write(self, config: dict) -> None:
        self.config = config
        tmp = self.dir / "config.yaml.tmp"
        # JSON is YAML: no YAML writer needed.
        tmp.write_text(json.dumps(config, indent=1))
        tmp.rename(self.dir / "config.yaml")

    def start(self) -> None:
        self.write(self.config)
        self.proc = self.procs.start(
            [ACTIOND, "--config", str(self.dir / "config.yaml")],
            cwd=self.dir,
            stdout=open(self.log, "a"),
            stderr=subprocess.STDOUT,
        )

    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def api(self, http: aiohttp.ClientSession, op: str, body: dict) -> dict:
        async with http.post(
            f"{self.base()}/api/{op}",
            json=body,
            headers={"Connect-Protocol-Version": "1"},
        ) as r:
            return await r.json()

    async def logs(self, http: aiohttp.ClientSession) -> list[dict]:
        return (await self.api(http, "GetLogs", {"startOffset": 0})).get("logs", [])

    def lines(self, name: str) -> int:
        f = self.dir / name
        return len(f.read_text().splitlines()) if f.exists() else 0


class HomeAssistant:
    def __init__(self, procs: Processes, root: Path, broker_port: int) -> None:
        self.procs = procs
        self.dir = root / "ha"
        self.dir.mkdir()
        self.port = free_port()
        self.broker_port = broker_port
        self.log = self.dir / "home-assistant.log"
        self.token = ""
        self.refresh = ""
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.ids = 0

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> None:
        (self.dir / "configuration.yaml").write_text(
            "homeassistant:\n"
            "  name: actiond CI\n"
            "  latitude: 52.37\n  longitude: 4.89\n  elevation: 0\n"
            "  unit_system: metric\n  time_zone: UTC\n  country: NL\n  currency: EUR\n"
            "http:\n"
            f"  server_host: 127.0.0.1\n  server_port: {self.port}\n"
            "frontend:\nconfig:\n"
            "logger:\n  default: info\n"
            + ("  logs:\n    homeassistant.components.mqtt: debug\n"
               if os.environ.get("ACTIOND_HA_DEBUG") else "")
        )
        self.procs.start(
            # --skip-pip: everything it needs is in the venv (scripts/test.sh installs it);
            # without it, Home Assistant would install the integrations that onboarding sets
            # up (a weather forecast, text to speech, radio stations), which then try to
            # reach the internet.
            [sys.executable, str(HERE / "hass.py"), "-c", str(self.dir), "--log-file",
             str(self.log), "--skip-pip"],
            stdout=open(self.dir / "stdout.log", "w"),
            stderr=subprocess.STDOUT,
        )

    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.token}"}

    async def onboard(self, http: aiohttp.ClientSession) -> None:
        async def up():
            try:
                async with http.get(self.url("/api/onboarding")) as r:
                    return r.status == 200
            except aiohttp.ClientError:
                return False

        if not await until(up, timeout=240, every=1):
            raise SystemExit(f"Home Assistant did not answer within 240 s; see {self.log}")
        async with http.post(
            self.url("/api/onboarding/users"),
            json={
                "client_id": CLIENT_ID,
                "name": "CI",
                "username": "ci",
                "password": "actiond-ci-password",
                "language": "en",
            },
        ) as r:
            code = (await r.json())["auth_code"]
        async with http.post(
            self.url("/auth/token"),
            data={"grant_type": "authorization_code", "code": code, "client_id": CLIENT_ID},
        ) as r:
            tokens = await r.json()
        self.token, self.refresh = tokens["access_token"], tokens["refresh_token"]
        for step, body in [
            ("core_config", {}),
            ("analytics", {}),
            ("integration", {"client_id": CLIENT_ID, "redirect_uri": CLIENT_ID}),
        ]:
            async with http.post(
                self.url(f"/api/onboarding/{step}"), json=body, headers=self.headers()
            ) as r:
                assert r.status == 200, f"onboarding {step}: {r.status} {await r.text()}"
        # The MQTT integration, through its config flow as the UI would do it.
        async with http.post(
            self.url("/api/config/config_entries/flow"),
            json={"handler": "mqtt", "show_advanced_options": False},
            headers=self.headers(),
        ) as r:
            flow = await r.json()
        async with http.post(
            self.url(f"/api/config/config_entries/flow/{flow['flow_id']}"),
            json={"broker": "127.0.0.1", "port": self.broker_port},
            headers=self.headers(),
        ) as r:
            done = await r.json()
        assert done.get("type") == "create_entry", f"MQTT config flow: {done}"

    async def connect(self) -> None:
        # A session of its own, without the total timeout of the REST calls' (which would
        # end the websocket after it).
        self.wss = aiohttp.ClientSession()
        await self.open_ws()

    async def open_ws(self) -> None:
        self.ws = await self.wss.ws_connect(self.url("/api/websocket"))
        await self.ws.receive_json()
        await self.ws.send_json({"type": "auth", "access_token": self.token})
        ok = await self.ws.receive_json()
        assert ok["type"] == "auth_ok", ok

    async def call(self, kind: str, **kw):
        # Home Assistant pings every 55 s and closes a connection that does not answer; this
        # client reads (and so answers) only during a call, so a connection left alone
        # through a long wait is opened again.
        for attempt in (1, 2):
            try:
                if self.ws.closed:
                    await self.open_ws()
                self.ids += 1
                await self.ws.send_json({"id": self.ids, "type": kind, **kw})
                while True:
                    # A close frame is not JSON: TypeError.
                    msg = await self.ws.receive_json()
                    if msg.get("id") == self.ids and msg.get("type") == "result":
                        assert msg["success"], f"{kind}: {msg}"
                        return msg["result"]
            except (aiohttp.ClientConnectionResetError, ConnectionResetError, TypeError):
                if attempt == 2:
                    raise
                await self.ws.close()
                await self.open_ws()

    async def registry(self) -> dict[str, dict]:
        """Entity registry entries of actiond's entities, by unique id."""
        entries = await self.call("config/entity_registry/list")
        return {e["unique_id"]: e for e in entries if e["unique_id"].startswith("actiond_")}

    async def entity(self, entity_id: str) -> dict:
        return await self.call("config/entity_registry/get", entity_id=entity_id)

    async def devices(self) -> dict[str, dict]:
        devices = await self.call("config/device_registry/list")
        out = {}
        for d in devices:
            for domain, ident in d["identifiers"]:
                if domain == "mqtt" and ident.startswith("actiond_"):
                    out[ident] = d
        return out

    async def state(self, http: aiohttp.ClientSession, entity_id: str) -> dict:
        async with http.get(self.url(f"/api/states/{entity_id}"), headers=self.headers()) as r:
            return await r.json() if r.status == 200 else {}

    async def press(self, http: aiohttp.ClientSession, entity_id: str) -> None:
        async with http.post(
            self.url("/api/services/button/press"),
            json={"entity_id": entity_id},
            headers=self.headers(),
        ) as r:
            assert r.status == 200, f"button.press {entity_id}: {r.status} {await r.text()}"


def iso_with_offset(text) -> datetime.datetime | None:
    """The time, if `text` is ISO 8601 with an offset."""
    if not isinstance(text, str):
        return None
    try:
        t = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return t if t.tzinfo is not None else None


GATE = "while [ ! -e go ]; do sleep 0.05; done; rm -f go"
PUBLIC_URL = "https://boarda.example.net/actiond/"
SUFFIXES = ["press", "last_run", "running", "finished", "last_finished"]


def board_a(broker: int, port: int) -> dict:
    return {
        "pageTitle": "Board A",
        "listenAddressSingleHTTPFrontend": f"127.0.0.1:{port}",
        "killGracePeriod": 1,
        "mqtt": {
            "broker": f"mqtt://127.0.0.1:{broker}",
            "nodeId": "boarda",
            "suggestedArea": "Garage",
            "publicUrl": PUBLIC_URL,
        },
        "actions": [
            {"id": "hello", "title": "Say hello", "icon": "mdi:hand-wave",
             "shell": "echo hello; echo x >> pressed-hello"},
            {"id": "restart", "title": "Restart the app", "icon": "restart",
             "deviceClass": "restart", "shell": "true"},
            {"id": "blink", "title": "Blink the LED", "deviceClass": "identify", "shell": "true"},
            {"id": "slow", "title": "Slow job", "shell": GATE},
            {"id": "fail", "title": "Always fails", "shell": "echo broken >&2; exit 3"},
            {"id": "temporary", "title": "Temporary", "shell": "true"},
        ],
    }


def board_b(broker: int, port: int) -> dict:
    return {
        "listenAddressSingleHTTPFrontend": f"0.0.0.0:{port}",
        "killGracePeriod": 1,
        "mqtt": {"broker": f"mqtt://127.0.0.1:{broker}", "nodeId": "boardb",
                 "deviceName": "Board B"},
        "actions": [
            {"id": "hello", "title": "Say hello", "shell": "echo hello; echo x >> pressed-hello"},
        ],
    }


async def main() -> int:
    started = time.monotonic()
    checks = Checks()
    root = Path(tempfile.mkdtemp(prefix="actiond-ha-"))
    procs = Processes()
    try:
        return await run(root, procs, checks, started)
    finally:
        procs.stop()
        if checks.failed or os.environ.get("ACTIOND_HA_KEEP"):
            say(f"kept {root} (Home Assistant's log: {root}/ha/home-assistant.log)")
        else:
            shutil.rmtree(root, ignore_errors=True)


async def run(root: Path, procs: Processes, checks: Checks, started: float) -> int:
    broker_port = free_port()
    (root / "mosquitto.conf").write_text(
        f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
        "log_dest stderr\nlog_type error\nlog_type warning\n"
    )
    mosquitto = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    procs.start([mosquitto, "-c", str(root / "mosquitto.conf")],
                stdout=subprocess.DEVNULL, stderr=open(root / "mosquitto.log", "w"))
    ha = HomeAssistant(procs, root, broker_port)
    ha.start()
    a = Board(procs, root, "a", {})
    a.config = board_a(broker_port, a.port)
    b = Board(procs, root, "b", {})
    b.config = board_b(broker_port, b.port)
    check = checks.check
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
        await ha.onboard(http)
        say(f"Home Assistant onboarded, MQTT entry made ({time.monotonic() - started:.0f} s)")
        await ha.connect()
        a.start()
        b.start()

        bindings_a = ["hello", "restart", "blink", "slow", "fail", "temporary"]
        want = {f"actiond_boarda_{b_}_{s}" for b_ in bindings_a for s in SUFFIXES}
        want |= {f"actiond_boardb_hello_{s}" for s in SUFFIXES}

        async def all_there():
            reg = await ha.registry()
            return reg if want <= set(reg) else None

        reg = await until(all_there) or await ha.registry()
        say(f"{len(reg)} entities of actiond in Home Assistant ({time.monotonic() - started:.0f} s)")
        missing = sorted(want - set(reg))
        check("entities", not missing, f"missing {missing}")
        ids = {u: e["entity_id"] for u, e in reg.items()}

        def eid(node: str, binding: str, suffix: str) -> str:
            return ids.get(f"actiond_{node}_{binding}_{suffix}", f"missing.{node}_{binding}_{suffix}")

        # Entities exist before their availability arrives: wait for it.
        shown = [e["entity_id"] for e in reg.values() if not e.get("disabled_by")]

        async def available():
            for entity_id in shown:
                if (await ha.state(http, entity_id)).get("state") in (None, "unavailable"):
                    return False
            return True

        check("availability", await until(available), "entities stayed unavailable")
        say(f"the boards' entities are available ({time.monotonic() - started:.0f} s)")

        # --- the device page -----------------------------------------------------------
        devices = await ha.devices()
        da, db = devices.get("actiond_boarda", {}), devices.get("actiond_boardb", {})
        check("device info", da.get("name") == "Board A", f"board A is named {da.get('name')!r}")
        check("device info", db.get("name") == "Board B", f"board B is named {db.get('name')!r}")
        check("device info", bool(da.get("model")) and da.get("model") != da.get("manufacturer"),
              f"model {da.get('model')!r}, manufacturer {da.get('manufacturer')!r}")
        check("device info", (da.get("sw_version") or "").startswith("actiond "),
              f"sw_version {da.get('sw_version')!r}")
        check("device info", da.get("area_id") == "garage", f"board A's area is {da.get('area_id')!r}")
        check("configuration URL", da.get("configuration_url") == PUBLIC_URL,
              f"board A links to {da.get('configuration_url')!r}")
        host = socket.gethostname().split(".")[0]
        check("configuration URL",
              db.get("configuration_url") == f"http://{host}.local:{b.port}/",
              f"board B links to {db.get('configuration_url')!r}")
        check("entities", all(e.get("device_id") == da.get("id") for u, e in reg.items()
                              if u.startswith("actiond_boarda_")),
              "an entity of board A is not on its device")

        # --- categories, classes, icons, labels ----------------------------------------
        categories = {"press": None, "last_run": "diagnostic", "running": "diagnostic",
                      "finished": "diagnostic", "last_finished": "diagnostic"}
        for suffix, category in categories.items():
            e = reg.get(f"actiond_boarda_hello_{suffix}", {})
            check("entity categories", e.get("entity_category") == category,
                  f"{suffix}: {e.get('entity_category')!r}, want {category!r}")
        # None is disabled: Home Assistant would keep a disabled one after its action is
        # removed (see "a removed action disappears" below).
        disabled = [u for u, e in reg.items() if e.get("disabled_by")]
        check("entity categories", not disabled, f"disabled: {disabled}")
        classes = [("restart", "press", "restart"), ("blink", "press", "identify"),
                   ("hello", "press", None), ("hello", "last_run", "enum"),
                   ("hello", "last_finished", "timestamp"), ("hello", "running", "running")]
        for binding, suffix, cls in classes:
            got = (await ha.entity(eid("boarda", binding, suffix))).get("original_device_class") \
                if f"actiond_boarda_{binding}_{suffix}" in reg else "missing"
            check("device classes", got == cls, f"{binding} {suffix}: {got!r}, want {cls!r}")
        icon = (await ha.entity(eid("boarda", "hello", "press"))).get("original_icon") \
            if "actiond_boarda_hello_press" in reg else "missing"
        check("icons", icon == "mdi:hand-wave", f"Say hello's icon is {icon!r}")
        icon = (await ha.entity(eid("boarda", "restart", "press"))).get("original_icon") \
            if "actiond_boarda_restart_press" in reg else "missing"
        check("icons", icon is None, f"an HTML icon reached Home Assistant: {icon!r}")
        last_run = await ha.state(http, eid("boarda", "hello", "last_run"))
        check("labels", last_run.get("state") == "Never run",
              f"an action never run shows {last_run.get('state')!r}")
        check("labels", "Timed out" in last_run.get("attributes", {}).get("options", []),
              f"options {last_run.get('attributes', {}).get('options')}")
        never = await ha.state(http, eid("boarda", "hello", "last_finished"))
        check("timestamps", never.get("state") == "unknown",
              f"the last finish of an action never run is {never.get('state')!r}")

        # --- a press reaches the right board only ----------------------------------------
        event_id = eid("boarda", "hello", "finished")
        before = await ha.state(http, event_id)
        await ha.press(http, eid("boarda", "hello", "press"))
        pressed = await until(lambda: asyncio.sleep(0, a.lines("pressed-hello") == 1))
        check("press", pressed, "board A's Say hello did not run")

        async def outcome_is(binding: str, words: str):
            s = await ha.state(http, eid("boarda", binding, "last_run"))
            return s if s.get("state") == words else None

        first = await until(lambda: outcome_is("hello", "Succeeded"))
        check("press", bool(first), "Say hello's last run is not Succeeded")
        await asyncio.sleep(1)
        check("press", b.lines("pressed-hello") == 0 and not await b.logs(http),
              "board B ran a press of board A")
        attrs = (first or {}).get("attributes", {})
        for key in ["started", "finished"]:
            check("timestamps", iso_with_offset(attrs.get(key)) is not None,
                  f"last run's {key} is {attrs.get(key)!r}, not ISO 8601 with an offset")
        stamp = await ha.state(http, eid("boarda", "hello", "last_finished"))
        t = iso_with_offset(stamp.get("state"))
        now = datetime.datetime.now(datetime.timezone.utc)
        check("timestamps", t is not None and abs((now - t).total_seconds()) < 120,
              f"last finished is {stamp.get('state')!r} at {now.isoformat()}")

        async def event_changed(since: dict):
            s = await ha.state(http, event_id)
            return s if s.get("state") not in (None, "unknown", since.get("state")) else None

        ev1 = await until(lambda: event_changed(before))
        ea = (ev1 or {}).get("attributes", {})
        check("event entity", ev1 is not None and ea.get("event_type") == "succeeded",
              f"no succeeded event after a press: {ev1}")
        check("event entity", ea.get("exit_code") == 0 and ea.get("user") == "mqtt"
              and isinstance(ea.get("duration"), (int, float)) and bool(ea.get("tracking_id")),
              f"event attributes {ea}")
        tid1 = ea.get("tracking_id")

        # A second, identical run changes the event entity, though the outcome is the same.
        await asyncio.sleep(1.1)
        await ha.press(http, eid("boarda", "hello", "press"))
        ev2 = await until(lambda: event_changed(ev1 or before))
        eb = (ev2 or {}).get("attributes", {})
        check("event entity", ev2 is not None and eb.get("event_type") == "succeeded"
              and eb.get("tracking_id") not in (None, tid1),
              f"a second identical run did not fire again: {ev2}")
        check("press", a.lines("pressed-hello") == 2, "two presses, not two runs")

        # A failing run: its outcome, exit code and stderr.
        await ha.press(http, eid("boarda", "fail", "press"))
        failed = await until(lambda: outcome_is("fail", "Failed"))
        fa = (failed or {}).get("attributes", {})
        check("press", bool(failed) and fa.get("exit_code") == 3 and "broken" in (fa.get("output") or ""),
              f"Always fails shows {failed}")

        # --- a blocked press leaves the last real outcome ------------------------------
        slow_press = eid("boarda", "slow", "press")
        await ha.press(http, slow_press)

        async def slow_running():
            return any(l["actionId"] == "slow" and not l["executionFinished"]
                       for l in await a.logs(http))

        await until(slow_running)
        (a.dir / "go").write_text("")
        done = await until(lambda: outcome_is("slow", "Succeeded"))
        check("blocked state", bool(done), f"the first slow run shows {done}")
        first_slow = (done or {}).get("attributes", {}).get("tracking_id")
        slow_event = eid("boarda", "slow", "finished")
        ev_before = await ha.state(http, slow_event)
        await ha.press(http, slow_press)
        check("blocked state", await until(slow_running), "the second slow run did not start")
        await ha.press(http, slow_press)

        async def blocked_logged():
            return any(l["actionId"] == "slow" and l.get("blocked") for l in await a.logs(http))

        check("blocked state", await until(blocked_logged), "the third press was not blocked")

        async def blocked_event():
            s = await ha.state(http, slow_event)
            return s if s.get("attributes", {}).get("event_type") == "blocked" \
                and s.get("state") != ev_before.get("state") else None

        check("event entity", bool(await until(blocked_event)), "no blocked event")
        await asyncio.sleep(1)
        stays = await ha.state(http, eid("boarda", "slow", "last_run"))
        check("blocked state", stays.get("state") == "Succeeded"
              and stays.get("attributes", {}).get("tracking_id") == first_slow,
              f"after a blocked press the last run shows {stays.get('state')!r} "
              f"({stays.get('attributes', {}).get('tracking_id')}), want Succeeded ({first_slow})")
        (a.dir / "go").write_text("")
        second_slow = [l["executionTrackingId"] for l in await a.logs(http)
                       if l["actionId"] == "slow" and not l.get("blocked")][0]

        async def second_done():
            s = await ha.state(http, eid("boarda", "slow", "last_run"))
            return s if s.get("attributes", {}).get("tracking_id") == second_slow else None

        last = await until(second_done)
        check("blocked state", bool(last) and last.get("state") == "Succeeded",
              f"after the run ended the last run shows {last}")

        # --- availability: SIGKILL, then a restart ---------------------------------------
        b_entities = [eid("boardb", "hello", s) for s in ["press", "last_run", "finished"]]

        async def b_all(pred):
            states = [await ha.state(http, e) for e in b_entities]
            return all(pred(s.get("state")) for s in states)

        b.proc.send_signal(signal.SIGKILL)
        b.proc.wait()
        check("availability", await until(lambda: b_all(lambda s: s == "unavailable")),
              "board B's entities stayed available after SIGKILL")
        b.start()
        check("availability", await until(lambda: b_all(lambda s: s not in (None, "unavailable"))),
              "board B's entities did not come back after a restart")

        # --- a removed action disappears ----------------------------------------------
        config = board_a(broker_port, a.port)
        config["actions"] = [x for x in config["actions"] if x["id"] != "temporary"]
        a.write(config)

        async def gone():
            reg = await ha.registry()
            left = [u for u in reg if u.startswith("actiond_boarda_temporary_")]
            return not left

        check("removal", await until(gone), "the removed action's entities are still there")
        check("removal", f"actiond_boarda_hello_press" in await ha.registry(),
              "the other actions went with it")

        if SCREENSHOT:
            await screenshot(ha, da.get("id", ""), Path(SCREENSHOT))
        await ha.ws.close()
        await ha.wss.close()

    # --- no discovery warning in Home Assistant's log -----------------------------------
    log = ha.log.read_text(errors="replace")
    noisy = [line for line in log.splitlines()
             if (" WARNING " in line or " ERROR " in line)
             and ("[homeassistant.components.mqtt" in line or "actiond" in line)]
    check("discovery warnings", not noisy, "Home Assistant logged:\n  " + "\n  ".join(noisy[:20]))
    for board in (a, b):
        text = board.log.read_text(errors="replace")
        warned = [l for l in text.splitlines() if " WARN " in l and "MQTT" in l]
        check("actiond's log", not warned, f"{board.dir.name}: " + "; ".join(warned[:5]))

    took = time.monotonic() - started
    say(f"{checks.passed} checks passed, {len(checks.failed)} failed, in {took:.0f} s")
    if checks.failed:
        print("\nFailed checks, by what they prove:", file=sys.stderr)
        for f in checks.failed:
            print(f"  - {f}", file=sys.stderr)
        return 1
    print(f"homeassistant: {checks.passed} passed, 0 failed")
    return 0


async def screenshot(ha: HomeAssistant, device_id: str, out: Path) -> None:
    """Board A's device page in Debian's headless chromium, logged in with the onboarding's
    tokens (Home Assistant's frontend keeps them in localStorage)."""
    port = free_port()
    profile = tempfile.mkdtemp(prefix="actiond-ha-chromium-")
    chromium = subprocess.Popen(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--remote-debugging-port={port}", f"--user-data-dir={profile}",
         "--window-size=1280,1500", "--hide-scrollbars", "about:blank"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        async with aiohttp.ClientSession() as http:
            async def target():
                try:
                    async with http.get(f"http://127.0.0.1:{port}/json") as r:
                        pages = [t for t in await r.json() if t["type"] == "page"]
                        return pages[0] if pages else None
                except aiohttp.ClientError:
                    return None

            page = await until(target, timeout=30)
            ws = await http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
            n = 0

            async def cdp(method: str, **params):
                nonlocal n
                n += 1
                await ws.send_json({"id": n, "method": method, "params": params})
                while True:
                    msg = await ws.receive_json()
                    if msg.get("id") == n:
                        return msg.get("result", {})

            await cdp("Page.enable")
            # Home Assistant is served over plain http on loopback; anything else the page
            # asks for (integration logos from a CDN) would leave the machine: refused.
            await cdp("Network.enable")
            await cdp("Network.setBlockedURLs", urls=["https://*"])
            await cdp("Emulation.setDeviceMetricsOverride", width=1280, height=1500,
                      deviceScaleFactor=1, mobile=False)
            await cdp("Page.navigate", url=ha.url("/onboarding.html"))
            await asyncio.sleep(2)
            tokens = {
                "access_token": ha.token, "refresh_token": ha.refresh, "token_type": "Bearer",
                "expires_in": 1800, "hassUrl": ha.url(""), "clientId": CLIENT_ID,
                "expires": int(time.time() * 1000) + 1_800_000,
            }
            await cdp("Runtime.evaluate",
                      expression=f"localStorage.setItem('hassTokens', {json.dumps(json.dumps(tokens))})")
            await cdp("Page.navigate", url=ha.url(f"/config/devices/device/{device_id}"))

            async def rendered():
                r = await cdp("Runtime.evaluate", expression=(
                    "(() => { const q = (root, sel) => { const found = root.querySelector(sel);"
                    " if (found) return found; for (const el of root.querySelectorAll('*'))"
                    " { if (el.shadowRoot) { const f = q(el.shadowRoot, sel); if (f) return f; } }"
                    " return null; }; return !!q(document, 'ha-device-info-card'); })()"))
                return r.get("result", {}).get("value")

            await until(rendered, timeout=60, every=1)

            async def icons():
                # The entity rows draw their icons once the frontend's icon set has loaded.
                r = await cdp("Runtime.evaluate", expression=(
                    "(() => { let n = 0; const walk = (root) => { for (const el of"
                    " root.querySelectorAll('*')) { if (el.tagName === 'PATH' ||"
                    " el.tagName === 'path') n++; if (el.shadowRoot) walk(el.shadowRoot); } };"
                    " walk(document); return n > 40; })()"))
                return r.get("result", {}).get("value")

            await until(icons, timeout=30, every=1)
            await asyncio.sleep(3)  # the last cards settle
            shot = await cdp("Page.captureScreenshot", format="png")
            out.write_bytes(base64.b64decode(shot["data"]))
            say(f"screenshot of the device page: {out}")
            await ws.close()
    finally:
        chromium.terminate()
        chromium.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
