// actiond's service worker, where the browser allows one (HTTPS, or localhost): when the
// board cannot be reached, opening the page (from the home screen above all) shows a page
// that says so and tries again, instead of the browser's error page. It answers nothing else:
// every other request (the API, the event stream, the page's files) goes to the board as if
// it were not there, and nothing of a user is ever kept. Registered by app.js by this fixed
// name, beside the page, so its scope is the page's own path (also under a sub-path).
"use strict";

// build.rs writes the offline page's hash here, so a new offline page is a new worker.
const OFFLINE = "offline.html?v=@v:offline.html@";
const CACHE = "actiond-offline-@v:offline.html@";

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.add(OFFLINE)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith("actiond-offline-") && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  if (event.request.mode !== "navigate") return;
  event.respondWith(fetch(event.request).catch(() => caches.match(OFFLINE, { cacheName: CACHE }).then((r) => r || Response.error())));
});
