// A real browser attack on a board reached as a LAN user reaches it: by a name that is not
// loopback (`<hostname>.local`), over plain HTTP. Browsers treat loopback addresses as
// trustworthy and mark their requests with Fetch Metadata; to `http://pi.local` they send no
// `Sec-Fetch-*`, and with `referrerpolicy="no-referrer"` no `Referer` and no `Origin` either,
// so none of the headers actiond's cross-site check reads is there. Chromium's
// --host-resolver-rules maps the board's name and the attacker's (`evil.test`) to 127.0.0.1.
//
// 1. A page on evil.test tries every way a page can make a browser reach the board without
//    asking it first: <img>, no-cors fetch, form GET and POST, an iframe, <link rel=prefetch>,
//    window.open, a top-level navigation; with the README's first config, where the guest may
//    run everything. Nothing may run.
// 2. The logged-in admin's own page shows HTML that an entity file's values and the config
//    point at the API (<img src="api/StartActionByGet/secret?">): the page makes no request to
//    the API from it, and the admin-only action does not run.
// 3. What must keep working: a link with the action's key opened as a QR code opens it (a
//    top-level navigation typed in), and the page's own press.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { mkdtemp, writeFile, rm, access } from "node:fs/promises";
import { tmpdir, hostname } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { BIN, CHROMIUM, startService, stopService, api } from "./browser.mjs";

// actiond answers to `<hostname>.local` without any config, as a Pi answers to pi.local.
const BOARD = `${hostname().split(".")[0].toLowerCase()}.local`;
const EVIL = "evil.test";
const KEY = "k3y-for-the-garage-wall-7f2c9a1e4b";
const PASSWORD = "correct horse battery staple";

let dir;
let child;
let port;
let board; // http://<hostname>.local:<port>
let browser;
let attacker;
let evilUrl;

const exists = (p) => access(p).then(() => true, () => false);
const sha256 = (text) => createHash("sha256").update(text).digest("hex");

const config = (hash) => `# written by tests/web/lan-attack.test.mjs
bannerMessage: Welcome
bannerCss: "color: red; background-image: url(api/StartActionByGet/secret); border-image: url('/api/StartActionByGetAndWait/secret') 30"
authLocalUsers:
  enabled: true
  users:
    - {username: admin, usergroup: admins, password: '${hash}'}
defaultPermissions: {view: true, exec: false, logs: true, kill: false}
accessControlLists:
  - {name: admins, matchUsergroups: [admins], addToEveryAction: true, permissions: {view: true, exec: true, logs: true, kill: true}}
  - {name: everyone, matchUsergroups: [guest, admins], permissions: {view: true, exec: true, logs: true}}
entities:
  - {file: hosts.yaml, name: host}
actions:
  - {id: mark, title: Leave a mark, shell: "touch MARK; echo marked", acls: [everyone]}
  - {id: keyed, title: Open the garage, shell: "touch KEYED; echo opened", acls: [everyone], linkKeySha256: ${sha256(KEY)}}
  - {id: secret, title: Admin secret, shell: "touch SECRET; echo secret"}
  - id: hostInfo
    title: "Host {{ .CurrentEntity.title }}"
    entity: host
    icon: '<img src="{{ .CurrentEntity.img }}" alt="{{ .CurrentEntity.title }}">'
    shell: "echo {{ .CurrentEntity.title }}"
    acls: [everyone]
dashboards:
  - title: Hosts
    contents:
      - {type: display, title: '<img src="api/StartActionByGet/secret"><a href="/api/StartActionByGetAndWait/secret">x</a><img src="svc.api.v1.ActionApiService/StartAction">'}
      - type: fieldset
        entity: host
        title: '{{ .CurrentEntity.title }}'
        contents:
          - {type: display, title: '<img src="{{ .CurrentEntity.img }}"><a href="{{ .CurrentEntity.img }}">go</a>'}
          - {title: "Host {{ .CurrentEntity.title }}"}
`;

// Every shape an entity value could take to reach the API from the page's own origin.
const HOSTS = `- {id: a, title: A, img: "api/StartActionByGet/secret?"}
- {id: b, title: B, img: "/api/StartActionByGet/secret"}
- {id: c, title: C, img: "../api/StartActionByGetAndWait/secret#"}
- {id: d, title: D, img: "http://${BOARD}:PORT/api/StartActionByGet/secret"}
- {id: e, title: E, img: ".."}
- {id: f, title: F, img: "%2e%2e/api/StartActionByGet/secret"}
- {id: g, title: G, img: "\\\\api\\\\StartActionByGet\\\\secret"}
`;

