// Not a test: makes the phone screenshots of README and docs/web-page.md (docs/phone-*.png) at 390 px, from a
// config of the Raspberry Pi board's kind whose commands print what a Pi prints (so nothing
// here reboots anything). Take them with an emoji font installed (Debian's
// fonts-noto-color-emoji), or the icons show as empty boxes.
//
//   node screenshots.mjs                  # into ../../docs
//   SHOTS=out/before ACTIOND_BIN=/path/to/older/actiond node screenshots.mjs
//
// The second form takes the same pictures of another build, to compare: where that build
// lacks what a picture is about, the picture shows what it shows instead.

import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BIN, launch, newPage, startService, stopService } from "./browser.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const SHOTS = resolve(here, process.env.SHOTS || "../../docs");
const PASSWORD = "raspberry";

const hash = execFileSync(BIN, ["hash-password"], { input: PASSWORD + "\n" }).toString().trim();
const CONFIG = `pageTitle: Raspberry Pi
killGracePeriod: 1
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
    policy: {showLogList: true}
authLocalUsers:
  enabled: true
  users:
    - {username: pi, usergroup: admins, password: '${hash}'}
actions:
  - {id: temperature, title: CPU temperature, acls: [status], icon: "&#127777;", shell: "echo temp=48.3 C"}
  - id: throttling
    title: Power and throttling
    acls: [status]
    icon: "&#9889;"
    shell: "echo throttled=0x0; echo 'OK: no under-voltage or throttling since boot'"
  - id: disk
    title: Disk usage
    acls: [status]
    icon: disk
    shell: |
      echo 'Filesystem      Size  Used Avail Use% Mounted on'
      echo '/dev/mmcblk0p2   29G  6.1G   22G  23% /'
      echo '/dev/mmcblk0p1  510M   61M  450M  12% /boot/firmware'
  - {id: memory, title: Memory, acls: [status], icon: "&#129504;", shell: "echo 'Mem: 3.7Gi total, 512Mi used, 2.9Gi free'"}
  - {id: uptime, title: Uptime and load, acls: [status], icon: clock, shell: "echo ' 21:43:07 up 12 days,  3:02,  0 users,  load average: 0.08, 0.12, 0.09'"}
  - id: logs
    title: Follow the log
    acls: [status]
    icon: "&#128220;"
    popupOnStart: execution-dialog
    timeout: 600
    shell: |
      for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "Nov 22 21:43:0$((i % 10)) raspberrypi systemd[1]: Started session $i of user pi."; done
      sleep 300
  - id: toggleGpio
    title: Toggle GPIO
    icon: light
    arguments:
      - {name: pin, title: GPIO line, default: "17", choices: [{value: "17", title: GPIO17 (header pin 11)}, {value: "27", title: GPIO27 (header pin 13)}]}
    shell: echo GPIO{{ pin }}=1
  - id: restartService
    title: Restart a service
    icon: restart
    arguments:
      - {name: service, title: Service, rejectNull: true, choices: [{value: ssh, title: SSH server}, {value: cron, title: Cron}]}
    exec: [echo, restarted, "{{ service }}"]
  - id: reboot
    title: Reboot
    icon: reboot
    arguments:
      - {type: confirmation, title: Reboot the Pi now?}
    exec: [echo, rebooting]
  - id: shutdown
    title: Shut down
    icon: "&#128721;"
    arguments:
      - {type: confirmation, title: Power off the Pi? It stays off until its power is cycled.}
    exec: [echo, powering off]
dashboards:
  - title: Status
    contents:
      - {title: CPU temperature}
      - {title: Power and throttling}
      - {title: Disk usage}
      - {title: Memory}
      - {title: Uptime and load}
      - {title: Follow the log}
  - title: Control
    contents:
      - {title: Toggle GPIO}
      - {title: Restart a service}
      - {title: Reboot}
      - {title: Shut down}
`;

const dir = await mkdtemp(join(tmpdir(), "actiond-shots-"));
await writeFile(join(dir, "config.yaml"), CONFIG);
await mkdir(SHOTS, { recursive: true });
const service = await startService(join(dir, "config.yaml"));
const browser = await launch();
const shoot = async (page, name) => {
  await page.waitForTimeout(400);
  await page.screenshot({ path: join(SHOTS, `phone-${name}.png`) });
  console.log(`${SHOTS}/phone-${name}.png`);
};
const tryShot = async (name, take) => {
  const page = await newPage(browser, 390);
  try {
    await take(page);
    await shoot(page, name);
  } catch (e) {
    // Another build may not have what the picture is about: it is taken as that build shows it.
    console.log(`phone-${name}.png: ${e.message.split("\n")[0]}`);
    if (process.env.SHOTS) await shoot(page, name);
  } finally {
    await page.context().close();
  }
};
try {
  // The answer to a press, on the status dashboard.
  await tryShot("status", async (page) => {
    await page.goto(service.url + "/");
    await page.getByRole("button", { name: /Disk usage/ }).click();
    await page.locator('[data-binding="disk"][data-state="ok"]').waitFor();
    await page.getByRole("button", { name: /CPU temperature/ }).click();
    await page.locator("#sheet").getByText("Succeeded").waitFor({ timeout: 5000 });
  });
  // A guest's view of the buttons that need a login.
  await tryShot("locked", async (page) => {
    await page.goto(service.url + "/#/d/Control");
    await page.locator('[data-binding="reboot"]').waitFor();
    await page.locator('[data-binding="reboot"]').getByText("Log in to run").waitFor({ timeout: 5000 });
  });
  // A run view while it runs, then killed.
  await tryShot("killed", async (page) => {
    await page.goto(service.url + "/");
    await page.getByRole("button", { name: /Follow the log/ }).click();
    await page.locator("pre.out").getByText("Started session 12").waitFor();
    await page.getByRole("button", { name: "Kill" }).click();
    await page.locator(".titles .badge", { hasText: "Killed" }).waitFor();
  });
  // A confirmed reboot: the form, logged in.
  await tryShot("confirm", async (page) => {
    await page.goto(service.url + "/#/login");
    await page.getByLabel("Username").fill("pi");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByTitle("Signed in as pi").waitFor();
    await page.goto(service.url + "/#/a/reboot");
    await page.getByLabel(/Reboot the Pi now/).waitFor();
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText(/Tick “.*” to confirm/).waitFor();
  });
} finally {
  await browser.close();
  await stopService(service.proc);
  await rm(dir, { recursive: true, force: true });
}
