// An OliveTin config copied over, in the browser: a broken action is a locked button ("Cannot
// run") with its reason under it while the others run, an Iconify icon shows as the title's
// letter (and the page asks nothing of the internet), an entity-fed argument offers one
// rendered choice per instance, and an entity fieldset carries its rendered class and the
// plain action linked in it. Screenshots go to out/migration-*.png.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launch, newPage, shot, startService, stopService } from "./browser.mjs";

const CONTAINERS = `{"Names":"web","Image":"nginx:latest","State":"running"}
{"Names":"db","Image":"postgres:16","State":"exited"}
`;

const CONFIG = `# copied from /etc/OliveTin/config.yaml
pageTitle: Garage
entities:
  - {file: containers.json, name: container}
actions:
  - title: Open garage
    id: garage_open
    icon: mdi:garage-open
    shell: echo opening
    timeout: 0
    popupOnStart: execution-dialog
  - title: Restart container
    id: restart_broken
    shell: echo restarting {{ Container }}
    arguments: [{name: container, type: ascii_identifier, default: web}]
  - title: Restart one
    id: restart
    exec: [echo, restarting, "{{ name }}"]
    popupOnStart: execution-dialog
    arguments:
      - name: name
        title: Container
        entity: container
        choices: [{value: '{{ container.Names }}', title: '{{ container.Names }} ({{ container.Image }})'}]
  - title: Logs of {{ container.Names }}
    id: logs
    entity: container
    shell: echo logs of {{ .CurrentEntity.Names }}
  - title: Prune images
    id: prune
    shell: echo pruned
dashboards:
  - title: Containers
    contents:
      - title: '{{ container.Names }}'
        type: fieldset
        entity: container
        cssClass: 'state-{{ container.State }}'
        contents:
          - title: Logs of {{ container.Names }}
          - title: Prune images
`;

let dir;
let child;
let base;
let browser;

before(async () => {
  browser = await launch();
  dir = await mkdtemp(join(tmpdir(), "actiond-migration-"));
  await writeFile(join(dir, "containers.json"), CONTAINERS);
  await writeFile(join(dir, "config.yaml"), CONFIG);
  const started = await startService(join(dir, "config.yaml"));
  child = started.proc;
  base = started.url;
});

after(async () => {
  if (browser) await browser.close();
  await stopService(child);
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("a broken action is locked with its reason, and an Iconify icon is a letter", async () => {
  const page = await newPage(browser, 390);
  await page.goto(base + "/#/d/Actions");
  const broken = page.getByRole("button", { name: /Restart container/ });
  await broken.waitFor();
  // aria-disabled: it keeps its focus, and says why.
  assert.equal(await broken.getAttribute("aria-disabled"), "true");
  await broken.getByText("Cannot run").waitFor();
  const tile = page.locator(".tile", { has: broken });
  const note = tile.locator("p.note");
  assert.match(await note.innerText(), /^Disabled by an error in the config: actions\[1\]\.shell: \{\{ Container \}\} names no argument; did you mean \{\{ container \}\}\?/);
  assert.match(await broken.getAttribute("title"), /did you mean/);
  const open = page.getByRole("button", { name: /Open garage/ });
  assert.equal(await open.isDisabled(), false);
  assert.equal(await open.locator(".icon.letter").innerText(), "O");
  await shot(page, "migration-disabled");
  await open.click();
  await page.waitForURL(/#\/x\//);
  await page.locator("pre.out").getByText("opening").waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("an entity-fed argument offers one rendered choice per instance", async () => {
  const page = await newPage(browser, 390);
  await page.goto(base + "/#/d/Actions");
  await page.getByRole("button", { name: /Restart one/ }).click();
  await page.waitForURL(/#\/a\/restart/);
  const select = page.getByLabel("Container");
  const options = await select.locator("option").evaluateAll((os) => os.filter((o) => o.value).map((o) => [o.value, o.textContent]));
  assert.deepEqual(options, [["web", "web (nginx:latest)"], ["db", "db (postgres:16)"]]);
  await shot(page, "migration-entity-choices");
  await select.selectOption("db");
  await page.getByRole("button", { name: "Run" }).click();
  await page.waitForURL(/#\/x\//);
  await page.locator("pre.out").getByText("restarting db").waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test("an entity fieldset carries its class and the plain action linked in it", async () => {
  const page = await newPage(browser, 390);
  await page.goto(base + "/#/d/Containers");
  const web = page.locator("section.fieldset.state-running");
  const db = page.locator("section.fieldset.state-exited");
  await web.getByRole("button", { name: /Logs of web/ }).waitFor();
  await db.getByRole("button", { name: /Logs of db/ }).waitFor();
  for (const fieldset of [web, db]) {
    assert.equal(await fieldset.getByRole("button", { name: /Prune images/ }).count(), 1);
  }
  await shot(page, "migration-fieldsets");
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
