// The page as a board owner uses it: the board configs' kinds of action (stdout-only
// information actions that can fail, tables, a choice of service, reboot and shut down),
// two configured dashboards with a latest-output box, and the page behind nginx under a
// sub-path. Each test looks at a phone (390 px, or 360 px where the width is the point) and
// a desktop, and leaves screenshots of each state in out/.
//
// Runs that must still be going when the test looks wait for a file the test creates, so
// nothing here depends on the machine's speed.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startNginx } from "./nginx.mjs";
import { BIN, CHROMIUM, afterNewRun, api as apiAt, launch, markHref, newPage as pageIn, newRunShown, shot, startService, stopService } from "./browser.mjs";

const PASSWORD = "correct horse battery staple";
const TOKEN = "field-test-token-for-the-ci-bot";
const PHONE = 390;
const DESKTOP = 1280;

let dir;
let service;
let base;
let browser;

const api = (op, body, headers) => apiAt(base, op, body, headers);
const newPage = (width) => pageIn(browser, width);

function config(hash) {
  const sha = createHash("sha256").update(TOKEN).digest("hex");
  return `# written by tests/web/field.test.mjs
pageTitle: Raspberry Pi
killGracePeriod: 1
logHistoryPageSize: 20
# Diagnostics are off by default; these tests read them as everyone.
defaultPolicy: {showDiagnostics: true, showLogList: true}
authLocalUsers:
  enabled: true
  users:
    - {username: alice, usergroup: admins, password: '${hash}'}
authApiTokens:
  - {name: ci, sha256: ${sha}, username: ci-bot, usergroup: automation}
actions:
  - id: temperature
    title: CPU temperature
    icon: "&#127777;"
    popupOnStart: execution-dialog-stdout-only
    shell: "echo 'vcgencmd: not found, reading the thermal zone' >&2; echo 'temp=48.3 C'"
  - id: throttling
    title: Power and throttling
    icon: "&#9889;"
    popupOnStart: execution-dialog-stdout-only
    shell: |
      echo "sh: 1: vcgencmd: not found" >&2
      echo "vcgencmd failed (is /dev/vcio reachable?)" >&2
      exit 1
  - id: disk
    title: Disk usage
    icon: disk
    popupOnStart: execution-dialog-stdout-only
    shell: |
      cat <<'EOF'
      Filesystem      Size  Used Avail Use% Mounted on
      /dev/mmcblk0p2   29G  6.1G   22G  23% /
      /dev/mmcblk0p1  510M   61M  450M  12% /boot/firmware
      /dev/sda1       916G  402G  468G  47% /srv/backups-of-every-machine-in-the-house
      CONTAINER ID   IMAGE                          STATUS       PORTS                    NAMES
      3f2a1b9c8d7e   homeassistant/home-assistant   Up 2 days    0.0.0.0:8123->8123/tcp   homeassistant
      EOF
  - id: backups
    title: Check backups
    icon: backup
    shell: "echo 'last backup: 2026-11-20 03:00'; echo 'rsync: connection refused (nas.lan)' >&2; exit 12"
  - id: status_command
    title: Get status
    icon: "&#128202;"
    shell: 'n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count; echo "status check $n: all services up"'
  - id: restartService
    title: Restart a service
    icon: restart
    arguments:
      - name: service
        title: Service
        choices:
          - {value: ssh, title: SSH server}
          - {value: avahi-daemon, title: Avahi (pi.local name)}
          - {value: cron, title: Cron}
        rejectNull: true
    exec: [echo, restarting, "{{ service }}"]
  - id: reboot
    title: Reboot
    icon: reboot
    arguments:
      - {type: confirmation, title: Reboot the Pi now?}
    exec: [echo, rebooting]
  - id: shutdown
    title: Shut down
    icon: "&#128268;"
    arguments:
      - {type: confirmation, title: Power off the Pi?}
    exec: [echo, powering off]
  - id: wipe
    title: Wipe the cache
    icon: "&#129529;"
    shell: echo wiped
  - id: mixed
    title: Interleaved output
    icon: "&#128256;"
    popupOnStart: execution-dialog
    timeout: 120
    shell: |
      echo "out 1"
      until [ -e step1 ]; do sleep 0.05; done
      echo "err 1" >&2
      until [ -e step2 ]; do sleep 0.05; done
      echo "out 2"
  - id: long
    title: Long job
    icon: "&#9203;"
    popupOnStart: execution-dialog
    timeout: 600
    shell: "echo working; sleep 300"
  - id: report
    title: Weekly report
    icon: "&#128240;"
    popupOnStart: execution-dialog-output-html
    shell: "printf '<h2>Weekly report</h2><p>All <b>4</b> backups finished.</p><table><tr><th>Host</th><th>Size</th></tr><tr><td>nas</td><td>402 GB</td></tr></table>'"
  - id: options
    title: Clean up
    icon: "&#129529;"
    arguments:
      - {name: verbose, title: Verbose, type: checkbox}
      - name: parts
        title: What to clean
        type: checklist
        choices:
          - {value: apt, title: Package cache}
          - {value: logs, title: Old logs}
          - {value: docker, title: Unused Docker images}
    shell: "echo cleaning {{ parts }}"
dashboards:
  - title: Status
    contents:
      - {type: stdout-most-recent-execution, title: status_command}
      - {title: CPU temperature}
      - {title: Power and throttling}
      - {type: stdout-most-recent-execution, title: no_such_action}
      - {title: Disk usage}
      - {title: Check backups}
      - {title: Get status}
  - title: Maintenance
    contents:
      - title: Services
        type: fieldset
        contents:
          - {title: Restart a service}
          - {title: Reboot}
          - {title: Shut down}
          - {title: Wipe the cache, cssClass: danger}
`;
}

