#!/usr/bin/env node
// fe30f browser probes against the real binary, reached as http://pi.local:PORT (an address
// on a veth, not loopback) and http://pi6.local:PORT, from a page of another origin
// (http://evil.fe30f.test:PORT2). Needs: repro/fe30f-net.sh up (veth + /etc/hosts), Debian's
// chromium, playwright-core (tests/web/node_modules, or $PLAYWRIGHT_CORE), a built binary.
// Prints one line per probe: what was run how many times.
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const http = require("node:http");
const os = require("node:os");
const path = require("node:path");
const pw = process.env.PLAYWRIGHT_CORE || path.join(__dirname, "../tests/web/node_modules/playwright-core");
const { chromium } = require(pw);
const BIN = process.env.ACTIOND_BIN || path.join(__dirname, "../target/debug/actiond");
const HASH = "$argon2id$v=19$m=19456,t=2,p=1$BDkpookw3pom8qb2OpTTwQ$TfzylK599XmirRSWe4WD2FqxmgWZA+Wc4ovNfl62E6U"; // fe30f-pass

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fe30f-browser-"));
fs.writeFileSync(path.join(dir, "config.yaml"), `
allowedHosts: [pi.local, pi6.local]
defaultPermissions: {view: true, exec: false, logs: true, kill: false}
authLocalUsers: {enabled: true, users: [{username: alice, usergroup: admins, password: '${HASH}'}]}
accessControlLists:
  - {name: status, matchUsergroups: [guest], permissions: {view: true, exec: true, logs: true, kill: false}}
  - {name: admins, matchUsergroups: [admins], addToEveryAction: true, permissions: {view: true, exec: true, logs: true, kill: true}}
actions:
  - {id: status, title: Status, shell: 'echo status', acls: [status]}
  - {id: open, title: Open, shell: 'echo open', acls: [status]}
  - {id: danger, title: Danger, shell: 'echo danger'}
`);

function start() {
  return new Promise((resolve, reject) => {
    const p = spawn(BIN, ["--config", path.join(dir, "config.yaml"), "--listen", "[::]:0"], { cwd: dir });
    let log = "";
    p.stderr.on("data", (d) => {
      log += d;
      const m = /listening on http:\/\/\[::\]:(\d+)/.exec(log);
      if (m) resolve({ p, port: Number(m[1]), log: () => log });
    });
    p.on("exit", () => reject(new Error("actiond exited: " + log)));
  });
}

async function history(base) {
  const r = await fetch(base + "/api/GetLogs", {
    method: "POST",
    headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1" },
    body: JSON.stringify({ startOffset: 0 }),
  });
  return (await r.json()).logs || [];
}
const count = (logs, id) => logs.filter((e) => e.actionId === id && !e.blocked).length;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

