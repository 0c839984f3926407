// The page people trust: one test per promise, each as a phone user meets it (390 px, and a
// desktop where the width matters), against a board config of the Raspberry Pi's kind (guests
// read the status and ask for a login to change anything):
//
// 1. a press answers where it was made: outcome, duration and first output line at once; a tap
//    on a running action opens it, and records no blocked run;
// 2. a confirmation holds: "Run again" opens the form, unticked; a confirmed reboot shows the
//    board going away, and the page reconnects by itself;
// 3. logout (and a session ended elsewhere) forgets every run and output of the user;
// 4. a locked button says "Log in to run", opens the login and returns to itself (to its
//    form, for an action with arguments);
// 5. a proxy that stops forwarding without closing turns the dot within 15 s, and the page
//    catches up once it forwards again;
// 6. a run view made for a phone: one line of metadata, wrapped lines, Kill and the newest
//    line on screen, and the same outcome words everywhere;
// 7. forms: required fields marked and checked before sending, refusals next to the field by
//    its title, the expected form explained instead of a pattern;
// 8. the home-screen app: named after the board, its id scoped to its own path, an offline page;
// 9. accessibility: axe-core finds nothing on the main views in either theme, every control
//    shows a focus ring, and outcomes are said through a live region.
//
// Runs that must still be going when the test looks wait for a file the test creates, so
// nothing here depends on the machine's speed (test 5 measures a bound the page promises).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, writeFile, rm, readFile, mkdir } from "node:fs/promises";
import { createServer, connect } from "node:net";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, api as apiAt, launch, markHref, newPage as pageIn, newRunShown, shot, startService, stopService } from "./browser.mjs";
import { startNginx } from "./nginx.mjs";

const PASSWORD = "correct horse battery staple";
const PHONE = 390;
const DESKTOP = 1280;
const AXE = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let dir;
let hash;
let service;
let base;
let browser;

const api = (op, body, headers) => apiAt(base, op, body, headers);
const newPage = (width, scheme) => pageIn(browser, width, scheme);

function config(extra = "") {
  return `# written by tests/web/trust.test.mjs
pageTitle: Raspberry Pi
killGracePeriod: 1
logHistoryPageSize: 20
defaultPermissions: {view: true, exec: false, logs: false, kill: false}
accessControlLists:
  - name: status
    matchUsergroups: [guest]
    permissions: {view: true, exec: true, logs: true, kill: true}
    policy: {showLogList: true}
  - name: admins
    matchUsergroups: [admins]
    addToEveryAction: true
    permissions: {view: true, exec: true, logs: true, kill: true}
    policy: {showDiagnostics: true, showLogList: true}
authLocalUsers:
  enabled: true
  users:
    - {username: alice, usergroup: admins, password: '${hash}'}
actions:
  - id: date
    title: Show the date
    acls: [status]
    icon: clock
    shell: echo 'Sun Nov 22 03:55:34 UTC 2026'
  - id: sensor
    title: Read the sensor
    acls: [status]
    icon: "&#127777;"
    shell: "echo 'reading /dev/sensor0'; echo 'sensor0: no such device' >&2; exit 2"
  - id: slow
    title: Back up now
    acls: [status]
    icon: backup
    timeout: 120
    shell: "echo copying; until [ -e release-slow ]; do sleep 0.05; done; echo copied"
  - id: lines
    title: Follow the log
    acls: [status]
    icon: "&#128220;"
    popupOnStart: execution-dialog
    timeout: 120
    shell: "i=1; while [ $i -le 200 ]; do echo \\"log line $i of the service with enough words to wrap on a phone\\"; i=$((i+1)); done; until [ -e release-lines ]; do sleep 0.05; done"
  - id: stuck
    title: Wait forever
    acls: [status]
    icon: "&#9203;"
    popupOnStart: execution-dialog
    timeout: 1
    shell: "echo waiting; sleep 30"
  - id: purge
    title: Purge the cache
    acls: [status]
    icon: "&#129529;"
    arguments:
      - {type: confirmation, title: Delete every cached file?}
    shell: echo purged
  - id: tag
    title: Tag a backup
    acls: [status]
    icon: "&#127991;"
    arguments:
      - {name: host, title: Host name, type: ascii_identifier, rejectNull: true}
      - {name: label, title: Label, type: "regex:[a-z]{2,4}", description: Two to four small letters}
    shell: "echo tagged {{ host }} {{ label }}"
  - id: secret
    title: Read the admin log
    icon: "&#128274;"
    shell: echo ADMIN-ONLY-OUTPUT-4242
  - id: restart
    title: Restart the web server
    icon: restart
    shell: echo restarted
  - id: reboot
    title: Reboot
    icon: reboot
    arguments:
      - {type: confirmation, title: Reboot the Pi now?}
    exec: [echo, rebooting]
${extra}dashboards:
  - title: Status
    contents:
      - {type: stdout-most-recent-execution, title: secret}
      - {title: Show the date}
      - {title: Read the sensor}
      - {title: Back up now}
      - {title: Follow the log}
      - {title: Wait forever}
      - {title: Tag a backup}
      - {title: Read the admin log}
  - title: Maintenance
    contents:
      - {title: Purge the cache}
      - {title: Restart the web server}
      - {title: Reboot}
`;
}

