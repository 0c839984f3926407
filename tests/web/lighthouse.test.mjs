// Lighthouse (npm, pinned in package-lock.json) on the demo page, as a phone sees it (its
// default: a mid-range phone on a slow 4G link, simulated), in Debian's chromium. The page
// must keep performance at 96 or more, accessibility and best practices at 100, and a
// cumulative layout shift under 0.01 (none, in practice). Nothing is downloaded:
// chrome-launcher starts $CHROMIUM, and every request of every run must stay on the board.
//
// Accessibility, best practices and layout shift do not depend on the machine, so every run
// must meet them. The performance score does: its blocking time is measured on this
// machine's CPU (scaled to a phone's), and on a CI machine shared with other jobs a run can
// lose ten points to a busy neighbour. So up to RUNS runs are made, and the stage passes when
// one of them meets every threshold: a page that got heavier fails them all. Each run's
// scores go to out/lighthouse.json, and the last run's report to out/lighthouse.html.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import lighthouse from "lighthouse";
import * as chromeLauncher from "chrome-launcher";
import { CHROMIUM, OUT, launch, startService, stopService } from "./browser.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const MIN_SCORE = { performance: 96, accessibility: 100, "best-practices": 100 };
const MAX_CLS = 0.01;
const RUNS = 5;

let service;
let chrome;

after(async () => {
  if (chrome) await chrome.kill();
  await stopService(service && service.proc);
});

test("Lighthouse, mobile, on the demo page: performance, accessibility, best practices, layout shift", async () => {
  // launch() checks the binary and the browser are there, and makes out/.
  await (await launch()).close();
  // The embedded demo config, from its source file: what a new install serves.
  service = await startService(resolve(here, "../../src/config/default.yaml"));
  chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu"] });
  const runs = [];
  let report = "";
  for (let i = 0; i < RUNS; i++) {
    const result = await lighthouse(service.url + "/", {
      port: chrome.port,
      output: "html",
      logLevel: "error",
      onlyCategories: Object.keys(MIN_SCORE),
    });
    const lhr = result.lhr;
    assert.equal(lhr.runtimeError, undefined, JSON.stringify(lhr.runtimeError));
    report = result.report;
    const scores = Object.fromEntries(Object.keys(MIN_SCORE).map((k) => [k, Math.round(lhr.categories[k].score * 100)]));
    const cls = lhr.audits["cumulative-layout-shift"].numericValue;
    const run = { ...scores, cls: Number(cls.toFixed(3)), tbtMs: Math.round(lhr.audits["total-blocking-time"].numericValue), lcpMs: Math.round(lhr.audits["largest-contentful-paint"].numericValue), benchmarkIndex: Math.round(lhr.environment.benchmarkIndex) };
    runs.push(run);
    console.log(`lighthouse run ${i + 1}: ${JSON.stringify(run)}`);
    // What never depends on the machine holds in every run.
    assert.ok(cls < MAX_CLS, `cumulative layout shift ${cls} (needs < ${MAX_CLS}): ${JSON.stringify(lhr.audits["layout-shifts"].details)}`);
    for (const k of ["accessibility", "best-practices"]) {
      const failed = lhr.categories[k].auditRefs.filter((r) => lhr.audits[r.id].score !== null && lhr.audits[r.id].score < 1).map((r) => r.id);
      assert.ok(scores[k] >= MIN_SCORE[k], `${k} ${scores[k]} (needs ${MIN_SCORE[k]}): ${failed.join(", ")}`);
    }
    const offBoard = lhr.audits["network-requests"].details.items.map((r) => r.url).filter((u) => !u.startsWith(service.url));
    assert.deepEqual(offBoard, [], "a request left the board");
    if (scores.performance >= MIN_SCORE.performance) break;
  }
  await writeFile(join(OUT, "lighthouse.json"), JSON.stringify(runs, null, 2) + "\n");
  await writeFile(join(OUT, "lighthouse.html"), report);
  const best = Math.max(...runs.map((r) => r.performance));
  assert.ok(best >= MIN_SCORE.performance, `performance ${best} at best in ${runs.length} runs (needs ${MIN_SCORE.performance}): ${JSON.stringify(runs)}`);
});
