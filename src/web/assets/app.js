// actiond's web page. Plain JavaScript, no framework, no build step: it is served as written
// (gzipped once at build time) and talks only to actiond's public API on the same origin:
// Connect unary calls as JSON over fetch, and the EventStream read with a streaming fetch.
//
// Safety rule for the whole file: text from the server (titles, output, descriptions, user
// names) is put into the page with textContent or text nodes, never as markup. Only values
// the config declares as HTML (icons, `display` components, `html` arguments) go through
// `sanitize` (looks.js), which keeps an allow-list of tags and attributes and drops
// everything else.
"use strict";

(() => {
  // A page that opened this tab (window.open) keeps no handle back to it from here.
  try {
    window.opener = null;
  } catch {
    // read-only in some browser: nothing to drop
  }

  // ---------------------------------------------------------------------------------------
  // Small DOM helpers
  // ---------------------------------------------------------------------------------------

  const $ = (sel, root = document) => root.querySelector(sel);

  // h("button.act", {onclick, "aria-label": "x"}, child, …): children are nodes or text.
  function h(spec, attrs, ...children) {
    const [tag, ...classes] = spec.split(".");
    const el = document.createElement(tag || "div");
    if (classes.length) el.className = classes.join(" ");
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "text") el.textContent = v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else if (k === "value") el.value = v;
      else if (k === "checked") el.checked = !!v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  const enc = encodeURIComponent;
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // Endings, the order of the two streams and ANSI colours live in output.js; icons' stand-ins
  // and classes in looks.js.
  const { ending, MARK, order } = ActiondOutput;
  const Looks = ActiondLooks;
  // HTML from the config goes through looks.js's allow-list sanitizer.
  const { sanitize, safeUrl } = Looks;

  // An icon is HTML from the config; one that needs the internet gets its title's first letter
  // in a circle instead (looks.js).
  function icon(html, cls = "icon", title = "") {
    if (Looks.online(html)) return h("span." + cls + ".letter", { "aria-hidden": "true" }, h("span", {}, Looks.initial(title)));
    return h("span." + cls, { "aria-hidden": "true" }, sanitize(html));
  }

  // ---------------------------------------------------------------------------------------
  // The API: Connect unary calls as JSON
  // ---------------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(code, message, status) {
      super(message || code);
      this.code = code;
      this.status = status;
    }
  }

  // The session lives in this origin's storage and goes out in a header the page adds
  // itself, never in a cookie: a browser sends a cookie to every port of the board's name, so
  // any other web service on the board (a router page, a NAS app) would receive it. Storage is
  // per origin (scheme, name and port), and keyed by the page's path, so two actiond behind
  // one proxy under different sub-paths keep apart. A login sends the header with "new" to
  // ask for its session in the answer's header.
  const SESSION_HEADER = "Actiond-Session";
  const SESSION_KEY = "actiond-session:" + location.pathname.replace(/[^/]*$/, "");
  function storedSession() {
    try {
      return localStorage.getItem(SESSION_KEY);
    } catch {
      return null; // storage refused (a private mode): the user stays a guest
    }
  }
  function keepSession(sid) {
    try {
      if (sid) localStorage.setItem(SESSION_KEY, sid);
      else localStorage.removeItem(SESSION_KEY);
    } catch {
      // storage refused: nothing is kept, which is the safe side
    }
  }
  function withSession(headers) {
    headers[SESSION_HEADER] = storedSession() || "new";
    return headers;
  }

  // A call that gets no answer in this time is given up: a connection that stopped carrying
  // packets without closing (a stale socket on a phone) would otherwise hold it for minutes.
  const CALL_TIMEOUT = 20000;

  // Addresses are relative to the page (api/…, not /api/…), so a reverse proxy may serve it
  // under a sub-path. `quiet` calls leave a refusal to the caller instead of showing the login.
  // An answer that arrives after the page forgot its user (a logout, a session that ended) is
  // dropped: it belongs to the previous user.
  async function call(op, body = {}, quiet = false) {
    const epoch = S.epoch;
    let r;
    let json;
    const headers = withSession({ "Content-Type": "application/json", "Connect-Protocol-Version": "1" });
    // Logout forgets the session before it is sent: its answer may never be read (the ended
    // session ends this tab's event stream first, which starts the page over).
    if (op === "Logout") keepSession(null);
    try {
      r = await fetch("api/" + op, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        // No cookie: the page's session travels in the Actiond-Session header only. Login
        // and Logout send one an older page may have left, for the service to end it and
        // clear it from the browser.
        credentials: op === "LocalUserLogin" || op === "Logout" ? "same-origin" : "omit",
        cache: "no-store",
        signal: AbortSignal.timeout(CALL_TIMEOUT),
      });
      json = await r.json().catch(() => null);
    } catch {
      throw new ApiError("unavailable", "actiond cannot be reached. Check the network and try again.", 0);
    }
    if (epoch !== S.epoch) throw new ApiError("aborted", "the page forgot the user this was asked for", 0);
    if (op === "LocalUserLogin" && r.ok) keepSession(r.headers.get(SESSION_HEADER));
    if (!r.ok) {
      const e = new ApiError((json && json.code) || "unknown", (json && json.message) || "HTTP " + r.status, r.status);
      if (e.code === "unauthenticated" && S.init && !quiet && op !== "LocalUserLogin") needLogin();
      throw e;
    }
    return json || {};
  }

  // ---------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------

  const MAX_RUNS = 200; // executions remembered by the page
  const MAX_LIVE = 512 * 1024; // characters of live output kept per execution

  const S = {
    init: null,
    dashboards: new Map(), // title → dashboard message
    actions: new Map(), // bindingId → Action message
    runs: new Map(), // trackingId → {entry, chunks, size, dropped, trimmed, ordered, whole, seen}
    last: new Map(), // bindingId → trackingId of its newest run
    view: null, // {update(kind, id)} of the view on screen
    stream: null, // AbortController of the event stream
    live: false,
    danger: new Set(), // bindingIds a dashboard shows as dangerous
    epoch: 0, // counts the times the page forgot its user (forgetAll)
    afterLogin: null, // {to, binding}: where a locked button's login returns to
    watch: null, // {id, title, icon, until}: a dangerous run that may take the board away
    noKill: new Set(), // bindingIds whose runs actiond refused this caller to kill
    unsure: new Map(), // bindingId → {id, key, unknown}: a press on its way, or whose answer did not arrive
  };

  // Records an entry. A finished entry never goes back to running: events and re-reads may
  // arrive in either order. While a run goes on, `chunks` collects its live output as it
  // arrives; when it ends, they give the order in which stdout and stderr were written
  // (`ordered`, null when this page did not see all of it) and are let go. `whole` says the
  // page has had every chunk so far: it knew the run from its start (its executionStarted
  // event, or its own StartAction) and the event stream has not dropped since.
  function upsert(entry, fromStart = false) {
    const id = entry.executionTrackingId;
    let run = S.runs.get(id);
    if (!run) {
      run = { entry: null, chunks: [], size: 0, dropped: 0, trimmed: false, ordered: null, whole: fromStart, seen: Date.now() };
      S.runs.set(id, run);
      prune();
    }
    if (run.entry && run.entry.executionFinished && !entry.executionFinished) return run;
    // Timed here to the millisecond when this page saw the run start and end.
    if (!entry.executionFinished && fromStart && !run.t0) run.t0 = Date.now();
    const ends = entry.executionFinished && !(run.entry && run.entry.executionFinished);
    if (ends && run.t0 && run.whole) run.t1 = Date.now();
    run.entry = entry;
    // A run this page started is announced when it ends, wherever the user is.
    if (ends && run.mine) sheet.say(sheet.sentence(run));
    if (entry.executionFinished && run.chunks) {
      run.ordered = run.trimmed ? null : order(run.chunks, entry.stdout || "", entry.stderr || "");
      run.chunks = null;
    }
    const prev = S.last.get(entry.actionId);
    const prevRun = prev && S.runs.get(prev);
    if (!prevRun || !prevRun.entry || prev === id || startRank(entry) >= startRank(prevRun.entry)) {
      S.last.set(entry.actionId, id);
    }
    notify("run", id, entry.actionId);
    if (S.unsure.size) heard(id, entry.actionId);
    return run;
  }

  // Server times compare as text; an entry without a start time yet is the newest.
  const startRank = (e) => e.datetimeStarted || "9999";

  function prune() {
    if (S.runs.size <= MAX_RUNS) return;
    const keep = new Set(S.last.values());
    for (const [id, run] of S.runs) {
      if (S.runs.size <= MAX_RUNS) break;
      if (!keep.has(id) && run.entry && run.entry.executionFinished) S.runs.delete(id);
    }
  }

  function notify(kind, id, bindingId) {
    if (bindingId) for (const b of document.querySelectorAll("[data-binding]")) if (b.dataset.binding === bindingId) paintButton(b);
    if (S.view && S.view.update) S.view.update(kind, id, bindingId);
    if (id) sheet.update(id);
  }

  // ---------------------------------------------------------------------------------------
  // The event stream: Connect server streaming over a streaming fetch, with reconnects
  // ---------------------------------------------------------------------------------------

  // One envelope: flag 0, length 2 (big-endian), then "{}".
  const REQUEST_ENVELOPE = new Uint8Array([0, 0, 0, 0, 2, 123, 125]);

  // The service sends a keep-alive (an output chunk of no run) on a stream quiet for 5 s, so
  // a stream that carried nothing for this long is dead, not quiet: a board that lost power, a
  // stale socket, a proxy that stopped forwarding without closing. It is dropped and opened
  // anew.
  const SILENT = 11000;

  async function streamLoop(ctrl) {
    let delay = 500;
    let first = true;
    while (!ctrl.signal.aborted) {
      let failure = null;
      const attempt = new AbortController();
      const stop = () => attempt.abort();
      ctrl.signal.addEventListener("abort", stop);
      let dog = null;
      const pet = () => {
        clearTimeout(dog);
        dog = setTimeout(stop, SILENT);
      };
      S.petStream = pet;
      pet();
      try {
        const r = await fetch("api/EventStream", {
          method: "POST",
          headers: withSession({ "Content-Type": "application/connect+json", "Connect-Protocol-Version": "1" }),
          body: REQUEST_ENVELOPE,
          credentials: "omit",
          cache: "no-store",
          signal: attempt.signal,
        });
        if (!r.ok || !r.body) throw new ApiError("unavailable", "event stream answered HTTP " + r.status);
        pet();
        setLive(true);
        // The subscription exists once the headers are here, so re-reading now misses nothing.
        resync(!first);
        first = false;
        await readEnvelopes(r.body.getReader(), () => {
          delay = 500;
          pet();
        });
      } catch (e) {
        failure = e;
      } finally {
        clearTimeout(dog);
        ctrl.signal.removeEventListener("abort", stop);
      }
      setLive(false);
      if (ctrl.signal.aborted) return;
      if (failure && failure.code === "unauthenticated") return sessionEnded();
      await Promise.race([sleep(delay * (0.75 + Math.random() / 2)), wake()]);
      delay = Math.min(delay * 2, 15000);
    }
  }

  let waker = null;
  const wake = () => new Promise((r) => (waker = r));

  async function readEnvelopes(reader, onData) {
    const decoder = new TextDecoder();
    let buf = new Uint8Array(0);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new ApiError("unavailable", "event stream closed");
      onData();
      const joined = new Uint8Array(buf.length + value.length);
      joined.set(buf);
      joined.set(value, buf.length);
      buf = joined;
      while (buf.length >= 5) {
        const len = new DataView(buf.buffer, buf.byteOffset).getUint32(1);
        if (buf.length < 5 + len) break;
        const flags = buf[0];
        const msg = JSON.parse(decoder.decode(buf.subarray(5, 5 + len)) || "{}");
        buf = buf.slice(5 + len);
        if (flags & 2) {
          const e = msg.error;
          throw new ApiError(e ? e.code : "unavailable", e ? e.message : "event stream ended");
        }
        onEvent(msg);
      }
    }
  }

  function onEvent(m) {
    if (m.executionStarted) upsert(m.executionStarted.logEntry, true);
    else if (m.executionFinished) upsert(m.executionFinished.logEntry);
    else if (m.outputChunk) {
      const c = m.outputChunk;
      const run = S.runs.get(c.executionTrackingId);
      if (!run || !run.chunks) return;
      run.chunks.push(c.output);
      run.size += c.output.length;
      // Past the bound the older half goes, and with it the chance to know the order.
      if (run.size > MAX_LIVE) {
        while (run.size > MAX_LIVE / 2 && run.chunks.length > 1) {
          run.size -= run.chunks.shift().length;
          run.dropped++;
        }
        run.trimmed = true;
      }
      notify("output", c.executionTrackingId);
    } else if (m.configChanged) reloadCatalog(true);
    else if (m.entityChanged) reloadCatalog(false);
  }

  function setLive(live) {
    const was = S.live;
    S.live = live;
    // Chunks published while the stream is down are lost to this page.
    if (!live) for (const run of S.runs.values()) run.whole = false;
    // A dangerous run this page started, then the board went away: most likely a reboot.
    if (!live && was && S.watch && Date.now() < S.watch.until) {
      sheet.away(S.watch.title, S.watch.icon);
      S.watch = null;
    }
    if (live && !was && sheet.isAway()) sheet.back();
    const el = $("#conn");
    el.className = "conn " + (live ? "on" : "off");
    el.textContent = live ? "" : "Reconnecting…";
    el.title = live ? "Live: updates arrive as they happen" : "The live connection dropped; reconnecting";
    // Without the stream, running executions this page shows are polled instead.
    if (!live) pollRunning();
  }

  let polling = false;
  async function pollRunning() {
    if (polling) return;
    polling = true;
    while (!S.live && S.init && !S.init.loginRequired) {
      await sleep(2000);
      const running = [...S.runs.entries()].filter(([, r]) => r.entry && !r.entry.executionFinished).map(([id]) => id);
      for (const id of running) await refreshRun(id).catch(() => {});
    }
    polling = false;
  }

  // After a (re)connect: re-read what may have happened while the stream was down. A mark
  // whose run the service no longer knows (it restarted without keeping its history) goes.
  // After a reconnect the page also asks who it is now: a session that ended meanwhile (it
  // expired, or was ended elsewhere) makes it forget its user.
  async function resync(again) {
    if (again) {
      try {
        const i = await call("Init", {}, true);
        if (i.authenticatedUser !== S.init.authenticatedUser || i.authenticatedUserProvider !== S.init.authenticatedUserProvider) return sessionEnded();
        S.init = i;
        chrome();
      } catch {
        // The stream's next drop brings the page here again.
      }
    }
    const running = [...S.runs.entries()].filter(([, r]) => r.entry && !r.entry.executionFinished).map(([id]) => id);
    await Promise.all(running.map((id) => refreshRun(id).catch(() => {})));
    const listed = await loadRecent();
    const unlisted = [...new Set(S.last.values())].filter((id) => !listed.has(id) && S.runs.has(id));
    await Promise.all(unlisted.map((id) => refreshRun(id).catch(() => {})));
    if (S.dashboards.size) await reloadCatalog(false);
    if (S.view && S.view.update) S.view.update("resync");
  }

  async function refreshRun(id) {
    try {
      const r = await call("ExecutionStatus", { executionTrackingId: id });
      const run = upsert(r.logEntry);
      run.listed = false;
      return run;
    } catch (e) {
      if (e.code === "not_found") forget(id);
      throw e;
    }
  }

  function forget(id) {
    const run = S.runs.get(id);
    const binding = run && run.entry && run.entry.actionId;
    S.runs.delete(id);
    if (binding && S.last.get(binding) === id) S.last.delete(binding);
    notify("run", id, binding);
  }

  // The newest runs (one page of GetLogs), for the buttons' marks; the set of their ids.
  // Without the logs permission the buttons just start idle.
  async function loadRecent(page) {
    page = await (page || call("GetLogs", { startOffset: 0 }, true)).catch(() => null);
    const logs = (page && page.logs) || [];
    // A list answer may carry only the end of a long output (it says so in the text): the
    // run view reads such a run whole before it shows it.
    for (const e of logs.slice().reverse()) upsert(e).listed = true;
    return new Set(logs.map((e) => e.executionTrackingId));
  }

  function startStream() {
    if (S.stream) S.stream.abort();
    S.stream = new AbortController();
    streamLoop(S.stream);
  }

  document.addEventListener("visibilitychange", () => {
    // Phones drop connections of hidden tabs; come back at once instead of after the backoff.
    if (!document.hidden && !S.live && waker) waker();
  });

  // Forgets everything the page holds for its user, as a fresh load would: runs, marks,
  // outputs, dashboards, forms, the sheet, the toasts. Answers still on their way are dropped
  // (`call` compares the epoch). Then `boot` starts over as whoever the service says is here.
  function forgetAll() {
    S.epoch++;
    if (S.stream) S.stream.abort();
    S.stream = null;
    S.live = false;
    for (const m of [S.runs, S.last, S.dashboards, S.actions, S.danger, S.unsure, S.noKill, askedLatest, hiddenLatest]) m.clear();
    S.view = S.prev = S.here = S.watch = null;
    sheet.close();
    $("#toasts").replaceChildren();
    $("#say").textContent = "";
    for (const id of ["#main", "#nav", "#user"]) $(id).replaceChildren();
  }

  // The session ended elsewhere (a logout in another tab, a password change, a removed user)
  // or expired: the page forgets it and starts over.
  async function sessionEnded() {
    forgetAll();
    S.notice = "Your session ended, so this page forgot what it showed. Log in again to see it.";
    await boot("#/");
  }

  // ---------------------------------------------------------------------------------------
  // Config and dashboards
  // ---------------------------------------------------------------------------------------

  async function getDashboard(title) {
    if (S.dashboards.has(title)) return S.dashboards.get(title);
    const d = await call("GetDashboard", { title });
    S.dashboards.set(title, d);
    indexActions(d.dashboard.contents);
    return d;
  }

  function indexActions(list) {
    for (const c of list) {
      if (c.action) S.actions.set(c.action.bindingId, c.action);
      if (c.action && /(^|\s)danger(ous)?(\s|$)/.test(c.cssClass || "")) S.danger.add(c.action.bindingId);
      if (c.contents) indexActions(c.contents);
    }
  }

  let reloading = null;
  async function reloadCatalog(withInit) {
    if (reloading) return reloading;
    reloading = (async () => {
      try {
        if (withInit) {
          S.init = await call("Init");
          chrome();
        }
        const titles = [...S.dashboards.keys()];
        S.dashboards.clear();
        S.noKill.clear(); // rights may have changed with the config
        S.actions.clear();
        for (const t of titles) await getDashboard(t).catch(() => {});
        if (S.view && S.view.update) S.view.update("catalog");
      } finally {
        reloading = null;
      }
    })();
    return reloading;
  }

  // ---------------------------------------------------------------------------------------
  // Page chrome: title, banner, navigation, footer
  // ---------------------------------------------------------------------------------------

  function chrome() {
    const i = S.init;
    document.title = i.pageTitle || "actiond";
    $("#title").textContent = i.pageTitle || "actiond";
    // A title too long for two lines is cut; the whole of it is in the link's title.
    $("#brand").title = i.pageTitle || "actiond";
    $("#top").hidden = false;
    const banner = $("#banner");
    banner.hidden = !i.bannerMessage;
    banner.textContent = i.bannerMessage || "";
    banner.style.cssText = Looks.safeCss(i.bannerCss);

    const nav = $("#nav");
    nav.replaceChildren();
    const here = location.hash || "#/";
    const current = (href) => here === href || (href !== "#/" && (here + "/").startsWith(href + "/"));
    const link = (href, text, extra) => h("a", Object.assign({ href, "aria-current": current(href) ? "page" : null }, extra), text);
    if (i.showNavigation && !i.loginRequired) {
      const first = rootTitle();
      dashboardOrder().forEach((t, n) => nav.append(link(n ? "#/d/" + enc(t) : "#/", t)));
      if (!nav.firstChild) nav.append(link("#/", first));
      if (here.startsWith("#/d/" + enc(first) + "/")) nav.firstChild.setAttribute("aria-current", "page");
      if (i.effectivePolicy.showLogList) nav.append(link("#/logs", "History"));
      if (i.effectivePolicy.showDiagnostics) nav.append(link("#/diag", "Diagnostics"));
      for (const l of i.additionalLinks || []) {
        const url = safeUrl(l.url);
        if (url) nav.append(h("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, l.title));
      }
    }
    const user = $("#user");
    user.replaceChildren();
    if (i.authLocalLogin || i.authenticatedUserProvider !== "system") {
      const guest = i.authenticatedUserProvider === "system";
      const who = h("span.who", { title: "Signed in as " + i.authenticatedUser }, h("span.avatar", { "aria-hidden": "true" }, (i.authenticatedUser || "?").slice(0, 1).toUpperCase()), h("span.uname", {}, i.authenticatedUser));
      if (guest && i.authLocalLogin) {
        if (!here.startsWith("#/login")) user.append(h("a.login", { href: "#/login" }, "Log in"));
      } else if (i.authenticatedUserProvider === "local") user.append(who, h("button.link", { type: "button", onclick: logout }, "Log out"));
      else user.append(who);
    }
    const foot = $("#foot");
    foot.hidden = !i.showFooter;
    // The footer stays inside the page: a page opened from the home screen has no back button.
    const diag = i.effectivePolicy && i.effectivePolicy.showDiagnostics && !i.loginRequired;
    foot.replaceChildren(h("span", {}, "actiond " + (i.currentVersion || "")), diag ? " · " : "", diag ? h("a", { href: "#/diag" }, "Diagnostics") : "");
    navEdges(true);
  }

  // The navigation scrolls sideways when its tabs do not fit (many dashboards, a narrow
  // phone). A fade on a side says there is more that way, and the current tab is scrolled
  // into view.
  function navEdges(reveal) {
    const nav = $("#nav");
    const cur = reveal && nav.querySelector("[aria-current]");
    if (cur) {
      const left = cur.offsetLeft - nav.offsetLeft;
      if (left < nav.scrollLeft || left + cur.offsetWidth > nav.scrollLeft + nav.clientWidth) nav.scrollLeft = left - 32;
    }
    const more = nav.scrollWidth - nav.clientWidth;
    nav.classList.toggle("more-l", more > 1 && nav.scrollLeft > 1);
    nav.classList.toggle("more-r", more > 1 && nav.scrollLeft < more - 1);
  }

  // ---------------------------------------------------------------------------------------
  // Toasts
  // ---------------------------------------------------------------------------------------

  // A toast says something about the view it was shown on: it goes with that view (and after
  // a while, or at a tap).
  function toast(text, kind = "info", ms = kind === "error" ? 8000 : 5000) {
    const t = h("div.toast." + kind, { onclick: () => t.remove() }, text);
    $("#toasts").append(t);
    setTimeout(() => t.remove(), ms);
  }

  // ---------------------------------------------------------------------------------------
  // Router
  // ---------------------------------------------------------------------------------------

  // An address the page goes to itself; any other change of the address (a link from
  // elsewhere, a bookmark, another page that opened this tab setting its location) is not
  // the page's, and a form it lands on keeps Run off for WAKE_MS.
  let ownHash = null;
  function go(hash) {
    ownHash = hash;
    if (location.hash === hash) route();
    else location.hash = hash;
  }

  let routing = 0;
  async function route() {
    if (!S.init) return;
    const mine = ++routing;
    const parts = (location.hash || "#/").slice(2).split("/").map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
    const [head, ...rest] = parts;
    // The page's own: an address it set, or one the user's finger or key asked for just now.
    const own = ownHash === (location.hash || "#/") || performance.now() - Math.max(downAt, upAt) < 1500;
    ownHash = null;
    if (S.init.loginRequired && head !== "login") return go("#/login");
    sheet.route(head);
    if (S.here !== undefined && S.here !== (location.hash || "#/")) $("#toasts").replaceChildren();
    S.view = null;
    S.prev = S.here;
    S.here = location.hash || "#/";
    const main = $("#main");
    let view;
    try {
      if (head === "" || head === undefined) view = await dashboardView(rootTitle(), []);
      else if (head === "d") view = await dashboardView(rest[0] || rootTitle(), rest.slice(1).filter(Boolean));
      else if (head === "a") view = await formView(rest[0], rest[1] === "again");
      else if (head === "x") view = await runView(rest[0]);
      else if (head === "logs") view = await logsView(Math.max(0, parseInt(rest[0] || "0", 10) || 0));
      else if (head === "login") view = loginView();
      else if (head === "diag") view = await diagView();
      else view = messageView("Not found", "There is nothing at this address.");
    } catch (e) {
      if (e.code === "unauthenticated" || e.code === "aborted") return;
      view = messageView("Something went wrong", e.message);
    }
    // A newer address was asked for while this view loaded: that one wins.
    if (mine !== routing) return;
    // The header, banner and view change in the same frame, so nothing already on screen
    // moves while a view loads.
    chrome();
    showMain();
    main.replaceChildren(view.el);
    // Every view starts at its top, under the header, whatever the view before had scrolled.
    window.scrollTo(0, 0);
    S.view = view;
    if (view.arm) unsettle(own ? ECHO_MS : WAKE_MS);
    // Something to say about how the page got here (a session that ended), once.
    if (S.notice) toast(S.notice, "info", 10000);
    S.notice = null;
    if (view.focus) view.focus();
    else if (document.activeElement === document.body || !main.contains(document.activeElement)) {
      const h1 = main.querySelector("h1");
      if (h1 && routed) {
        h1.tabIndex = -1;
        h1.focus({ preventScroll: true });
      }
    }
    routed = true;
  }
  let routed = false;

  // The first view replaces "Loading…" rather than pushing it down: `main` is hidden until
  // then, and an element that appears is not a layout shift, where one that moves is.
  function showMain() {
    const boot = $("#boot");
    if (boot) boot.remove();
    $("#main").hidden = false;
  }

  // Back to where the user came from inside the page, else to the first dashboard.
  function goBack() {
    if (S.prev) history.back();
    else go("#/");
  }

  function backLink(text = "‹", spec = "a.back") {
    return h(spec, { href: S.prev || "#/", "aria-label": text === "‹" ? "Back" : null, onclick: (ev) => { ev.preventDefault(); goBack(); } }, text);
  }

  // The dashboards in the order the navigation shows them: the configured ones first (the
  // page opens on the first, as OliveTin does), then "Actions", which holds the actions no
  // dashboard places.
  function dashboardOrder() {
    const roots = S.init.rootDashboards || [];
    return roots.length > 1 && roots[0] === "Actions" ? [...roots.slice(1), "Actions"] : roots;
  }

  function rootTitle() {
    return dashboardOrder()[0] || "Actions";
  }

  function messageView(title, text) {
    return { el: h("section.panel.message", {}, h("h1", {}, title), h("p", {}, text), h("a.btn", { href: "#/" }, "Back to the actions")) };
  }

  // ---------------------------------------------------------------------------------------
  // Dashboards
  // ---------------------------------------------------------------------------------------

  async function dashboardView(title, dirs) {
    const d = await getDashboard(title);
    const el = h("div.dash");
    const paint = () => {
      const d2 = S.dashboards.get(title) || d;
      let list = d2.dashboard.contents;
      let heading = d2.title;
      for (const dir of dirs) {
        const found = list.find((c) => c.type === "directory" && c.title === dir);
        if (!found) {
          el.replaceChildren(messageView("Not found", "This folder is no longer on the dashboard.").el);
          return;
        }
        list = found.contents;
        heading = dir;
      }
      const head = h("div.dash-head");
      if (dirs.length) {
        const up = ["#/d", enc(title), ...dirs.slice(0, -1).map(enc)].join("/");
        head.append(h("a.back", { href: up, "aria-label": "Back" }, "‹"));
      }
      head.append(h("h1", {}, heading));
      // The default dashboard's one fieldset repeats the page's title; say it once.
      const shown = list.length === 1 && list[0].type === "fieldset" && list[0].title === heading ? list[0].contents : list;
      // A repaint (a reload of the config, a reconnect) keeps the focus on the same button.
      const had = el.contains(document.activeElement) && document.activeElement.dataset.binding;
      el.replaceChildren(head, ...components(shown, title, dirs));
      const again = had && el.querySelector(`[data-binding="${CSS.escape(had)}"]`);
      if (again) again.focus({ preventScroll: true });
      if (!list.length) el.append(h("p.empty", {}, "No actions here yet. Add some to the config file; the page updates by itself."));
    };
    // The latest outputs are read before the first paint, so they do not push the page
    // around when they arrive.
    await latestRuns(d.dashboard.contents);
    paint();
    return {
      el,
      update(kind, id, bindingId) {
        if (kind === "catalog") latestRuns((S.dashboards.get(title) || d).dashboard.contents).then(paint);
        if (kind === "run" && bindingId) for (const c of el.querySelectorAll("[data-recent]")) if (c.dataset.recent === bindingId) paintRecent(c);
      },
    };
  }

  const RECENT = "stdout-most-recent-execution";
  const askedLatest = new Set();
  const hiddenLatest = new Set(); // actions whose runs the caller may not see

  // Reads the newest run of each action a latest-output component of `list` shows, once per
  // action: after that the events keep it current.
  async function latestRuns(list) {
    const ids = [];
    const walk = (l) => {
      for (const c of l) {
        const id = c.type === RECENT && c.action && c.action.bindingId;
        if (id && !askedLatest.has(id) && !S.last.has(id)) ids.push(id);
        if (c.contents) walk(c.contents);
      }
    };
    walk(list);
    await Promise.all(ids.map(async (id) => {
      askedLatest.add(id);
      try {
        upsert((await call("ExecutionStatus", { actionId: id }, true)).logEntry);
      } catch (e) {
        // Never run yet (not_found), or no logs permission: the box says which.
        if (e.code === "permission_denied") hiddenLatest.add(id);
      }
    }));
  }

  function components(list, title, dirs) {
    const out = [];
    let grid = null;
    const inGrid = (node) => {
      if (!grid) out.push((grid = h("div.grid")));
      grid.append(node);
    };
    for (const c of list) {
      if (c.type === "link" && c.action) inGrid(actionButton(c.action, c));
      else if (c.type === "directory") {
        const href = ["#/d", enc(title), ...dirs.map(enc), enc(c.title)].join("/");
        inGrid(h("a.act.dir" + Looks.selector(c.cssClass), { href }, icon(c.icon || "&#128193;", "icon", c.title), h("span.label", {}, c.title), h("span.chev", { "aria-hidden": "true" }, "›")));
      } else if (c.type === RECENT) {
        // A whole row of the grid, so the buttons around it stay in one grid; without an
        // action (the server found none the caller may see) it takes no room at all.
        if (c.action) inGrid(paintRecent(h("section.recent", { dataset: { recent: c.action.bindingId, title: c.action.title } })));
      } else {
        grid = null;
        if (c.type === "fieldset") out.push(h("section.fieldset" + Looks.selector(c.cssClass), {}, c.title ? h("h2", {}, c.title) : null, ...components(c.contents || [], title, dirs)));
        else if (c.type === "display") out.push(h("div.display", {}, sanitize(c.title)));
      }
    }
    return out;
  }

  // A latest-output box: the action's title, how and when its newest run ended (a link to
  // that run), and its output; stderr too when the run did not succeed. While a new run goes
  // on, the previous output stays and the badge says it is running.
  function paintRecent(box) {
    const id = S.last.get(box.dataset.recent);
    const run = id && S.runs.get(id);
    const e = run && run.entry;
    const end = ending(e);
    let pre = box.querySelector("pre");
    if (!pre) {
      const none = hiddenLatest.has(box.dataset.recent) ? "You may not see the runs of this action." : "Not run yet.";
      pre = h("pre.out", { tabindex: "0", "aria-label": "Latest output of " + box.dataset.title }, h("span.none", {}, none));
      box.append(h("div.recent-head", {}, h("h2", {}, box.dataset.title), h("span.when")), pre);
    }
    const when = box.querySelector(".when");
    if (e) {
      const at = (e.datetimeStarted || "").slice(11, 16);
      when.replaceChildren(h("a.badge." + TONE[end.state], { href: "#/x/" + enc(id) }, end.state === "running" ? h("span.spin", { "aria-hidden": "true" }) : "", end.label || "Starting", at ? " · " + at : ""));
    }
    if (e && e.executionFinished) pre.replaceChildren(...outputNodes(run, end.state !== "ok").nodes);
    else if (e && pre.querySelector(".none")) pre.replaceChildren(h("span.none", {}, "Running…"));
    return box;
  }

  // Destructive actions look it: those that ask for a confirmation, and those a dashboard
  // marks with `cssClass: danger` (or `dangerous`). A dashboard's mark is remembered, so
  // that a run's "Run again" treats the action as its button does.
  const dangerous = (action, comp) =>
    (action.arguments || []).some((a) => a.type === "confirmation") || S.danger.has(action.bindingId) || /(^|\s)danger(ous)?(\s|$)/.test((comp && comp.cssClass) || "");

  // A button and, over its corner, the mark of its last run: a link to that run, so the
  // output (or the error) is one tap away whatever the action's popupOnStart. A link's
  // `display` contents are notes shown under its button: the server puts there why an action
  // is disabled (an error in the config). A button the caller may not press stays a button
  // (focusable, aria-disabled) with a lock and what would open it: "Log in to run" for a
  // guest where users can log in.
  function actionButton(action, comp) {
    const cls = Looks.selector(comp && comp.cssClass);
    const notes = ((comp && comp.contents) || []).filter((c) => c.type === "display").map((c) => h("p.note", {}, sanitize(c.title)));
    const why = notes.map((n) => n.textContent).join(" ");
    const danger = dangerous(action, comp);
    if (danger) S.danger.add(action.bindingId);
    const guest = S.init.authenticatedUserProvider === "system";
    const locked = action.canExec ? "" : why ? "broken" : guest && S.init.authLocalLogin ? "login" : "denied";
    const lockText = { login: "Log in to run", denied: "Not allowed", broken: "Cannot run" }[locked];
    const b = h("button.act" + cls + (danger ? ".danger" : "") + (locked ? ".locked" : ""), {
      type: "button",
      dataset: { binding: action.bindingId },
      "aria-disabled": locked ? "true" : null,
      title: locked === "broken" ? why : null,
      "aria-describedby": locked ? "lock-" + action.bindingId : null,
      onclick: () => press(action, locked, why),
    }, icon(action.icon, "icon", action.title), h("span.label", {}, action.title),
    locked ? h("span.lock", { id: "lock-" + action.bindingId }, h("span", { "aria-hidden": "true" }, "🔒 "), lockText) : null, h("span.sr", {}));
    const tile = h("div.tile", {}, b, h("a.mark", { hidden: true }, h("span", { "aria-hidden": "true" })), ...notes);
    if (action.popupOnStart === "execution-button") {
      tile.append(h("a.outlink", { href: "#", hidden: true, "aria-label": "Output of " + action.title, dataset: { outfor: action.bindingId } }, "Output ›"));
    }
    paintButton(b);
    return tile;
  }

  function paintButton(b) {
    const id = S.last.get(b.dataset.binding);
    const run = id && S.runs.get(id);
    const end = ending(run && run.entry);
    b.dataset.state = end.state;
    b.setAttribute("aria-busy", end.state === "running" ? "true" : "false");
    b.querySelector(".sr").textContent = end.label ? ", last run: " + end.label : "";
    const mark = b.parentElement && b.parentElement.querySelector(".mark");
    if (!mark) return;
    mark.hidden = !id;
    if (!id) return;
    const title = b.querySelector(".label").textContent;
    const href = "#/x/" + enc(id);
    mark.href = href;
    mark.dataset.state = end.state;
    mark.title = end.state === "running" ? "Running: watch it" : (end.label || "Starting") + ": show the last run";
    mark.setAttribute("aria-label", (end.state === "running" ? "Watch the run of " : (end.label || "Starting") + ": show the last run of ") + title);
    mark.firstChild.textContent = MARK[end.state];
    const out = mark.parentElement.querySelector("[data-outfor]");
    if (out) {
      out.hidden = false;
      out.href = href;
    }
  }

  // Taps that belong to the screen before. A phone's double tap is two clicks 40–600 ms
  // apart at one spot; when the first one changes what is under the finger (a form gives way
  // to the dashboard), the second lands on something else and presses it. So a click within
  // ECHO_MS of the one before, and within ECHO_PX of where it was, is that click's echo:
  // controls that start something ignore it (`echo()`, read while the click is handled; a
  // keyboard's Enter clicks too, at one spot, so two Enters are one press as well). Where the
  // page itself puts a control under a finger that did not move (Run again taking Kill's
  // place as a run ends), `unsettle` makes that control deaf for ECHO_MS (`settled`). A press
  // of a button within REPEAT ms of its last press, or while that press is on its way, is
  // the same press too: a desktop double-click is two clicks.
  const ECHO_MS = 700;
  const ECHO_PX = 40;
  const REPEAT = 1000;
  let lastClick = null;
  let echoing = false;
  window.addEventListener(
    "click",
    (ev) => {
      const at = { t: ev.timeStamp, x: ev.clientX, y: ev.clientY };
      echoing = !!lastClick && at.t - lastClick.t < ECHO_MS && Math.hypot(at.x - lastClick.x, at.y - lastClick.y) < ECHO_PX;
      lastClick = at;
    },
    true,
  );
  // Typing between two clicks makes the second one a click of its own (a corrected value, sent).
  // A held key repeats: its repeats are not typing.
  window.addEventListener("input", () => (lastClick = null), true);
  window.addEventListener("keydown", (e) => e.repeat || ((lastClick = null), (downAt = e.timeStamp)), true);
  function echo() {
    return echoing;
  }
  // A press counts only when the finger (or key) went down after the page last changed under
  // it: for ECHO_MS after a form appears, and WAKE_MS after the page comes back into view
  // (another tab, another app) or a form arrives that the page did not open itself (a link, a
  // bookmark, another page steering this tab by its address), presses are not taken, and a
  // form's Run is disabled meanwhile (`S.view.arm`). A finger that went down before that
  // moment presses nothing when it lifts.
  const WAKE_MS = 1000;
  let armedFrom = 0; // performance.now() from which presses count
  let downAt = -Infinity; // when the last finger or key went down
  let upAt = -Infinity; // and came up
  let armTimer = null;
  window.addEventListener("pointerdown", (e) => (downAt = e.timeStamp), true);
  window.addEventListener("pointerup", (e) => (upAt = e.timeStamp), true);
  window.addEventListener("keyup", (e) => (upAt = e.timeStamp), true);
  function unsettle(ms = ECHO_MS) {
    armedFrom = Math.max(armedFrom, performance.now() + ms);
    if (S.view && S.view.arm) S.view.arm(false);
    clearTimeout(armTimer);
    const tick = () => {
      const left = armedFrom - performance.now();
      if (left > 0) armTimer = setTimeout(tick, left + 5);
      else if (S.view && S.view.arm) S.view.arm(true);
    };
    armTimer = setTimeout(tick, ms + 5);
  }
  // (A click with no finger down across that moment, as a screen reader makes, counts.)
  const fresh = (from) => performance.now() >= from && !(downAt < from && upAt >= from);
  function settled() {
    return fresh(armedFrom);
  }
  // The buttons that start at once wait only for the page coming back (`awake`).
  let wokeFrom = 0;
  const awake = () => fresh(wokeFrom);
  function woke() {
    wokeFrom = performance.now() + WAKE_MS;
    unsettle(WAKE_MS);
  }
  let hidden = document.hidden;
  document.addEventListener("visibilitychange", () => {
    if (hidden && !document.hidden) woke();
    hidden = document.hidden;
  });
  let blurred = false;
  window.addEventListener("blur", () => (blurred = true));
  window.addEventListener("focus", () => blurred && ((blurred = false), woke()));
  window.addEventListener("pageshow", (e) => e.persisted && woke());
  const pressedAt = new Map(); // bindingId → when its button was last pressed
  const pressing = new Set(); // bindingIds whose StartAction is on its way

  // A press: a running action opens its live view (a second start would only be blocked); a
  // locked one says why, and a guest's opens the login, which comes back to it.
  function press(action, locked, why) {
    // Opening a run in progress starts nothing, so no tap is too quick for it.
    const last = S.last.get(action.bindingId);
    const run = last && S.runs.get(last);
    if (run && run.entry && !run.entry.executionFinished) return go("#/x/" + enc(last));
    if (echo() || pressing.has(action.bindingId)) return;
    const before = pressedAt.get(action.bindingId);
    if (before && Date.now() - before < REPEAT) return;
    pressedAt.set(action.bindingId, Date.now());
    if (locked === "login") {
      S.afterLogin = { to: S.here || "#/", binding: action.bindingId };
      return go("#/login");
    }
    if (locked) return toast(action.title + ": " + (why || "you may not run this action."));
    if (action.arguments && action.arguments.length) return go("#/a/" + enc(action.bindingId));
    // A press that starts the action at once is not taken just after the page came back into
    // view or was focused (the click that focuses a window lands on whatever is under it).
    if (!awake()) return pressedAt.delete(action.bindingId);
    // The button says it was heard until the answer comes: a tap with no sign of it is tapped
    // again.
    pressing.add(action.bindingId);
    const buttons = () => document.querySelectorAll(`button.act[data-binding="${CSS.escape(action.bindingId)}"]`);
    for (const b of buttons()) b.classList.add("busy");
    start(action, [])
      .catch(() => {})
      .finally(() => {
        pressing.delete(action.bindingId);
        for (const b of buttons()) b.classList.remove("busy");
      });
  }

  // Each press has its own tracking id (StartAction's `uniqueTrackingId`), 122 random bits in
  // a UUID's form, so no two tabs, devices or users pick the same one (crypto.randomUUID
  // needs a secure context; boards are served over plain http).
  function newTrackingId() {
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const x = [...b].map((v) => v.toString(16).padStart(2, "0")).join("");
    return [x.slice(0, 8), x.slice(8, 12), x.slice(12, 16), x.slice(16, 20), x.slice(20)].join("-");
  }

  // Starts `action`. Its answer shows where the press was made: the run's view for the
  // `execution-dialog` modes, else the sheet. `fromForm`: a refusal is the form's to show.
  //
  // A press whose answer did not arrive (the network dropped it, or it came after
  // CALL_TIMEOUT) may have run. Its id stays with the action (`S.unsure`) while that is not
  // known, and a press of the same action with the same values sends it again: actiond refuses
  // a second start with one id (already_exists), so the resend shows the run the first one
  // started instead of starting another (a reboot, twice). Other values, or an answer either
  // way, make the next press a new one.
  async function start(action, args, fromForm) {
    const key = JSON.stringify(args);
    let p = S.unsure.get(action.bindingId);
    const again = !!p && p.key === key;
    if (!again) S.unsure.set(action.bindingId, (p = { id: newTrackingId(), key, unknown: false }));
    p.unknown = false;
    let id;
    try {
      try {
        id = (await call("StartAction", { actionId: action.bindingId, arguments: args, uniqueTrackingId: p.id })).executionTrackingId;
      } catch (e) {
        if (e.code !== "already_exists" || !again) throw e;
        id = p.id; // it ran when it was first sent
      }
    } catch (e) {
      if (e.code === "unavailable" && e.status === 0 && S.unsure.get(action.bindingId) === p) {
        p.unknown = true;
        const unsure = new ApiError("unsure", "The press may have run: actiond's answer did not arrive (" + (navigator.onLine === false ? "this device is offline" : "the network dropped it or was too slow") + ").", 0);
        unsure.trackingId = p.id;
        if (!fromForm) {
          sheet.failed(action, unsure.message + " Pressing it again sends the same press: it runs once at most.", true);
          pressRan(action, p.id).catch(() => {});
        }
        throw unsure;
      }
      if (S.unsure.get(action.bindingId) === p) S.unsure.delete(action.bindingId);
      if (e.code !== "unauthenticated" && e.code !== "aborted" && !fromForm) sheet.failed(action, e.message);
      throw e;
    }
    if (S.unsure.get(action.bindingId) === p) S.unsure.delete(action.bindingId);
    return landed(action, id);
  }

  // The run of a press is known: shown as the press's answer.
  function landed(action, id) {
    if (!S.runs.has(id)) {
      // A placeholder until the executionStarted event (or a re-read) brings the entry.
      upsert({ executionTrackingId: id, actionId: action.bindingId, actionTitle: action.title, actionIcon: action.icon, executionStarted: false, executionFinished: false, blocked: false, timedOut: false, exitCode: 0, stdout: "", stderr: "", datetimeStarted: "", datetimeFinished: "", user: "", userClass: "", tags: [] }, S.live);
    }
    const run = S.runs.get(id);
    run.seen = Date.now();
    run.mine = true;
    // It may have ended before its id came back.
    if (run.entry.executionFinished) sheet.say(sheet.sentence(run));
    S.last.set(action.bindingId, id);
    if (dangerous(action)) S.watch = { id, title: action.title, icon: action.icon, until: Date.now() + 120000 };
    notify("run", id, action.bindingId);
    if (!S.live) refreshRun(id).catch(() => {});
    if ((action.popupOnStart || "").startsWith("execution-dialog")) {
      // From an argument form, the run replaces the form in the history: Back returns to
      // the dashboard, not to a form that was already sent.
      if ((location.hash || "").startsWith("#/a/")) {
        S.here = S.prev;
        location.replace("#/x/" + enc(id));
      } else go("#/x/" + enc(id));
    } else sheet.show(id);
    return id;
  }

  // After a press whose answer did not arrive: whether it ran, by this page's live events,
  // else by asking actiond for a run with its id. When it did, its run is shown as the answer
  // would have shown it, and true is returned.
  async function pressRan(action, id) {
    const asking = S.unsure.get(action.bindingId);
    if (!S.runs.has(id)) {
      if (asking) asking.asking = true;
      try {
        upsert((await call("ExecutionStatus", { executionTrackingId: id }, true)).logEntry);
      } catch {
        return false; // not found, or not known: a resend will tell
      } finally {
        if (asking) asking.asking = false;
      }
    }
    const p = S.unsure.get(action.bindingId);
    if (!p || p.id !== id || !p.unknown) return false; // settled meanwhile
    S.unsure.delete(action.bindingId);
    landed(action, id);
    return true;
  }

  // A run this page's events bring may be a press whose answer did not arrive: the view on
  // screen (its form) shows it, else the sheet does.
  function heard(id, bindingId) {
    const p = S.unsure.get(bindingId);
    if (!p || p.id !== id || !p.unknown || p.asking) return;
    const action = S.actions.get(bindingId);
    if (S.view && S.view.ran) S.view.ran(id);
    else if (action && /^#\/(d\/|$)/.test(S.here || "")) pressRan(action, id).catch(() => {});
  }

  // ---------------------------------------------------------------------------------------
  // The sheet (sheet.js), the argument forms (forms.js), and the run, history, login and
  // diagnostics views (views.js)
  // ---------------------------------------------------------------------------------------

  const sheet = ActiondSheet({ $, h, enc, icon, S });
  const { formView, findAction } = ActiondForms({ h, call, S, icon, sanitize, backLink, start, goBack, dangerous, echo, settled, pressRan });

  // What "Run again" needs to know of an action: its declaration, and whether a dashboard
  // shows it as dangerous (every dashboard is read for that when this page has not yet).
  async function actionForRerun(bindingId) {
    await Promise.all(dashboardOrder().map((t) => getDashboard(t).catch(() => null)));
    return findAction(bindingId).catch(() => null);
  }

  const { TONE, outputNodes, runView, logsView, loginView, logout, needLogin, diagView } = ActiondViews({
    $, h, enc, icon, call, S, upsert, refreshRun, toast, go, backLink, boot, forgetAll, dangerous, sheet, actionForRerun, echo, settled, unsettle,
  });

  // ---------------------------------------------------------------------------------------
  // Start
  // ---------------------------------------------------------------------------------------

  // `focus`: the binding whose button (or form, when it takes arguments) to return to, after
  // a locked button's login.
  async function boot(to, focus) {
    let logs;
    for (;;) {
      // The newest runs are asked for beside Init, not after it: one round trip less before
      // the first paint.
      logs = call("GetLogs", { startOffset: 0 }, true).catch(() => null);
      try {
        S.init = await call("Init");
        break;
      } catch (e) {
        showMain();
        $("#main").replaceChildren(messageView("Cannot reach actiond", e.message + " Retrying…").el);
        await sleep(3000);
      }
    }
    S.dashboards.clear();
    S.actions.clear();
    if (S.init.loginRequired) {
      if (S.stream) S.stream.abort();
      setLive(true); // nothing to stream before login; do not show a reconnecting warning
      $("#conn").className = "conn";
      return go("#/login");
    }
    startStream();
    await loadRecent(logs);
    if (to) go(to);
    else route();
    if (focus) returnTo(focus);
    // Where the browser allows a service worker (HTTPS, localhost), it shows an offline page
    // when the board cannot be reached, and tries again.
    if (window.isSecureContext && "serviceWorker" in navigator) navigator.serviceWorker.register("sw.js").catch(() => {});
  }

  // After the login a locked button asked for: its form when it takes arguments, else the
  // button itself, focused (it is not pressed for the user: a reboot must be asked for).
  async function returnTo(binding) {
    // The actions are known once the dashboard has loaded after the login: wait for it, or
    // an action with arguments would be taken for one without (its form never shown).
    for (let i = 0; i < 50 && !S.actions.has(binding); i++) await sleep(100);
    const action = S.actions.get(binding);
    if (action && action.canExec && action.arguments && action.arguments.length) return go("#/a/" + enc(binding));
    for (let i = 0; i < 50 && !document.querySelector(`[data-binding="${CSS.escape(binding)}"]`); i++) await sleep(100);
    const b = document.querySelector(`[data-binding="${CSS.escape(binding)}"]`);
    if (!b) return;
    b.focus({ preventScroll: true });
    b.scrollIntoView({ block: "center" });
  }

  // A login or logout in another tab of this page changes the stored session: this tab
  // forgets what it showed for the previous user and starts over as the new one.
  window.addEventListener("storage", (e) => {
    if (e.key !== SESSION_KEY && e.key !== null) return;
    forgetAll();
    boot("#/");
  });

  window.addEventListener("hashchange", route);
  $("#nav").addEventListener("scroll", () => navEdges(false), { passive: true });
  window.addEventListener("resize", () => navEdges(false));
  boot();
})();
