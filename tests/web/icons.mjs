// Makes the page's PNG icons from src/web/assets/icon.svg, for the web manifest (home screen
// on Android and desktops) and apple-touch-icon (iOS), which want bitmaps. Run it after
// changing icon.svg and commit the PNGs it writes (build.rs embeds them like the other files):
//
//   cd tests/web && npm ci && node icons.mjs      # needs /usr/bin/chromium, and pngquant
//
// Chromium draws the SVG at each size (transparent outside the rounded square); pngquant
// then reduces each to a small palette, which keeps all four under 12 KB together. The
// maskable icon and the iOS one are full-bleed squares: the system cuts its own shape out of
// them, and the ring already sits inside the central safe circle (40 % of the size).

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const assets = resolve(here, "../../src/web/assets");
const svg = readFileSync(join(assets, "icon.svg"), "utf8");
const square = svg.replace(/ rx="[0-9.]+"/, "");

const icons = [
  ["icon-192.png", 192, svg],
  ["icon-512.png", 512, svg],
  ["icon-maskable-512.png", 512, square],
  ["apple-touch-icon.png", 180, square],
];

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  for (const [name, size, source] of icons) {
    const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
    const sized = source.replace("<svg ", `<svg width="${size}" height="${size}" `);
    await page.setContent(`<style>html,body{margin:0;background:transparent}svg{display:block}</style>${sized}`);
    const path = join(assets, name);
    await page.screenshot({ path, omitBackground: true });
    await page.close();
    execFileSync("pngquant", ["--force", "--strip", "--speed", "1", "--quality", "70-95", "--output", path, "16", path]);
    console.log(`${name}: ${readFileSync(path).length} bytes`);
  }
} finally {
  await browser.close();
}
