// The page's looks.js, run in Node with tables of cases: which icons need the internet (the
// same table as the server's rule, config::is_online_icon), the letter that stands in for
// them, and the classes a component may carry.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const here = dirname(fileURLToPath(import.meta.url));
const source = readFileSync(resolve(here, "../../src/web/assets/looks.js"), "utf8");
const context = {};
vm.runInNewContext(source, context);
const { online, initial, classes, selector } = context.ActiondLooks;

test("icons that need the internet, by the server's rule", () => {
  const needInternet = ["mdi:garage", " mdi:garage-open ", "material-symbols:print-rounded", '<iconify-icon icon="carbon:awake"></iconify-icon>', "<ICONIFY-ICON icon='x:y'>"];
  const offline = ["&#128274;", "🔒", "ping", '<img src="custom-webui/x.png">', "<b>P</b>", "12:30", "Mdi:Garage", "a: b", "mdi:", "", null, undefined];
  for (const icon of needInternet) assert.equal(online(icon), true, icon);
  for (const icon of offline) assert.equal(online(icon), false, String(icon));
});

test("the letter that stands in for them", () => {
  const cases = [["Open garage", "O"], ["  wake", "W"], ["élan", "É"], ["🚗 Car", "🚗"], ["", "?"], ["   ", "?"], [undefined, "?"]];
  for (const [title, want] of cases) assert.equal(initial(title), want, String(title));
});

test("classes keep letters, digits, - and _ only", () => {
  const cases = [
    ["", []],
    [undefined, []],
    ["state-up", ["state-up"]],
    ["  big  danger ", ["big", "danger"]],
    ['x" onclick="evil()', ["x", "onclickevil"]],
    ["a.b#c", ["abc"]],
    ["state-{{ server.state }}", ["state-", "serverstate"]],
  ];
  for (const [css, want] of cases) assert.deepEqual([...classes(css)], want, String(css));
  assert.equal(selector("ping-down disabled"), ".ping-down.disabled");
  assert.equal(selector(""), "");
});