function attackPage(target) {
  const start = `${target}/api/StartActionByGet/mark`;
  return `<!doctype html><meta charset=utf-8><meta name=referrer content=no-referrer><title>cute cats</title>
<img referrerpolicy=no-referrer src="${start}">
<img referrerpolicy=no-referrer src="${target}/api/StartActionByGetAndWait/mark">
<img referrerpolicy=no-referrer src="${target}/api/StartActionByGet/keyed?key=guessed">
<img referrerpolicy=no-referrer src="${target}/api/StartActionByGet/keyed">
<link rel=prefetch href="${target}/api/StartActionByGet/mark?prefetch">
<iframe name=sink1></iframe><iframe name=sink2></iframe><iframe name=sink3></iframe>
<iframe referrerpolicy=no-referrer src="${start}?iframe"></iframe>
<form id=get target=sink1 action="${target}/api/StartActionByGet/mark" method=get><input name=form value=get></form>
<form id=post target=sink2 action="${target}/api/StartAction" method=post enctype=text/plain>
<input name='{"actionId":"mark","x":"' value='"}'></form>
<form id=urlenc target=sink3 action="${target}/api/StartActionByGet/mark" method=post><input name=a value=b></form>
<script>
window.results = [];
const note = (what, p) => p.then(() => results.push(what + ": sent"), (e) => results.push(what + ": " + e.message));
document.getElementById("get").submit();
setTimeout(() => document.getElementById("post").submit(), 150);
setTimeout(() => document.getElementById("urlenc").submit(), 300);
note("no-cors GET", fetch("${start}?fetch", { mode: "no-cors", credentials: "include", referrerPolicy: "no-referrer" }));
note("no-cors POST", fetch("${target}/api/StartAction", { method: "POST", mode: "no-cors", credentials: "include", referrerPolicy: "no-referrer", headers: { "Content-Type": "text/plain" }, body: '{"actionId":"mark"}' }));
note("cors POST", fetch("${target}/api/StartAction", { method: "POST", credentials: "include", headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1" }, body: '{"actionId":"mark"}' }));
window.open("${start}?popup", "_blank", "noreferrer");
setTimeout(() => { window.done = true; }, 2000);
</script>`;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "actiond-lan-attack-"));
  const hash = execFileSync(BIN, ["hash-password"], { input: PASSWORD + "\n" }).toString().trim();
  await writeFile(join(dir, "config.yaml"), config(hash));
  await writeFile(join(dir, "hosts.yaml"), HOSTS.replace("PORT", "0"));
  const started = await startService(join(dir, "config.yaml"));
  child = started.proc;
  port = new URL(started.url).port;
  board = `http://${BOARD}:${port}`;
  await writeFile(join(dir, "hosts.yaml"), HOSTS.replace("PORT", port));
  attacker = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(attackPage(board));
  });
  await new Promise((r) => attacker.listen(0, "127.0.0.1", r));
  evilUrl = `http://${EVIL}:${attacker.address().port}/`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-popup-blocking",
      `--host-resolver-rules=MAP ${BOARD} 127.0.0.1, MAP ${EVIL} 127.0.0.1`,
    ],
  });
  // The entity file is read again after the port was known.
  for (let i = 0; i < 100; i++) {
    const e = await api(started.url, "GetEntities", {});
    const host = e.entityDefinitions.find((d) => d.title === "host");
    if (host && host.instances.length === 7) break;
    await new Promise((r) => setTimeout(r, 100));
  }
});

