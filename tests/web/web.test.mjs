// Browser tests of actiond's web page: Playwright (playwright-core, no browser download)
// driving Debian's chromium against the real binary (see browser.mjs for where each is).
//
// Run (see package.json):   npm ci && npm test
//
// The test starts the binary itself on 127.0.0.1:0 with a temporary config and state
// directory, learns the port from "listening on http://ADDR" on stderr, and stops it at the
// end. Actions that must still be running when the test looks at them wait for a file the
// test creates ("release"), so nothing here depends on the machine's speed.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, writeFile, rename, rm, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, afterNewRun, api as apiAt, launch, newPage as pageIn, shot, startService, stopService } from "./browser.mjs";

const PASSWORD = "correct horse battery staple";
// The default dashboard: the page opens on the first configured one (Workshop).
const ACTIONS = "/#/d/Actions";

let dir;
let passwordHash;
let child;
let base;
let browser;

function config(hash, extra = "") {
  return `# written by tests/web/web.test.mjs
pageTitle: Workshop panel
bannerMessage: "Maintenance window on Sunday 02:00"
killGracePeriod: 1
logHistoryPageSize: 4
# Diagnostics are off by default; these tests read them as everyone.
defaultPolicy: {showDiagnostics: true, showLogList: true}
authLocalUsers:
  enabled: true
  users:
    - {username: alice, usergroup: admins, password: '${hash}'}
actions:
  - id: live
    title: Live output
    icon: "&#128225;"
    popupOnStart: execution-dialog
    timeout: 60
    shell: |
      printf '\\033[1;32mfirst line\\033[0m from the board\\n'
      printf '\\033[33mwarning:\\033[0m disk 81%% full\\n'
      while [ ! -e release ]; do sleep 0.05; done
      echo second line
  - id: long
    title: Long job
    icon: "&#9203;"
    popupOnStart: execution-dialog
    timeout: 600
    shell: "echo working; sleep 300"
  - id: ping
    title: Ping a host
    icon: ping
    popupOnStart: execution-dialog
    shell: "echo pinging {{ host }} {{ count }} times"
    arguments:
      - {name: host, title: Host, type: ascii_identifier, default: example.com, description: "A host name or address."}
      - {name: count, title: Count, type: int, default: 3}
      - {name: mode, title: Mode, choices: [{value: fast, title: Fast}, {value: slow, title: Slow}], default: fast}
      - {name: tag, title: Tag, type: "regex:[a-z]{2,4}", default: ab, description: "Two to four small letters."}
  - id: quick
    title: Quick check
    icon: "&#9989;"
    shell: "echo all good"
  - id: broken
    title: Broken script
    icon: "&#128165;"
    shell: "echo 'no such device' >&2; exit 3"
  - id: backup
    title: Back up now
    icon: backup
    shell: "echo backed up"
  - id: restart
    title: Restart web server
    icon: restart
    shell: "echo restarted"
${extra}dashboards:
  - title: Workshop
    contents:
      - type: display
        title: >-
          <b>Heads up:</b> the garage door closes by itself after 5 minutes.<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><a href="javascript:window.pwned=3">details</a>
      - title: Garage
        contents:
          - title: Restart web server
`;
}

const api = (op, body, headers) => apiAt(base, op, body, headers);
const newPage = (width, scheme) => pageIn(browser, width, scheme);

before(async () => {
  browser = await launch();
  dir = await mkdtemp(join(tmpdir(), "actiond-web-"));
  const hash = execFileSync(BIN, ["hash-password"], { input: PASSWORD + "\n" }).toString().trim();
  assert.match(hash, /^\$argon2id\$/);
  await mkdir(join(dir, "state"));
  await writeFile(join(dir, "config.yaml"), config(hash) + "stateDirectory: state\n");
  passwordHash = hash;
  const started = await startService(join(dir, "config.yaml"));
  child = started.proc;
  base = started.url;
});