before(async () => {
  browser = await launch();
  dir = await mkdtemp(join(tmpdir(), "actiond-field-"));
  const hash = execFileSync(BIN, ["hash-password"], { input: PASSWORD + "\n" }).toString().trim();
  await writeFile(join(dir, "config.yaml"), config(hash));
  service = await startService(join(dir, "config.yaml"));
  base = service.url;
});

after(async () => {
  if (browser) await browser.close();
  await stopService(service && service.proc);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const both = [PHONE, DESKTOP];

/// No sideways scrolling of the page itself, whatever scrolls inside it.
async function assertNoPageOverflow(page) {
  const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(scroll <= width, `the page scrolls sideways: ${scroll} > ${width}`);
}

test("1. a failed run shows its stderr, even when the action shows stdout only", async () => {
  for (const width of both) {
    const page = await newPage(width);
    await page.goto(base + "/");
    await page.getByRole("button", { name: /Power and throttling/ }).click();
    await page.locator(".badge", { hasText: "Failed" }).waitFor();
    const out = page.locator("pre.out");
    await out.getByText("vcgencmd failed (is /dev/vcio reachable?)").waitFor();
    assert.match(await page.locator(".runmeta").innerText(), /✕ exit 1 · /);
    await shot(page, "stdout-only-failed");
    // A run that succeeds keeps to stdout, as its popupOnStart asks.
    await page.goto(base + "/");
    await page.getByRole("button", { name: /CPU temperature/ }).click();
    await page.locator(".badge", { hasText: "Succeeded" }).waitFor();
    await out.getByText("temp=48.3 C").waitFor();
    assert.doesNotMatch(await out.innerText(), /vcgencmd/);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("2. a tap on a button's mark opens its last run", async () => {
  for (const width of both) {
    const page = await newPage(width);
    await page.goto(base + "/");
    const button = page.locator('[data-binding="backups"]');
    const mark = button.locator("xpath=..").locator("a.mark");
    // popupOnStart: nothing: the page stays, the button gets its mark.
    await afterNewRun(page, "backups", "fail", () => button.click());
    assert.ok(!page.url().includes("#/x/"));
    assert.equal(await mark.getAttribute("aria-label"), "Failed: show the last run of Check backups");
    const box = await mark.boundingBox();
    assert.ok(box.width >= 44 && box.height >= 44, `the mark is ${box.width}×${box.height}`);
    await shot(page, "mark");
    await mark.click();
    await page.waitForURL(/#\/x\//);
    await page.locator("pre.out").getByText("rsync: connection refused (nas.lan)").waitFor();
    await page.locator("pre.out").getByText("last backup: 2026-11-20 03:00").waitFor();
    await shot(page, "mark-opened");
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("3. long lines wrap on a phone and keep their columns on a desktop, and the toggle is remembered", async () => {
  for (const width of both) {
    // On a phone a line cut off at the edge hides its end (a Use% column): lines wrap there.
    const [first, second] = width === PHONE ? ["pre-wrap", "pre"] : ["pre", "pre-wrap"];
    const page = await newPage(width);
    await page.goto(base + "/");
    await page.getByRole("button", { name: /Disk usage/ }).click();
    const out = page.locator("pre.out");
    await out.getByText("homeassistant/home-assistant").waitFor();
    const measure = () => out.evaluate((el) => ({ ws: getComputedStyle(el).whiteSpace, scroll: el.scrollWidth, client: el.clientWidth }));
    const looks = (m, ws) => {
      assert.equal(m.ws, ws);
      if (ws === "pre") assert.ok(m.scroll > m.client, `the table does not scroll: ${JSON.stringify(m)}`);
      else assert.ok(m.scroll <= m.client + 1, `wrapped output still scrolls: ${JSON.stringify(m)}`);
    };
    looks(await measure(), first);
    await assertNoPageOverflow(page);
    await shot(page, "table-" + first);
    const wrap = page.getByRole("button", { name: "Wrap lines" });
    assert.equal(await wrap.getAttribute("aria-pressed"), String(first === "pre-wrap"));
    await wrap.click();
    looks(await measure(), second);
    await assertNoPageOverflow(page);
    await shot(page, "table-" + second);
    // Remembered on this device.
    await page.reload();
    await out.getByText("homeassistant/home-assistant").waitFor();
    assert.equal(await page.getByRole("button", { name: "Wrap lines" }).getAttribute("aria-pressed"), String(second === "pre-wrap"));
    assert.equal((await measure()).ws, second);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("4. a latest-output box shows the newest run's output and keeps the grid whole", async () => {
  await api("StartActionAndWait", { actionId: "status_command" });
  for (const width of both) {
    const page = await newPage(width);
    await page.goto(base + "/");
    const box = page.locator(".recent");
    await box.getByText(/status check \d+: all services up/).waitFor();
    await box.getByRole("heading", { name: "Get status" }).waitFor();
    await box.locator("a.badge", { hasText: "Succeeded" }).waitFor();
    // One grid: the box is a row of it, and the box that names no action takes no room.
    assert.equal(await page.locator(".dash .grid").count(), 1);
    assert.equal(await page.locator(".dash .grid > .tile").count(), 5);
    assert.equal(await page.locator(".recent").count(), 1);
    await shot(page, "latest");
    // A new run, started elsewhere, shows up by itself.
    const before = await box.locator("pre").innerText();
    const n = Number(/status check (\d+)/.exec(before)[1]);
    await api("StartActionAndWait", { actionId: "status_command" });
    await box.getByText(`status check ${n + 1}: all services up`).waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("5. a killed run says Killed and by whom, and Stopping… ends with it", async () => {
  for (const width of both) {
    const page = await newPage(width);
    await page.goto(base + "/#/d/Actions");
    await page.getByRole("button", { name: /Long job/ }).click();
    await page.locator("pre.out").getByText("working").waitFor();
    const id = decodeURIComponent(page.url().split("#/x/")[1]);
    if (width === PHONE) {
      await page.getByRole("button", { name: "Kill" }).click();
      await page.locator(".notice", { hasText: "Killed by guest." }).waitFor();
    } else {
      // Killed by someone else: a script with an API token.
      await api("KillAction", { executionTrackingId: id }, { Authorization: "Bearer " + TOKEN });
      await page.locator(".notice", { hasText: "Killed by ci-bot." }).waitFor();
    }
    await page.locator(".titles .badge", { hasText: "Killed" }).waitFor();
    await page.getByRole("button", { name: "Run again" }).waitFor();
    assert.equal(await page.getByText("Stopping…").count(), 0);
    // This page followed the run from its start, so it knows the order of the two streams.
    await page.getByText("in the order written").waitFor();
    await shot(page, "killed");
    await page.goto(base + "/#/logs");
    await page.locator(".logrow").first().locator(".badge", { hasText: "Killed" }).waitFor();
    await page.goto(base + "/#/d/Actions");
    await page.locator('[data-binding="long"][data-state="killed"]').waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("6. a required choice starts empty, and destructive actions look it", async () => {
  for (const width of both) {
    const page = await newPage(width);
    await page.goto(base + "/#/d/Maintenance");
    await page.getByRole("heading", { name: "Maintenance" }).waitFor();
    const before = await markHref(page, "restartService");
    const danger = await page.locator("button.act").evaluateAll((bs) => Object.fromEntries(bs.map((b) => [b.dataset.binding, b.classList.contains("danger")])));
    assert.deepEqual(danger, { restartService: false, reboot: true, shutdown: true, wipe: true });
    const color = (id) => page.locator(`[data-binding="${id}"] .label`).evaluate((el) => getComputedStyle(el).color);
    assert.notEqual(await color("reboot"), await color("restartService"));
    await shot(page, "danger");
    await page.getByRole("button", { name: /Restart a service/ }).click();
    const service = page.getByLabel("Service");
    assert.equal(await service.inputValue(), "");
    assert.equal(await service.evaluate((s) => s.options[s.selectedIndex].text), "Choose…");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText("Service must be chosen").waitFor();
    assert.ok(page.url().includes("#/a/restartService"), "nothing ran");
    await shot(page, "choice-empty");
    await service.selectOption("cron");
    await page.getByRole("button", { name: "Run" }).click();
    await newRunShown(page, "restartService", "ok", before);
    const { logs } = await api("GetActionLogs", { actionId: "restartService", startOffset: 0 });
    assert.equal(logs[0].stdout, "restarting cron\n");
    // The form of a destructive action says so on its Run button too.
    // Waited for, not read at once: until the page has drawn the new form, the Run button
    // in the page is still the one of the form before it.
    await page.getByRole("button", { name: /Reboot/ }).click();
    await page.waitForURL(/#\/a\/reboot$/);
    await page.getByRole("button", { name: "Run" }).and(page.locator(".danger")).waitFor({ timeout: 5000 });
    await shot(page, "confirm-danger");
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("7. the page opens on the first configured dashboard, and the navigation scrolls", async () => {
  for (const width of [360, DESKTOP]) {
    const page = await newPage(width);
    await page.goto(base + "/");
    await page.getByRole("heading", { name: "Status", exact: true }).waitFor();
    const nav = page.locator("#nav");
    assert.equal(await nav.locator('[aria-current="page"]').innerText(), "Status");
    assert.deepEqual(await nav.locator("a").allInnerTexts(), ["Status", "Maintenance", "Actions", "History", "Diagnostics"]);
    await assertNoPageOverflow(page);
    const fits = (name) =>
      nav.evaluate((n, name) => {
        const a = [...n.querySelectorAll("a")].find((x) => x.textContent === name);
        const [box, link] = [n.getBoundingClientRect(), a.getBoundingClientRect()];
        return link.left >= box.left - 1 && link.right <= box.right + 1;
      }, name);
    if (width === DESKTOP) {
      assert.ok(await fits("Diagnostics"));
      assert.doesNotMatch((await nav.getAttribute("class")) || "", /more-/);
      await shot(page, "nav");
    } else {
      // The last tab is past the edge; the fade says so, and a swipe (or a click) gets there.
      assert.equal(await fits("Diagnostics"), false);
      assert.match(await nav.getAttribute("class"), /more-r/);
      await shot(page, "nav");
      await nav.getByRole("link", { name: "Diagnostics" }).click();
      await page.getByRole("heading", { name: "Diagnostics" }).waitFor();
      assert.ok(await fits("Diagnostics"), "the current tab is scrolled into view");
      assert.match(await nav.getAttribute("class"), /more-l/);
      await shot(page, "nav-scrolled");
    }
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

/// Width and height from a PNG's header.
function pngSize(bytes) {
  assert.equal(bytes.subarray(1, 4).toString(), "PNG");
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

test("8. the page installs to a home screen: manifest, icons, theme colour", async () => {
  for (const width of both) {
    // Chromium never offers to install a page in an incognito context, which is what a new
    // Playwright context is; a persistent one is a normal profile.
    const profile = await mkdtemp(join(tmpdir(), "actiond-profile-"));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu"],
      viewport: { width, height: width < 500 ? 844 : 820 },
    });
    try {
      const page = await context.newPage();
      await page.goto(base + "/");
      await page.getByRole("heading", { name: "Status", exact: true }).waitFor();
      const cdp = await context.newCDPSession(page);
      const manifest = await cdp.send("Page.getAppManifest");
      assert.deepEqual(manifest.errors, []);
      assert.equal(new URL(manifest.url).pathname, "/manifest.webmanifest");
      const data = JSON.parse(manifest.data);
      assert.equal(data.display, "standalone");
      // Named after the board, so two boards on one home screen are told apart.
      assert.equal(data.name, "Raspberry Pi");
      const { installabilityErrors } = await cdp.send("Page.getInstallabilityErrors");
      assert.deepEqual(installabilityErrors, []);
      const icons = [...data.icons, { src: await page.locator('link[rel="apple-touch-icon"]').getAttribute("href"), sizes: "180x180" }];
      for (const icon of icons) {
        const r = await fetch(new URL(icon.src, manifest.url));
        assert.equal(r.status, 200, icon.src);
        assert.equal(r.headers.get("content-type"), "image/png");
        assert.deepEqual(pngSize(Buffer.from(await r.arrayBuffer())), icon.sizes.split("x").map(Number), icon.src);
      }
      assert.equal(await page.locator('meta[name="theme-color"]').count(), 2);
      await page.screenshot({ path: join("out", `install-${width}.png`) });
    } finally {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    }
  }
});

test("9. the page works behind nginx under a sub-path", async () => {
  const proxy = await startNginx(service.addr);
  try {
    // Without the trailing slash, nginx sends the browser to the address with it.
    const bare = await fetch(`${proxy.url}/actiond`, { redirect: "manual" });
    assert.equal(bare.status, 301);
    assert.match(bare.headers.get("location"), /\/actiond\/$/);
    for (const width of both) {
      const page = await newPage(width);
      await page.goto(proxy.url + "/actiond/");
      await page.getByRole("heading", { name: "Status", exact: true }).waitFor();
      await page.locator("#conn.on").waitFor();
      // Live output through the proxy, then a kill.
      await page.getByRole("link", { name: "Actions", exact: true }).click();
      await page.getByRole("button", { name: /Long job/ }).click();
      await page.locator("pre.out").getByText("working").waitFor();
      await page.locator(".badge", { hasText: "Running" }).waitFor();
      await page.getByRole("button", { name: "Kill" }).click();
      await page.locator(".titles .badge", { hasText: "Killed" }).waitFor();
      // Logging in keeps a session the proxied page sends back, in its header.
      await page.getByRole("link", { name: "Log in" }).click();
      await page.getByLabel("Username").fill("alice");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByTitle("Signed in as alice").waitFor();
      await page.getByRole("heading", { name: "Status", exact: true }).waitFor();
      await shot(page, "subpath");
      const outside = page.requests.filter((u) => u.protocol !== "data:" && !u.pathname.startsWith("/actiond/"));
      assert.deepEqual(outside.map(String), [], "every request goes through the sub-path");
      assert.deepEqual(page.errors, []);
      await page.context().close();
    }
  } finally {
    await proxy.stop();
  }
});

test("10. smaller things: checkboxes line up, HTML output has the page's font, the footer stays in the page", async () => {
  for (const width of both) {
    const page = await newPage(width);
    await page.goto(base + "/#/a/options");
    // The form is drawn after the catalogue arrives; measuring before that measures nothing.
    await page.waitForFunction(() => document.querySelectorAll('input[type="checkbox"]').length === 4);
    // Every box in one column, the same gap to its text, and centred on it.
    const boxes = await page.locator('input[type="checkbox"]').evaluateAll((xs) =>
      xs.map((x) => {
        const [b, t] = [x.getBoundingClientRect(), x.nextElementSibling.getBoundingClientRect()];
        return { left: Math.round(b.left), gap: Math.round(t.left - b.right), off: Math.round(b.top + b.height / 2 - (t.top + t.height / 2)) };
      }),
    );
    assert.equal(boxes.length, 4);
    assert.equal(new Set(boxes.map((b) => `${b.left} ${b.gap}`)).size, 1, JSON.stringify(boxes));
    assert.ok(boxes.every((b) => Math.abs(b.off) <= 1), JSON.stringify(boxes));
    await shot(page, "checkboxes");
    await page.goto(base + "/#/d/Actions");
    await page.getByRole("button", { name: /Weekly report/ }).click();
    const frame = page.frameLocator("iframe.htmlout");
    await frame.getByText("backups finished").waitFor();
    const font = await frame.locator("body").evaluate((b) => getComputedStyle(b).fontFamily);
    assert.match(font, /system-ui/);
    await shot(page, "html-output");
    const links = await page.locator("#foot a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    assert.deepEqual(links, ["#/diag"]);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test("10. stdout and stderr in the order they were written, or a word that the order is unknown", async () => {
  for (const width of both) {
    await rm(join(dir, "step1"), { force: true });
    await rm(join(dir, "step2"), { force: true });
    const page = await newPage(width);
    await page.goto(base + "/#/d/Actions");
    await page.getByRole("button", { name: /Interleaved output/ }).click();
    const out = page.locator("pre.out");
    await out.getByText("out 1").waitFor();
    await writeFile(join(dir, "step1"), "");
    await out.getByText("err 1").waitFor();
    await writeFile(join(dir, "step2"), "");
    await page.locator(".titles .badge", { hasText: "Succeeded" }).waitFor();
    await out.getByText("out 2").waitFor();
    assert.equal((await out.innerText()).trim(), "out 1\nerr 1\nout 2");
    assert.equal((await out.locator(".err").innerText()).trim(), "err 1");
    await page.getByText("in the order written").waitFor();
    await shot(page, "interleaved");
    // A page that did not watch the run cannot know the order, and says so.
    const later = await newPage(width);
    await later.goto(page.url());
    await later.locator(".titles .badge", { hasText: "Succeeded" }).waitFor();
    assert.match((await later.locator("pre.out").innerText()).trim(), /^out 1\nout 2\n+stderr\s*err 1$/i);
    await later.getByText("their order is known only for runs this page watched").waitFor();
    await shot(later, "not-interleaved");
    assert.deepEqual([...page.errors, ...later.errors], []);
    await later.context().close();
    await page.context().close();
  }
});

test("10. marks of runs the service no longer has go when it restarts without its history", async () => {
  const own = await mkdtemp(join(tmpdir(), "actiond-forget-"));
  const path = join(own, "config.yaml");
  await writeFile(path, "actions:\n  - {id: quick, title: Quick check, icon: '&#9989;', shell: echo fine}\n");
  let first = await startService(path);
  const pages = [];
  try {
    for (const width of both) {
      const page = await newPage(width);
      await page.goto(first.url + "/");
      await afterNewRun(page, "quick", "ok", () => page.getByRole("button", { name: /Quick check/ }).click());
      pages.push(page);
    }
    // No state directory: the new service starts with an empty history.
    await stopService(first.proc);
    first = await startService(path, first.addr);
    for (const page of pages) {
      await page.locator('[data-binding="quick"][data-state="idle"]').waitFor({ timeout: 20_000 });
      assert.equal(await page.locator("a.mark").isHidden(), true);
      await page.locator("#conn.on").waitFor();
      await shot(page, "after-restart");
      assert.deepEqual(page.errors.filter((e) => !/ERR_CONNECTION_REFUSED|Failed to fetch|ERR_FAILED|ERR_EMPTY_RESPONSE/.test(e)), []);
      await page.context().close();
    }
  } finally {
    await stopService(first.proc);
    await rm(own, { recursive: true, force: true });
  }
});
