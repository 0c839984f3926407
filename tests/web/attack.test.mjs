// A real browser attack: Debian's Chromium opens a page served from a second loopback origin
// (127.0.0.2, another site to the browser) that tries every way a page can reach actiond
// through its visitor's browser: an <img>, a form GET and a form POST into a frame, a no-cors
// fetch, a fetch POST, a frame of the page. Nothing may run. Then the page on actiond's own
// origin still runs the same action.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtemp, writeFile, rm, access } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launch, newPage, startService, stopService } from "./browser.mjs";

let dir;
let child;
let base;
let browser;
let attacker;
let attackerUrl;

const CONFIG = `# written by tests/web/attack.test.mjs
actions:
  - id: mark
    title: Leave a mark
    icon: "&#128204;"
    shell: "touch MARK; echo marked"
`;

const exists = (p) => access(p).then(() => true, () => false);

before(async () => {
  browser = await launch();
  dir = await mkdtemp(join(tmpdir(), "actiond-attack-"));
  await writeFile(join(dir, "config.yaml"), CONFIG);
  const started = await startService(join(dir, "config.yaml"));
  child = started.proc;
  base = started.url;
  const target = base;
  const page = `<!doctype html><meta charset=utf-8><title>cute cats</title>
<img id=img src="${target}/api/StartActionByGet/mark">
<iframe name=sink></iframe>
<iframe id=framed src="${target}/"></iframe>
<form id=get target=sink action="${target}/api/StartActionByGet/mark" method=get></form>
<form id=post target=sink action="${target}/api/StartAction" method=post enctype=text/plain>
<input name='{"actionId":"mark","x":"' value='"}'></form>
<script>
window.results = [];
const note = (what, p) => p.then(() => results.push(what + ": sent"), (e) => results.push(what + ": " + e.message));
document.getElementById("get").submit();
setTimeout(() => document.getElementById("post").submit(), 200);
note("no-cors GET", fetch("${target}/api/StartActionByGet/mark", { mode: "no-cors", credentials: "include" }));
note("no-cors POST", fetch("${target}/api/StartAction", { method: "POST", mode: "no-cors", credentials: "include", headers: { "Content-Type": "text/plain" }, body: '{"actionId":"mark"}' }));
note("cors POST", fetch("${target}/api/StartAction", { method: "POST", credentials: "include", headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1" }, body: '{"actionId":"mark"}' }));
setTimeout(() => { window.done = true; }, 1500);
</script>`;
  attacker = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(page);
  });
  await new Promise((r) => attacker.listen(0, "127.0.0.2", r));
  attackerUrl = `http://127.0.0.2:${attacker.address().port}/`;
});

after(async () => {
  if (browser) await browser.close();
  if (attacker) await new Promise((r) => attacker.close(r));
  await stopService(child);
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("a page of another site runs nothing through the visitor's browser", async () => {
  const page = await newPage(browser, 1280);
  // Refusals show up as console errors and failed loads; here they are the point.
  const served = [];
  page.on("response", (r) => {
    if (r.url().startsWith(base)) served.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  await page.goto(attackerUrl);
  await page.waitForFunction(() => window.done === true, null, { timeout: 15000 });
  // Every request that reached actiond was refused.
  console.log(`answers of actiond: ${served.join(", ")}`);
  assert.ok(served.length >= 3, `the attacks reached actiond: ${served}`);
  for (const line of served) assert.match(line, /^403 /, `served: ${served.join(", ")}`);
  assert.equal(await exists(join(dir, "MARK")), false, "an attack ran the action");
  const logs = await (await fetch(`${base}/api/GetLogs`, { method: "POST", headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1" }, body: "{}" })).json();
  assert.equal(logs.totalCount, "0", JSON.stringify(logs));
  await page.context().close();
});

test("the page on actiond's own origin still runs it", async () => {
  const page = await newPage(browser, 1280);
  await page.goto(base + "/");
  await page.getByRole("button", { name: /Leave a mark/ }).click();
  for (let i = 0; i < 200 && !(await exists(join(dir, "MARK"))); i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await exists(join(dir, "MARK")), true, "the page's own press did not run");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