(async () => {
  const svc = await start();
  const base = `http://pi.local:${svc.port}`;
  const base6 = `http://pi6.local:${svc.port}`;
  const evil = http.createServer((req, res) => {
    res.setHeader("Content-Type", "text/html");
    const target = req.url.startsWith("/6") ? base6 : base;
    res.end(`<!doctype html><body>
<form id=f1 method=POST action="${target}/api/StartAction" enctype="text/plain"><input name='{"actionId":"open","x":"' value='"}'></form>
<form id=f2 method=GET action="${target}/api/StartActionByGet/open"></form>
<img src="${target}/api/StartActionByGet/open">
<script>
const t = ${JSON.stringify(target)};
fetch(t + "/api/StartAction", {method: "POST", mode: "no-cors", body: '{"actionId":"open"}'}).catch(()=>{});
fetch(t + "/api/StartAction", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: '{"actionId":"open"}'}).catch(()=>{});
try { navigator.sendBeacon(t + "/api/StartAction", '{"actionId":"open"}'); } catch (e) {}
try { navigator.sendBeacon(t + "/api/StartAction", new Blob(['{"actionId":"open"}'], {type: "application/json"})); } catch (e) {}
fetch(t + "/api/StartAction", {method: "POST", headers: {"Content-Type": "application/json", "Connect-Protocol-Version": "1"}, body: '{"actionId":"open"}'}).catch(()=>{});
setTimeout(() => document.getElementById("f1").submit(), 300);
</script></body>`);
  });
  await new Promise((r) => evil.listen(0, "10.98.0.2", r));
  const evilUrl = `http://evil.fe30f.test:${evil.address().port}`;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
  const out = [];
  try {
    // 1. A page of another origin, v4 and v6.
    for (const [name, url] of [["v4", evilUrl + "/"], ["v6", evilUrl + "/6"]]) {
      const ctx = await browser.newContext();
      const pg = await ctx.newPage();
      await pg.goto(url);
      await sleep(1500);
      await ctx.close();
      out.push(`hostile page (${name}): open ran ${count(await history(base), "open")} time(s) in all (want 0)`);
    }
    // 2. A phone: one double tap of Status.
    {
      const ctx = await browser.newContext({ viewport: { width: 360, height: 760 }, hasTouch: true, isMobile: true });
      const pg = await ctx.newPage();
      await pg.goto(base + "/");
      const b = pg.locator('button.act[data-binding="status"]').first();
      await b.waitFor();
      const before = count(await history(base), "status");
      const box = await b.boundingBox();
      await pg.touchscreen.tap(box.x + box.width / 2, box.y + box.height / 2);
      await sleep(60);
      await pg.touchscreen.tap(box.x + box.width / 2, box.y + box.height / 2);
      await sleep(1500);
      out.push(`phone double tap: status ran ${count(await history(base), "status") - before} time(s) (want 1)`);
      await ctx.close();
    }
    // 3. Two tabs logged in as alice; tab A logs out; tab B presses Danger.
    {
      const ctx = await browser.newContext();
      const a = await ctx.newPage();
      await a.goto(base + "/#/login");
      await a.fill("#login-user", "alice");
      await a.fill("#login-pass", "fe30f-pass");
      await a.click("form.loginform button[type=submit]");
      await a.locator('button.act[data-binding="danger"]').first().waitFor();
      const b = await ctx.newPage();
      await b.goto(base + "/");
      await b.locator('button.act[data-binding="danger"]').first().waitFor();
      const sid = await a.evaluate(() => Object.entries(localStorage).map(([k, v]) => k + "=" + v).join(";"));
      // Log out in tab A through the page's own API call, as its logout button does.
      await a.evaluate(async () => {
        const s = Object.values(localStorage)[0];
        await fetch("/api/Logout", { method: "POST", headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1", "Actiond-Session": s || "" }, body: "{}" });
        localStorage.clear();
      });
      await sleep(800);
      const before = count(await history(base), "danger");
      const btn = b.locator('button.act[data-binding="danger"]').first();
      if (await btn.count()) await btn.click({ timeout: 2000 }).catch(() => {});
      await sleep(1500);
      out.push(`logout in tab A, press Danger in tab B: danger ran ${count(await history(base), "danger") - before} time(s) (want 0) [session was ${sid ? "kept in storage" : "?"}]`);
      // 4. Back/forward cache: tab B goes elsewhere and back, then presses.
      await b.goto(evilUrl + "/nothing").catch(() => {});
      await b.goBack();
      await sleep(800);
      const before2 = count(await history(base), "danger");
      const btn2 = b.locator('button.act[data-binding="danger"]').first();
      if (await btn2.count()) await btn2.click({ timeout: 2000 }).catch(() => {});
      await sleep(1500);
      out.push(`after logout, back/forward cache, press Danger: danger ran ${count(await history(base), "danger") - before2} time(s) (want 0)`);
      await ctx.close();
    }
  } finally {
    await browser.close();
    evil.close();
    svc.p.kill("SIGTERM");
    for (const l of out) console.log(l);
  }
})().catch((e) => { console.error(e); process.exit(1); });