before(async () => {
  browser = await launch();
  dir = await mkdtemp(join(tmpdir(), "actiond-trust-"));
  hash = execFileSync(BIN, ["hash-password"], { input: PASSWORD + "\n" }).toString().trim();
  await writeFile(join(dir, "config.yaml"), config());
  service = await startService(join(dir, "config.yaml"));
  base = service.url;
});

after(async () => {
  if (browser) await browser.close();
  await stopService(service && service.proc);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const runsOf = async (actionId) => (await api("GetActionLogs", { actionId, startOffset: 0 })).logs || [];
const sheet = (page) => page.locator("#sheet");

async function logIn(page) {
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByTitle("Signed in as alice").waitFor();
}

test("1. a press shows its outcome and first output line without a second tap", async () => {
  for (const width of [PHONE, DESKTOP]) {
    const page = await newPage(width);
    await page.goto(base + "/");
    await page.getByRole("button", { name: /Show the date/ }).click();
    await sheet(page).getByText("Succeeded").waitFor({ timeout: 5000 });
    await sheet(page).getByText("Sun Nov 22 03:55:34 UTC 2026").waitFor();
    assert.match(await sheet(page).innerText(), /\d(\.\d)? s/, "the sheet gives the duration");
    await sheet(page).getByRole("link", { name: /Details/ }).waitFor();
    await page.locator("#say", { hasText: "Show the date: Succeeded" }).waitFor({ state: "attached" });
    await shot(page, "sheet-ok");
    // A failure leads with stderr, where the reason is.
    await page.getByRole("button", { name: /Read the sensor/ }).click();
    await sheet(page).getByText("Failed").waitFor();
    const lines = (await sheet(page).locator("pre").innerText()).trim().split("\n");
    assert.equal(lines[0], "sensor0: no such device");
    assert.equal(lines[1], "reading /dev/sensor0");
    await shot(page, "sheet-failed");
    await sheet(page).getByRole("link", { name: /Details/ }).click();
    await page.waitForURL(/#\/x\//);
    assert.equal(await sheet(page).isHidden(), true, "the sheet goes with the dashboard");
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("1. a tap on a running action opens its live view and records no blocked run", async () => {
  await rm(join(dir, "release-slow"), { force: true });
  const page = await newPage(PHONE);
  await page.goto(base + "/");
  const button = page.getByRole("button", { name: /Back up now/ });
  await button.click();
  await page.locator('[data-binding="slow"][data-state="running"]').waitFor();
  const runs = await runsOf("slow");
  const running = runs.find((e) => !e.executionFinished);
  assert.ok(running, "the backup runs");
  await button.click();
  await page.waitForURL(new RegExp("#/x/" + running.executionTrackingId));
  await page.locator(".titles .badge", { hasText: "Running" }).waitFor();
  await page.getByRole("button", { name: "Kill" }).waitFor();
  const after = await runsOf("slow");
  assert.equal(after.filter((e) => e.blocked).length, runs.filter((e) => e.blocked).length, "no blocked run was recorded");
  await writeFile(join(dir, "release-slow"), "");
  await page.locator(".titles .badge", { hasText: "Succeeded" }).waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("2. Run again on a confirmed action starts nothing until the box is ticked again", async () => {
  const page = await newPage(PHONE);
  await page.goto(base + "/#/d/Maintenance");
  const first = await markHref(page, "purge");
  await page.getByRole("button", { name: /Purge the cache/ }).click();
  await page.getByLabel(/Delete every cached file/).check();
  await page.getByRole("button", { name: "Run" }).click();
  await newRunShown(page, "purge", "ok", first);
  await page.goto(base + "/" + (await markHref(page, "purge")));
  const before = (await runsOf("purge")).length;
  await page.getByRole("button", { name: "Run again" }).click();
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await runsOf("purge")).length, before, "Run again started nothing by itself");
  await page.waitForURL(/#\/a\/purge\/again$/);
  const box = page.getByLabel(/Delete every cached file/);
  assert.equal(await box.isChecked(), false, "the confirmation is cleared");
  await page.locator("form.argform.danger").waitFor();
  await shot(page, "run-again");
  await page.getByRole("button", { name: "Run" }).click();
  await page.getByText("Tick “Delete every cached file?” to confirm.").waitFor();
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await runsOf("purge")).length, before, "nothing started");
  await box.check();
  await page.getByRole("button", { name: "Run" }).click();
  // Pressed from a run's view: the new run shows in its place.
  await page.locator(".titles .badge", { hasText: "Succeeded" }).waitFor();
  assert.equal((await runsOf("purge")).length, before + 1);
  assert.ok(page.url().includes((await runsOf("purge"))[0].executionTrackingId), page.url());
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("2. a double tap presses once: on a confirmed form's Run, on a button, on what replaces them", async () => {
  const page = await newPage(PHONE);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const centre = async (locator) => {
    const b = await locator.boundingBox();
    return [b.x + b.width / 2, b.y + b.height / 2];
  };
  const doubleTap = async (x, y, gap) => {
    await page.touchscreen.tap(x, y);
    if (gap) await sleep(gap);
    await page.touchscreen.tap(x, y);
  };
  // The confirmed form: Run tapped twice, 0 to 600 ms apart. The second tap finds Run still
  // there, or the dashboard that replaced the form under the finger.
  for (const gap of [0, 20, 120, 300, 600]) {
    await page.goto(base + "/#/d/Maintenance");
    await page.getByRole("button", { name: /Purge the cache/ }).click();
    await page.getByLabel(/Delete every cached file/).check();
    const before = (await runsOf("purge")).length;
    // Run comes alive a moment after the form appears (a tap meant for what was there before
    // presses nothing).
    await page.locator("form.argform button[type=submit]:not([disabled])").waitFor();
    const [x, y] = await centre(page.getByRole("button", { name: "Run" }));
    await doubleTap(x, y, gap);
    await sleep(1500);
    assert.equal((await runsOf("purge")).length, before + 1, `a double tap ${gap} ms apart on Run`);
    assert.ok(!page.url().endsWith("#/login"), `the second tap (${gap} ms) pressed a locked button beneath`);
  }
  // A button of the dashboard, twice within a second: one run.
  for (const gap of [0, 120, 400]) {
    await page.goto(base + "/#/d/Status");
    const button = page.getByRole("button", { name: /Show the date/ });
    const before = (await runsOf("date")).length;
    const [x, y] = await centre(button);
    await doubleTap(x, y, gap);
    await sleep(1500);
    assert.equal((await runsOf("date")).length, before + 1, `a double tap ${gap} ms apart on a button`);
  }
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("2. a confirmed reboot shows the board going away, and the page reconnects by itself", async () => {
  const own = await mkdtemp(join(tmpdir(), "actiond-reboot-"));
  const path = join(own, "config.yaml");
  await mkdir(join(own, "state"));
  await writeFile(path, `pageTitle: Raspberry Pi
stateDirectory: state
actions:
  - id: reboot
    title: Reboot
    icon: reboot
    arguments:
      - {type: confirmation, title: Reboot the Pi now?}
    exec: [echo, rebooting]
`);
  let board = await startService(path);
  const page = await newPage(PHONE);
  try {
    await page.goto(board.url + "/");
    await page.locator("#conn.on").waitFor();
    await page.getByRole("button", { name: /Reboot/ }).click();
    await page.getByLabel(/Reboot the Pi now/).check();
    await page.getByRole("button", { name: "Run" }).click();
    await page.locator('[data-binding="reboot"][data-state="ok"]').waitFor();
    // The board goes away, as a reboot makes it.
    await stopService(board.proc);
    await sheet(page).getByText("The board went away after Reboot").waitFor({ timeout: 15_000 });
    await shot(page, "rebooting");
    board = await startService(path, board.addr);
    await sheet(page).getByText("The board is back").waitFor({ timeout: 30_000 });
    await page.locator("#conn.on").waitFor();
    assert.deepEqual(page.errors.filter((e) => !/ERR_CONNECTION_REFUSED|Failed to fetch|ERR_FAILED|ERR_EMPTY_RESPONSE/.test(e)), []);
  } finally {
    await page.context().close();
    await stopService(board.proc);
    await rm(own, { recursive: true, force: true });
  }
});

/// Whether the page holds any trace of alice's runs: the admin-only output, her name as the
/// one who started a run, a mark on her action's button.
async function adminTraces(page) {
  return page.evaluate(() => {
    const html = document.documentElement.outerHTML;
    const found = [];
    if (html.includes("ADMIN-ONLY-OUTPUT")) found.push("the admin's output");
    if (/Started[^<]*alice|· alice/.test(html)) found.push("alice as the one who started a run");
    const b = document.querySelector('[data-binding="secret"]');
    const mark = b && b.parentElement.querySelector("a.mark");
    if (mark && !mark.hidden) found.push("a mark on the admin's action");
    return found;
  });
}

test("3. after logout the DOM holds none of the admin's output", async () => {
  for (const width of [PHONE, DESKTOP]) {
    const page = await newPage(width);
    await page.goto(base + "/#/login");
    await logIn(page);
    await page.getByRole("button", { name: /Read the admin log/ }).click();
    await page.locator(".recent").getByText("ADMIN-ONLY-OUTPUT-4242").waitFor();
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("link", { name: "Log in" }).waitFor();
    await page.getByRole("heading", { name: "Status", exact: true }).waitFor();
    await page.locator('[data-binding="secret"]').waitFor();
    assert.deepEqual(await adminTraces(page), []);
    await shot(page, "after-logout");
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("3. a session ended elsewhere is forgotten too", async () => {
  const page = await newPage(PHONE);
  await page.goto(base + "/#/login");
  await logIn(page);
  await page.getByRole("button", { name: /Read the admin log/ }).click();
  await page.locator(".recent").getByText("ADMIN-ONLY-OUTPUT-4242").waitFor();
  // Another tab logs this session out.
  const sid = await page.evaluate(() => localStorage.getItem("actiond-session:/"));
  assert.ok(sid, "the page keeps its session in storage");
  await api("Logout", {}, { "Actiond-Session": sid });
  await page.getByRole("link", { name: "Log in" }).waitFor({ timeout: 10_000 });
  await page.locator('[data-binding="secret"]').waitFor();
  await page.locator(".toast", { hasText: "Your session ended" }).waitFor();
  assert.deepEqual(await adminTraces(page), []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("4. a guest's tap on a locked button shows a login prompt, and the login returns to it", async () => {
  for (const width of [PHONE, DESKTOP]) {
    const page = await newPage(width);
    await page.goto(base + "/#/d/Maintenance");
    const button = page.locator('[data-binding="restart"]');
    await button.waitFor();
    assert.equal(await button.getAttribute("aria-disabled"), "true");
    assert.equal(await button.evaluate((b) => b.disabled), false, "it stays a button that takes focus and taps");
    await button.getByText("Log in to run").waitFor();
    await shot(page, "locked");
    await button.focus();
    assert.equal(await page.evaluate(() => document.activeElement.dataset.binding), "restart");
    // A tap on the phone, the keyboard on the desktop. (Playwright's click waits for an
    // aria-disabled button to be enabled; a browser does not.)
    if (width === PHONE) await button.click({ force: true, timeout: 5000 });
    else await page.keyboard.press("Enter");
    await page.waitForURL(/#\/login/);
    await page.getByText("Log in to run Restart the web server.").waitFor();
    await logIn(page);
    await page.waitForFunction(() => document.activeElement && document.activeElement.dataset.binding === "restart");
    assert.ok(page.url().includes("#/d/Maintenance"), page.url());
    assert.equal(await page.locator('[data-binding="restart"]').getAttribute("aria-disabled"), null, "unlocked now");
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("4b. the login a locked action with arguments asked for returns to its form", async () => {
  // (The actions are known only once the dashboard has loaded after the login: the page
  // used to decide before that, and went back to the dashboard.)
  for (const width of [PHONE, DESKTOP]) {
    const page = await newPage(width);
    await page.goto(base + "/#/d/Maintenance");
    const button = page.locator('[data-binding="reboot"]');
    await button.getByText("Log in to run").waitFor();
    if (width === PHONE) await button.click({ force: true, timeout: 5000 });
    else {
      await button.focus();
      await page.keyboard.press("Enter");
    }
    await page.waitForURL(/#\/login/);
    await logIn(page);
    await page.waitForURL(/#\/a\/reboot/, { timeout: 10_000 });
    await page.getByText("Reboot the Pi now?").waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

/// A TCP relay in front of the service that can be told to stop forwarding without closing
/// anything (as a link that stops carrying packets: a board that lost power, a stale phone
/// socket), and to forward again, resetting what it held meanwhile (as a board that came back
/// answers its old connections).
function relay(target) {
  const [host, port] = target.split(":");
  const pairs = new Set();
  let stalled = false;
  const server = createServer((inbound) => {
    const pair = { inbound, outbound: null };
    pairs.add(pair);
    inbound.on("error", () => {});
    inbound.on("close", () => pairs.delete(pair));
    if (stalled) return;
    pair.outbound = connect(Number(port), host);
    pair.outbound.on("error", () => inbound.destroy());
    pair.outbound.on("close", () => stalled || inbound.destroy());
    inbound.on("close", () => pair.outbound.destroy());
    inbound.on("data", (d) => stalled || pair.outbound.write(d));
    pair.outbound.on("data", (d) => stalled || inbound.write(d));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({
    url: `http://127.0.0.1:${server.address().port}`,
    stall: () => (stalled = true),
    resume: () => {
      stalled = false;
      for (const p of pairs) {
        p.inbound.resetAndDestroy();
        if (p.outbound) p.outbound.destroy();
      }
    },
    close: () => new Promise((r) => {
      for (const p of pairs) p.inbound.destroy();
      server.close(r);
    }),
  })));
}

test("5. a proxy that stops forwarding without closing turns the dot within 15 s, and the page catches up", async () => {
  const proxy = await relay(service.addr);
  const page = await newPage(PHONE);
  try {
    await page.goto(proxy.url + "/");
    await page.locator("#conn.on").waitFor();
    await page.getByRole("button", { name: /Show the date/ }).waitFor();
    const before = await markHref(page, "date");
    await new Promise((r) => setTimeout(r, 1000));
    proxy.stall();
    const began = Date.now();
    await page.locator("#conn.off", { hasText: "Reconnecting…" }).waitFor({ timeout: 15_000 });
    const noticed = Date.now() - began;
    assert.ok(noticed < 15_000, `noticed after ${noticed} ms`);
    console.log(`a stalled link was noticed after ${noticed} ms`);
    await shot(page, "reconnecting");
    // A run made meanwhile, elsewhere.
    await api("StartActionAndWait", { actionId: "date" });
    proxy.resume();
    await page.locator("#conn.on").waitFor({ timeout: 45_000 });
    await newRunShown(page, "date", "ok", before);
    assert.deepEqual(page.errors.filter((e) => !/ERR_|Failed to fetch|network/i.test(e)), []);
  } finally {
    await page.context().close();
    await proxy.close();
  }
});

test("6. a run view made for a phone: one line of metadata, wrapped lines, Kill and the newest line in view", async () => {
  await rm(join(dir, "release-lines"), { force: true });
  const page = await newPage(PHONE);
  await page.goto(base + "/");
  await page.getByRole("button", { name: /Follow the log/ }).click();
  const out = page.locator("pre.out");
  await out.getByText("log line 200 of the service").waitFor();
  const meta = page.locator(".runmeta");
  await meta.getByText("Running").waitFor();
  const lineHeight = await meta.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight));
  assert.ok((await meta.boundingBox()).height < lineHeight * 1.6, "one line of metadata");
  assert.equal(await out.evaluate((el) => getComputedStyle(el).whiteSpace), "pre-wrap", "lines wrap on a phone");
  await page.waitForFunction(() => {
    const pre = document.querySelector("pre.out");
    return pre.scrollHeight - pre.scrollTop - pre.clientHeight < 4;
  });
  const view = page.viewportSize();
  const inView = (box) => box && box.y >= 0 && box.y + box.height <= view.height + 1;
  assert.ok(inView(await page.getByRole("button", { name: "Kill" }).boundingBox()), "Kill is on screen");
  const last = await out.evaluate((pre) => {
    const r = document.createRange();
    r.selectNodeContents(pre);
    const rects = [...r.getClientRects()];
    const b = rects[rects.length - 1];
    return { y: b.y, height: b.height, pre: pre.getBoundingClientRect().bottom };
  });
  assert.ok(inView(last) && last.y + last.height <= last.pre + 1, `the newest line is on screen: ${JSON.stringify(last)}`);
  await shot(page, "run-phone");
  await page.getByRole("button", { name: "Wrap lines" }).click();
  assert.equal(await out.evaluate((el) => getComputedStyle(el).whiteSpace), "pre", "the toggle is kept");
  await page.getByRole("button", { name: "Wrap lines" }).click();
  await page.getByRole("button", { name: "Kill" }).click();
  await meta.getByText("Killed").waitFor();
  assert.doesNotMatch(await meta.innerText(), /-1/);
  await page.locator(".titles .badge", { hasText: "Killed" }).waitFor();
  // A timeout and a block say so, in the same words in the run and in the history.
  await page.goto(base + "/");
  await page.getByRole("button", { name: /Wait forever/ }).click();
  await meta.getByText("Timed out").waitFor({ timeout: 10_000 });
  assert.doesNotMatch(await meta.innerText(), /-1/);
  await rm(join(dir, "release-slow"), { force: true });
  const first = await api("StartAction", { actionId: "slow" });
  const blocked = await api("StartAction", { actionId: "slow" });
  await page.goto(base + "/#/x/" + blocked.executionTrackingId);
  await meta.getByText("Blocked").waitFor();
  const notice = page.locator(".notice", { hasText: "Not run: slow is already running 1 time(s) and maxConcurrent is 1." });
  await notice.waitFor();
  const n = await notice.evaluate((el) => [el.scrollWidth, el.clientWidth]);
  assert.ok(n[0] <= n[1], "the reason is not cut off");
  await shot(page, "run-blocked");
  await api("KillAction", { executionTrackingId: first.executionTrackingId });
  await api("StartActionAndWait", { actionId: "sensor" });
  await api("StartActionAndWait", { actionId: "date" });
  await page.goto(base + "/#/logs");
  await page.locator(".loglist .badge").first().waitFor();
  const words = await page.locator(".loglist .badge").allInnerTexts();
  for (const w of ["Killed", "Timed out", "Blocked", "Succeeded", "Failed"]) assert.ok(words.some((x) => x.includes(w)), `${w} in ${words}`);
  assert.ok(!words.some((x) => /^(OK|Exit )/.test(x)), `${words}`);
  const desktop = await newPage(DESKTOP);
  await desktop.goto(base + "/#/x/" + blocked.executionTrackingId);
  await desktop.locator(".runmeta").getByText("Blocked").waitFor();
  assert.equal(await desktop.locator("pre.out").evaluate((el) => getComputedStyle(el).whiteSpace), "pre", "a desktop keeps the columns");
  assert.deepEqual([...page.errors, ...desktop.errors], []);
  await desktop.context().close();
  await page.context().close();
});

test("7. forms: required fields marked and checked first, refusals by title next to the field, the expected form explained", async () => {
  const page = await newPage(PHONE);
  await page.goto(base + "/#/a/tag");
  const host = page.getByLabel(/Host name/);
  await host.waitFor();
  assert.equal(await host.getAttribute("aria-required"), "true");
  await page.locator("label", { hasText: "Host name" }).getByText("required").waitFor();
  assert.equal(await page.getByLabel(/^Label/).getAttribute("aria-required"), null, "an argument that may be empty is not required");
  const before = (await runsOf("tag")).length;
  await page.getByRole("button", { name: "Run" }).click();
  const hostError = page.locator("#arg-host-err");
  await hostError.getByText("Host name is required").waitFor();
  assert.equal(await page.evaluate(() => document.activeElement.id), "arg-host");
  await page.getByRole("alert").getByText("Check Host name.").waitFor();
  // The tabs, the user box and the footer's links are 44 px tall to tap, as docs/web-page.md says.
  const small = await page.evaluate(() => [...document.querySelectorAll("#nav a, #user a, #user button, .foot a")]
    .filter((e) => e.offsetParent !== null)
    .map((e) => [e.textContent.trim(), Math.round(e.getBoundingClientRect().height)])
    .filter(([, height]) => height < 44));
  assert.deepEqual(small, [], "controls under 44 px");
  // Spaces alone are no answer to a required field.
  await host.fill("   ");
  await page.getByRole("button", { name: "Run" }).click();
  await hostError.getByText("Host name is required").waitFor();
  await page.getByLabel(/^Label/).fill("x");
  const labelError = page.locator("#arg-label-err");
  await labelError.getByText("Label is not in the expected form: Two to four small letters.").waitFor();
  assert.doesNotMatch(await labelError.innerText(), /\[a-z\]/);
  await shot(page, "form-required");
  assert.equal((await runsOf("tag")).length, before, "nothing was sent");
  // Each error goes with its cause.
  await host.fill("nas");
  await page.getByLabel(/^Label/).fill("ab");
  await labelError.waitFor({ state: "hidden" });
  await page.getByRole("alert").waitFor({ state: "hidden" });
  await page.getByRole("button", { name: "Run" }).click();
  // Opened by its address, not from a dashboard: the run shows in its place.
  await page.locator("pre.out").getByText("tagged nas ab").waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("8. the home-screen app is named after the board, scoped to its own path, and says when the board is unreachable", async () => {
  const manifest = await (await fetch(base + "/manifest.webmanifest")).json();
  assert.equal(manifest.name, "Raspberry Pi");
  assert.equal(manifest.short_name, "Raspberry Pi");
  const proxy = await startNginx(service.addr);
  try {
    const page = await newPage(PHONE);
    await page.goto(proxy.url + "/actiond/");
    await page.getByRole("heading", { name: "Status", exact: true }).waitFor();
    const cdp = await page.context().newCDPSession(page);
    const { appId } = await cdp.send("Page.getAppId");
    assert.equal(appId, proxy.url + "/actiond/", "the app's id is the page's own path");
    await page.context().close();
  } finally {
    await proxy.stop();
  }
  // The offline page, from the service worker (localhost is a secure context).
  const own = await mkdtemp(join(tmpdir(), "actiond-offline-"));
  const path = join(own, "config.yaml");
  await writeFile(path, "pageTitle: Raspberry Pi\nactions:\n  - {id: date, title: Show the date, shell: date}\n");
  let board = await startService(path);
  const page = await newPage(PHONE);
  try {
    await page.goto(board.url + "/");
    await page.getByRole("button", { name: /Show the date/ }).waitFor();
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.waitForFunction(() => !!navigator.serviceWorker.controller);
    await stopService(board.proc);
    await page.reload();
    await page.getByRole("heading", { name: "The board is unreachable" }).waitFor();
    await shot(page, "offline");
    board = await startService(path, board.addr);
    await page.getByRole("button", { name: /Show the date/ }).waitFor({ timeout: 30_000 });
    assert.deepEqual(page.errors.filter((e) => !/ERR_|Failed to fetch/.test(e)), []);
  } finally {
    await page.context().close();
    await stopService(board.proc);
    await rm(own, { recursive: true, force: true });
  }
});

/// axe-core's violations on the page as it is now, as "rule: target" lines.
async function axe(page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")} ${n.failureSummary.split("\n").slice(1, 2).join("")}`));
}

test("9. axe-core reports no violation on the main views in both themes; focus rings; outcomes said", async () => {
  await rm(join(dir, "release-slow"), { force: true });
  for (const scheme of ["light", "dark"]) {
    const page = await newPage(PHONE, scheme);
    const found = {};
    const check = async (name) => {
      found[name] = await axe(page);
    };
    await page.goto(base + "/");
    await page.getByRole("button", { name: /Read the sensor/ }).click();
    await page.locator('[data-binding="sensor"][data-state="fail"]').waitFor();
    await check("dashboard after a press");
    // Every control shows a focus ring: the action buttons too, under their own shadow.
    await page.keyboard.press("Tab");
    for (let i = 0; i < 40; i++) {
      // A ring is a visible change of the control's outline or shadow when it takes focus.
      const ring = await page.evaluate(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const look = () => {
          const s = getComputedStyle(el);
          return `${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor} | ${s.boxShadow}`;
        };
        const focused = look();
        el.blur();
        const blurred = look();
        el.focus();
        return { control: el.tagName + "." + el.className, focused, blurred };
      });
      if (ring) assert.notEqual(ring.focused, ring.blurred, `no focus ring on ${JSON.stringify(ring)}`);
      await page.keyboard.press("Tab");
    }
    await page.goto(base + "/#/d/Maintenance");
    await page.locator('[data-binding="restart"]').waitFor();
    await check("dashboard with locked buttons");
    await page.getByRole("button", { name: /Purge the cache/ }).click();
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByText(/Tick “.*” to confirm/).waitFor();
    await check("form with an error");
    await page.goto(base + "/");
    await page.getByRole("button", { name: /Wait forever/ }).click();
    await page.locator(".runmeta").getByText("Timed out").waitFor({ timeout: 10_000 });
    await check("run timed out");
    await page.goto(base + "/#/logs");
    await page.locator(".loglist li").first().waitFor();
    await check("history");
    await page.goto(base + "/#/login");
    await page.getByLabel("Username").waitFor();
    await check("login");
    await shot(page, `axe-${scheme}`);
    assert.deepEqual(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length)), {}, `${scheme}: axe-core violations`);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});