after(async () => {
  if (browser) await browser.close();
  await stopService(child);
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("the page is served gzipped, with a strong ETag, 304 on revalidation and cache rules", async () => {
  const r = await fetch(`${base}/`, { headers: { "Accept-Encoding": "gzip" } });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("content-encoding"), "gzip");
  assert.equal(r.headers.get("cache-control"), "no-cache");
  assert.match(r.headers.get("content-security-policy"), /default-src 'self'/);
  assert.equal(r.headers.get("cross-origin-opener-policy"), "same-origin");
  const etag = r.headers.get("etag");
  assert.match(etag, /^"[0-9a-f]{16}-gz"$/);
  const html = await r.text();
  const js = html.match(/"app\.js\?v=([0-9a-f]{16})"/);
  assert.ok(js, "index.html loads app.js by hash");
  const again = await fetch(`${base}/`, { headers: { "Accept-Encoding": "gzip", "If-None-Match": etag } });
  assert.equal(again.status, 304);
  const asset = await fetch(`${base}/app.js?v=${js[1]}`);
  assert.equal(asset.headers.get("cache-control"), "public, max-age=31536000, immutable");
  assert.equal(asset.headers.get("content-type"), "text/javascript; charset=utf-8");
  const missing = await fetch(`${base}/app.jsx`);
  assert.equal(missing.status, 404);
});

test("click an action and see its output live, before it finishes", async () => {
  const page = await newPage(360);
  await page.goto(base + ACTIONS);
  await page.getByRole("button", { name: /Live output/ }).click();
  // popupOnStart: execution-dialog opens the execution view.
  await page.waitForURL(/#\/x\//);
  const out = page.locator("pre.out");
  await out.getByText("first line").waitFor();
  await page.locator(".badge", { hasText: "Running" }).waitFor();
  // The ANSI colour arrived as a colour, not as escape codes.
  const colors = await out.getByText("first line").evaluate((el) => [getComputedStyle(el).color, getComputedStyle(el.parentElement).color]);
  assert.notEqual(colors[0], colors[1], "the green line has its own colour");
  assert.doesNotMatch(await out.innerText(), /\x1b|\[1;32m/);
  await page.locator(".runmeta").getByText("Running").waitFor();
  await shot(page, "run-live");
  await writeFile(join(dir, "release"), "");
  await page.locator(".badge", { hasText: "Succeeded" }).waitFor();
  await out.getByText("second line").waitFor();
  assert.match(await page.locator(".runmeta").innerText(), /✓ exit 0 · /);
  await shot(page, "run-done");
  // Back on the dashboard the button shows how the last run went.
  await page.locator("a.back").click();
  await page.locator('[data-binding="live"][data-state="ok"]').waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("kill a long run from its execution view", async () => {
  const page = await newPage(1280);
  await page.goto(base + ACTIONS);
  await page.getByRole("button", { name: /Long job/ }).click();
  await page.locator("pre.out").getByText("working").waitFor();
  const id = decodeURIComponent(page.url().split("#/x/")[1]);
  await page.getByRole("button", { name: "Kill" }).click();
  // Labelled as a kill, with who did it; "Stopping…" ends with the run.
  await page.locator(".badge", { hasText: "Killed" }).waitFor();
  await page.locator(".notice", { hasText: "Killed by guest." }).waitFor();
  // The outcome's word, not the -1 every ending the command did not choose shares.
  assert.match(await page.locator(".runmeta").innerText(), /^■ Killed · .* · guest · /);
  await page.locator("pre.out").getByText(/actiond: killed by guest/).waitFor();
  assert.equal(await page.getByText("Stopping…").count(), 0);
  const { logEntry } = await api("ExecutionStatus", { executionTrackingId: id });
  assert.equal(logEntry.executionFinished, true);
  assert.equal(logEntry.exitCode, -1);
  await page.getByRole("button", { name: "Run again" }).waitFor();
  await shot(page, "run-killed");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("an argument form refuses a bad value, with the reason, and runs a good one", async () => {
  for (const width of [360, 1280]) {
    const page = await newPage(width);
    await page.goto(base + ACTIONS);
    await page.getByRole("button", { name: /Ping a host/ }).click();
    await page.waitForURL(/#\/a\/ping/);
    const count = page.getByLabel("Count");
    assert.equal(await count.inputValue(), "3");
    assert.equal(await page.getByLabel("Mode").inputValue(), "fast");
    await count.fill("12a");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByRole("alert").getByText("Check Count.").waitFor();
    await page.getByText("Count must be a whole number").waitFor();
    assert.equal(await count.getAttribute("aria-invalid"), "true");
    await page.getByLabel("Host").fill("bad host!");
    // The server's own answer (ValidateArgumentType) shows up as the user types.
    await page.getByText("Host must be letters, digits, dots, underscores and hyphens only").waitFor();
    await shot(page, "form-error");
    assert.equal(page.url().includes("#/a/ping"), true, "nothing ran");
    await page.getByLabel("Host").fill("example.org");
    await count.fill("2");
    await page.getByLabel("Mode").selectOption("slow");
    await page.getByRole("button", { name: "Run" }).click();
    await page.waitForURL(/#\/x\//);
    await page.locator("pre.out").getByText("pinging example.org 2 times").waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("the server's refusal of a value the page let through is shown on the form", async () => {
  const page = await newPage(360);
  await page.goto(base + "/#/a/ping");
  // A `regex:` type is checked live by the server against the declared argument (by binding
  // id and name: no pattern travels in a request).
  await page.getByLabel("Tag").fill("x");
  // Its message explains the expected form by the argument's description, not the pattern.
  await page.getByText("Tag is not in the expected form (for example ab): Two to four small letters.").waitFor();
  // The page checks `regex:` types only through the server, so this value reaches StartAction,
  // whose refusal goes next to the field it names.
  await page.getByLabel("Tag").fill("TOOLONG");
  await page.getByRole("button", { name: "Run" }).click();
  await page.locator("#arg-tag-err").getByText("Tag is not in the expected form").waitFor();
  await page.getByRole("alert").getByText("Check Tag.").waitFor();
  assert.ok(page.url().includes("#/a/ping"), "nothing ran");
  // And the 64-bit range of int is checked before anything is sent.
  await page.getByLabel("Tag").fill("ok");
  await page.getByLabel("Count").fill("99999999999999999999");
  await page.getByRole("button", { name: "Run" }).click();
  await page.getByText("Count must be a whole number between").waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("log in and out", async () => {
  const page = await newPage(360);
  await page.goto(base + "/");
  await page.getByRole("link", { name: "Log in" }).click();
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("wrong password");
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("alert").getByText("do not match").waitFor();
  await shot(page, "login");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByTitle("Signed in as alice").waitFor();
  // No cookie, which the browser would send to every port of the board's name: the session
  // is in this origin's storage, under the page's path, and goes out in a header.
  assert.deepEqual(await page.context().cookies(), []);
  const stored = () => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("actiond-session:")).map((k) => [k, localStorage.getItem(k)]));
  const [[key, sid]] = await stored();
  assert.equal(key, "actiond-session:/");
  assert.match(sid, /^[0-9a-f-]{36}$/);
  // A second tab of the page is the same user; logging out in the first is seen there at once.
  const other = await page.context().newPage();
  await other.goto(base + "/");
  await other.getByTitle("Signed in as alice").waitFor();
  await page.getByRole("link", { name: "Actions", exact: true }).click();
  await page.getByRole("button", { name: /Quick check/ }).waitFor();
  await shot(page, "dashboard-alice");
  await page.getByRole("button", { name: "Log out" }).click();
  await page.getByRole("link", { name: "Log in" }).waitFor();
  assert.equal(await page.locator(".who").count(), 0);
  assert.deepEqual(await stored(), []);
  await other.getByRole("link", { name: "Log in" }).waitFor({ timeout: 5_000 });
  assert.equal(await other.locator(".who").count(), 0);
  // The ended session is no one's, whichever way it is sent.
  const who = await api("WhoAmI", {}, { "Actiond-Session": sid });
  assert.equal(who.authenticatedUser, "guest");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("when guests must log in, the page is a login form until they do", async () => {
  const own = await mkdtemp(join(tmpdir(), "actiond-web-gate-"));
  const path = join(own, "config.yaml");
  await writeFile(path, config(passwordHash).replace("killGracePeriod: 1\n", `killGracePeriod: 1
authRequireGuestsToLogin: true
accessControlLists:
  - {name: admins, matchUsergroups: [admins], addToEveryAction: true, permissions: {view: true, exec: true, logs: true, kill: true}}
`));
  const gated = await startService(path);
  const url = gated.url;
  try {
    const page = await newPage(360);
    await page.goto(url + "/");
    await page.waitForURL(/#\/login/);
    await page.getByText("asks everyone to log in").waitFor();
    assert.equal(await page.locator("#nav a").count(), 0, "no navigation before login");
    assert.equal(await page.locator("[data-binding]").count(), 0);
    await page.locator("#conn:not(.off)").waitFor({ state: "attached" });
    await shot(page, "login-required");
    // Typing another address does not get past the gate.
    await page.goto(url + "/#/logs");
    await page.waitForURL(/#\/login/);
    await page.getByLabel("Username").fill("alice");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByLabel("Password").press("Enter");
    await page.getByRole("link", { name: "Actions", exact: true }).click();
    await page.getByRole("button", { name: /Quick check/ }).click();
    await page.locator('[data-binding="quick"][data-state="ok"]').waitFor();
    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(/#\/login/);
    assert.equal(await page.locator("[data-binding]").count(), 0);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  } finally {
    await stopService(gated.proc);
    await rm(own, { recursive: true, force: true });
  }
});

test("page through the history", async () => {
  for (let i = 0; i < 9; i++) await api("StartActionAndWait", { actionId: i % 3 ? "quick" : "broken" });
  const { totalCount } = await api("GetLogs", { startOffset: 0 });
  const total = Number(totalCount);
  assert.ok(total >= 9);
  const page = await newPage(360);
  await page.goto(base + "/");
  await page.getByRole("link", { name: "History" }).click();
  await page.locator(".pager .count", { hasText: `1–4 of ${total}` }).waitFor();
  assert.equal(await page.locator(".loglist li").count(), 4);
  await shot(page, "history");
  await page.getByRole("link", { name: "Older ›" }).click();
  await page.locator(".pager .count", { hasText: `5–8 of ${total}` }).waitFor();
  await page.getByRole("link", { name: "Older ›" }).click();
  await page.locator(".pager .count", { hasText: `9–` }).waitFor();
  await page.getByRole("link", { name: "‹ Newer" }).click();
  await page.locator(".pager .count", { hasText: `5–8 of ${total}` }).waitFor();
  // A row opens its execution.
  await page.locator(".logrow").first().click();
  await page.waitForURL(/#\/x\//);
  await page.locator(".badge").first().waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("a button shows a run started elsewhere, live, and its failure", async () => {
  const page = await newPage(1280);
  await page.goto(base + ACTIONS);
  // An earlier test ran `broken` too: the button must show this run, live.
  await afterNewRun(page, "broken", "fail", () => api("StartActionAndWait", { actionId: "broken" }));
  await shot(page, "dashboard");
  const dark = await newPage(360, "dark");
  await dark.goto(base + ACTIONS);
  await dark.locator('[data-binding="broken"][data-state="fail"]').waitFor();
  await shot(dark, "dashboard-dark");
  await dark.context().close();
  const narrow = await newPage(360);
  await narrow.goto(base + ACTIONS);
  await narrow.locator('[data-binding="broken"][data-state="fail"]').waitFor();
  await shot(narrow, "dashboard");
  await narrow.context().close();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("a config change shows the new button without reloading the page", async () => {
  const page = await newPage(360);
  await page.goto(base + ACTIONS);
  await page.getByRole("button", { name: /Quick check/ }).waitFor();
  await page.evaluate(() => (window.__sameDocument = true));
  const extra = `  - id: fresh
    title: Freshly added
    icon: "&#10024;"
    shell: "echo new"
`;
  const tmp = join(dir, "config.yaml.tmp");
  await writeFile(tmp, config(passwordHash, extra) + "stateDirectory: state\n");
  await rename(tmp, join(dir, "config.yaml"));
  await page.getByRole("button", { name: /Freshly added/ }).waitFor({ timeout: 15_000 });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was not reloaded");
  await page.getByRole("button", { name: /Freshly added/ }).click();
  await page.locator('[data-binding="fresh"][data-state="ok"]').waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("the page reconnects after the service restarts and re-reads what it missed", async () => {
  const page = await newPage(360);
  await page.goto(base + ACTIONS);
  await page.locator("#conn.on").waitFor();
  await page.locator('[data-binding="backup"]').waitFor();
  assert.equal(await page.locator('[data-binding="backup"]').getAttribute("data-state"), "idle");
  // The page's reconnects fail until the test lets them through.
  await page.route("**/api/EventStream", (r) => r.abort("connectionrefused"));
  // Restart the service on the same address (the history lives in the state directory).
  await stopService(child);
  await page.locator("#conn.off", { hasText: "Reconnecting" }).waitFor();
  child = (await startService(join(dir, "config.yaml"), new URL(base).host)).proc;
  // This run starts and ends while the page cannot hear about it.
  await api("StartActionAndWait", { actionId: "backup" });
  await page.unroute("**/api/EventStream");
  await page.locator("#conn.on").waitFor({ timeout: 20_000 });
  await page.locator('[data-binding="backup"][data-state="ok"]').waitFor();
  assert.deepEqual(page.errors.filter((e) => !/ERR_CONNECTION_REFUSED|Failed to fetch|ERR_FAILED/.test(e)), []);
  await page.context().close();
});

test("a configured dashboard: a folder with back navigation, and display HTML made safe", async () => {
  for (const width of [360, 1280]) {
    const page = await newPage(width);
    await page.goto(base + "/");
    // The page opens on the first configured dashboard, not on the leftovers.
    await page.getByRole("heading", { name: "Workshop" }).waitFor();
    assert.equal(await page.locator('#nav a[aria-current="page"]').innerText(), "Workshop");
    await page.getByRole("link", { name: "Workshop", exact: true }).click();
    const display = page.locator(".display");
    await display.getByText("closes by itself").waitFor();
    assert.equal(await display.locator("b").innerText(), "Heads up:");
    assert.equal(await display.locator("script").count(), 0);
    assert.equal(await display.locator("img").getAttribute("onerror"), null);
    assert.equal(await display.locator("a").getAttribute("href"), null);
    assert.equal(await page.evaluate(() => window.pwned), undefined);
    await page.getByRole("link", { name: /Garage/ }).click();
    await page.getByRole("heading", { name: "Garage" }).waitFor();
    await page.getByRole("button", { name: /Restart web server/ }).click();
    await page.locator('[data-binding="restart"][data-state="ok"]').waitFor();
    await shot(page, "folder");
    await page.getByRole("link", { name: "Back" }).click();
    await page.getByRole("heading", { name: "Workshop" }).waitFor();
    // The action lives on its dashboard, not on the default one.
    await page.getByRole("link", { name: "Actions" }).click();
    await page.getByRole("button", { name: /Quick check/ }).waitFor();
    assert.equal(await page.locator('[data-binding="restart"]').count(), 0);
    assert.equal(await page.evaluate(() => window.pwned), undefined);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("diagnostics page", async () => {
  const page = await newPage(360);
  await page.goto(base + "/");
  await page.locator("#nav").getByRole("link", { name: "Diagnostics" }).click();
  await page.getByText("SSH key").waitFor();
  await page.getByRole("button", { name: "Make a report" }).click();
  await page.locator("pre.out").waitFor();
  await shot(page, "diagnostics");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