after(async () => {
  if (browser) await browser.close();
  if (attacker) await new Promise((r) => attacker.close(r));
  await stopService(child);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/// Every request the browser sent to the board in the context (popups and frames included),
/// with all its headers and, where the browser let the page see one, the answer's status.
/// Images refused as opaque responses (ERR_BLOCKED_BY_ORB) reached actiond all the same.
function recordRequests(context) {
  const sent = [];
  context.on("request", (r) => {
    const u = new URL(r.url());
    if (u.hostname !== BOARD) return;
    const entry = { method: r.method(), path: u.pathname + u.search, type: r.resourceType(), status: null, headers: null };
    sent.push(entry);
    r.allHeaders().then((h) => { entry.headers = h; }, () => {});
    r.response().then((resp) => { if (resp) entry.status = resp.status(); }, () => {});
  });
  return sent;
}

/// Paths actiond routes as a start: GET /api/StartActionByGet…/<id> and the POST operations.
const START = /^\/(api\/|svc\.api\.v1\.ActionApiService\/|api\/svc\.api\.v1\.ActionApiService\/)(StartAction|RestartAction)/;

test(`a page of another site presses nothing on http://${BOARD}, by any request a page can make`, async () => {
  const context = await browser.newContext();
  const sent = recordRequests(context);
  const page = await context.newPage();
  await page.goto(evilUrl);
  await page.waitForFunction(() => window.done === true, null, { timeout: 20000 });
  // Last, the page navigates itself to the start URL (a top-level navigation).
  await page.evaluate((url) => { location.href = url; }, `${board}/api/StartActionByGet/mark?top`);
  await page.waitForURL(/\?top$/);
  await new Promise((r) => setTimeout(r, 500));
  const lines = sent.map((a) => `${a.status ?? "(opaque)"} ${a.method} ${a.path} [${a.type}]`);
  console.log(`requests to actiond on ${BOARD}: ${lines.join(", ")}`);
  const starts = sent.filter((a) => START.test(a.path));
  const kinds = new Set(starts.map((a) => a.type));
  for (const kind of ["image", "document", "fetch", "other"]) assert.ok(kinds.has(kind), `no ${kind} request reached actiond: ${lines}`);
  assert.ok(starts.length >= 13, `the attacks reached actiond: ${lines}`);
  // The browser sent the GETs without any header a check could read: that is the point.
  const bare = starts.filter((a) => a.method === "GET" && a.headers && !a.headers["sec-fetch-site"] && !a.headers["origin"] && !a.headers["referer"]);
  assert.ok(bare.length >= 8, `GETs without Fetch Metadata, Origin or Referer: ${bare.length} of ${lines}`);
  for (const a of starts) if (a.status !== null) assert.match(String(a.status), /^(403|405|415)$/, lines.join(", "));
  for (const f of ["MARK", "KEYED", "SECRET"]) assert.equal(await exists(join(dir, f)), false, `an attack ran ${f}`);
  const logs = await api(`http://127.0.0.1:${port}`, "GetLogs", { startOffset: 0 });
  assert.equal(logs.totalCount, "0", JSON.stringify(logs));
  await context.close();
});

test("the logged-in admin's own page loads no API URL that config or entity HTML names", async () => {
  const context = await browser.newContext();
  // The page itself keeps its session in a header, never a cookie. A browser may still hold
  // the admin's cookie from another client's login (an older page, a script): the browser
  // gets one here too, so that an <img> the page drew would carry it.
  const login = await fetch(`http://127.0.0.1:${port}/api/LocalUserLogin`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const sid = /svc-sid-local=([^;]+)/.exec(login.headers.get("set-cookie") || "")[1];
  await context.addCookies([{ name: "svc-sid-local", value: sid, url: board }]);
  const sent = recordRequests(context);
  const page = await context.newPage();
  await page.goto(`${board}/#/login`);
  await page.getByLabel("Username").fill("admin");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByTitle("Signed in as admin").waitFor();
  await page.goto(`${board}/#/d/Hosts`);
  await page.getByRole("button", { name: /Host G/ }).waitFor();
  await new Promise((r) => setTimeout(r, 1000));
  // The page drew the entity values as data: no <img> or link on it points at the API.
  const pointers = await page.evaluate(() => [...document.querySelectorAll("img[src], a[href]")]
    .map((e) => e.src || e.href).filter((u) => /\/(api|svc\.api\.v1\.[^/]*)\//i.test(new URL(u).pathname)));
  assert.deepEqual(pointers, []);
  const starts = sent.filter((a) => START.test(a.path) && a.method === "GET");
  assert.deepEqual(starts.map((a) => a.path), [], "the page made the browser load a start URL");
  assert.equal(await exists(join(dir, "SECRET")), false, "the admin's page ran the admin-only action");
  await context.close();
});

test("a link with the action's key, opened as a QR code opens it, runs it; the page's own press too", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const r = await page.goto(`${board}/api/StartActionByGetAndWait/keyed?key=${KEY}`);
  assert.equal(r.status(), 200, await r.text());
  assert.equal((await r.json()).logEntry.stdout, "opened\n");
  assert.equal(await exists(join(dir, "KEYED")), true);
  await page.goto(`${board}/`);
  await page.getByRole("link", { name: "Actions", exact: true }).click();
  await page.getByRole("button", { name: /Leave a mark/ }).click();
  for (let i = 0; i < 200 && !(await exists(join(dir, "MARK"))); i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await exists(join(dir, "MARK")), true, "the page's own press did not run");
  await context.close();
});
