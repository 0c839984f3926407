// What the browser test files share: where the binary, the browser and the screenshots are,
// starting and stopping the binary, a page in a fresh browser context that records every
// error and every request that leaves the board, screenshots, and Connect calls from Node.
//
// Binary under test:        $ACTIOND_BIN, default ../../target/debug/actiond
// Browser:                  $CHROMIUM, default /usr/bin/chromium (never a downloaded one)
// Screenshots:              out/ beside this file (git-ignored), named <view>-<width>.png

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startService as startBinary } from "../service.mjs";

const here = dirname(fileURLToPath(import.meta.url));
export const BIN = resolve(process.env.ACTIOND_BIN || resolve(here, "../../target/debug/actiond"));
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const OUT = resolve(here, "out");

/// Starts the binary with `configPath` (127.0.0.1:0 unless `listen` says otherwise):
/// `{ proc, url, addr }`, the url with 127.0.0.1 for the host.
export async function startService(configPath, listen) {
  const started = await startBinary(BIN, configPath, listen);
  return { ...started, url: started.url.replace("0.0.0.0", "127.0.0.1") };
}

/// Stops a service started above and waits until it has exited.
export async function stopService(proc) {
  if (!proc || proc.exitCode !== null) return;
  proc.removeAllListeners("exit");
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGTERM");
  await exited;
}

export async function launch() {
  assert.ok(existsSync(BIN), `no binary at ${BIN}: run cargo build first`);
  assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM}: apt-get install chromium`);
  await mkdir(OUT, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
}

/// Phone widths get a phone's height and touch; wider ones a desktop window.
export async function newPage(browser, width = 360, scheme = "light") {
  const context = await browser.newContext({
    viewport: { width, height: width < 500 ? (width >= 390 ? 844 : 760) : 820 },
    deviceScaleFactor: 1,
    colorScheme: scheme,
    hasTouch: width < 500,
  });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // Chromium logs every 4xx answer as a console error; refusals are expected answers here.
  // It also reports the inline onerror of hostile `display` texts in the test configs, which
  // it tries while parsing the markup, before the sanitizer drops it: the page's
  // Content-Security-Policy refuses it (the configured-dashboard test checks nothing ran).
  const expected = /status of 4\d\d|^Executing inline event handler violates the following Content Security Policy/;
  page.on("console", (m) => m.type() === "error" && !expected.test(m.text()) && errors.push(m.text()));
  page.errors = errors;
  page.requests = [];
  // Every request the page makes must stay on the board.
  page.on("request", (req) => {
    const url = new URL(req.url());
    page.requests.push(url);
    if (url.protocol !== "data:" && url.hostname !== "127.0.0.1") errors.push(`off-board request: ${req.url()}`);
  });
  return page;
}

/// The link on the mark of `binding`'s button: the run it shows (null before any).
export async function markHref(page, binding) {
  await page.locator(`[data-binding="${binding}"]`).waitFor();
  return page.evaluate(([b]) => {
    const m = document.querySelector(`[data-binding="${b}"]`).parentElement.querySelector("a.mark");
    return m.getAttribute("href");
  }, [binding]);
}

/// Waits until the button of `binding` shows a run other than `before` (from `markHref`),
/// ended in `state`. Waiting for the state alone would be satisfied at once by an earlier run
/// that ended the same way (another width of the same test, another test on the service).
export async function newRunShown(page, binding, state, before) {
  await page.waitForFunction(
    ([b, before, state]) => {
      const button = document.querySelector(`[data-binding="${b}"]`);
      const m = button && button.parentElement.querySelector("a.mark");
      return !!m && m.getAttribute("href") !== before && m.dataset.state === state;
    },
    [binding, before, state],
  );
}

/// Runs `act` (a press, or a call from elsewhere) and waits as `newRunShown` does.
export async function afterNewRun(page, binding, state, act) {
  const before = await markHref(page, binding);
  await act();
  await newRunShown(page, binding, state, before);
}

export async function shot(page, name) {
  const w = page.viewportSize().width;
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(OUT, `${name}-${w}.png`), fullPage: true });
}

/// A Connect unary call from Node; throws on an error answer.
export async function api(base, op, body = {}, headers = {}) {
  const r = await fetch(`${base}/api/${op}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1", ...headers },
    body: JSON.stringify(body),
  });
  const json = await r.json();
  if (!r.ok) throw new Error(`${op}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}
