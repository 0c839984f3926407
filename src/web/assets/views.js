// The run, history, login and diagnostics views of actiond's page. app.js holds the rest (the
// state, the event stream, the router, the dashboards and the forms) and calls
// `ActiondViews(core)` once, with what these views need of it; they give back what the rest
// of the page calls. The safety rule of app.js holds here too: text from the server goes into
// the page as text nodes, never as markup.
"use strict";

const ActiondViews = (core) => {
  const { $, h, enc, icon, call, S, upsert, refreshRun, toast, go, backLink, boot, forgetAll, dangerous, sheet, actionForRerun, echo, settled, unsettle } = core;
  const { ending, MARK, Ansi, ansi } = ActiondOutput;

  // ---------------------------------------------------------------------------------------
  // Execution view
  // ---------------------------------------------------------------------------------------

  // The colour of each ending's badge.
  const TONE = { idle: "run", running: "run", ok: "ok", fail: "fail", timeout: "warn", blocked: "warn", killed: "warn" };

  // Long lines (the tables of df, free, docker ps) wrap on a narrow screen, where a line cut
  // off at the edge hides its end (a Use% column, the reason a run was killed), and scroll
  // sideways on a wide one, keeping their columns; "Wrap lines" turns either way, and the
  // choice is kept on this device.
  const WRAP_KEY = "actiond.wrap";
  function setWrap(on, keep) {
    document.documentElement.classList.toggle("wrap", on);
    for (const b of document.querySelectorAll(".wrapbtn")) b.setAttribute("aria-pressed", String(on));
    try {
      if (keep) localStorage.setItem(WRAP_KEY, on ? "1" : "0");
    } catch {
      // Storage refused (a private window): the choice lasts until the page is closed.
    }
  }
  let kept = null;
  try {
    kept = localStorage.getItem(WRAP_KEY);
  } catch {
    // As above.
  }
  setWrap(kept === null ? matchMedia("(max-width: 699px)").matches : kept === "1", false);
  const wrapButton = () => h("button.btn.small.wrapbtn", { type: "button", "aria-pressed": String(document.documentElement.classList.contains("wrap")), onclick: () => setWrap(!document.documentElement.classList.contains("wrap"), true) }, "Wrap lines");

  // The output of a finished run as page nodes, and a note about them. Both streams go in
  // the order they were written when this page knows it (output.js), else stdout and then
  // stderr, and the note says that their order is not known. `withErr` false shows stdout
  // alone.
  function outputNodes(run, withErr) {
    const e = run.entry;
    const out = e.stdout || "";
    const err = withErr ? e.stderr || "" : "";
    if (!out && !err) return { nodes: [h("span.none", {}, "No output.")], note: "" };
    if (!err) return { nodes: [ansi(out)], note: "" };
    if (run.ordered) {
      // Each stream keeps its own colours.
      const renderers = [new Ansi(), new Ansi()];
      const nodes = run.ordered.map(([isErr, text]) => (isErr ? h("span.err", {}, renderers[1].push(text)) : renderers[0].push(text)));
      return { nodes, note: out ? "stdout and stderr in the order written; stderr in red." : "" };
    }
    const nodes = [out ? ansi(out) : "", h("span.stderr", {}, h("span.tag", {}, "stderr"), ansi(err))];
    return { nodes, note: out ? "stdout, then stderr: their order is known only for runs this page watched from their start." : "" };
  }

  // HTML output is a document of its own, in a frame where no script runs; without a style
  // it would fall back to the browser's serif font.
  const HTML_FRAME = '<meta charset="utf-8"><meta name="color-scheme" content="light"><style>body{margin:12px;color:#15181d;background:#fff;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}pre,code,kbd{font-family:ui-monospace,Menlo,Consolas,monospace}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left}</style>';

  async function runView(id) {
    let run = S.runs.get(id);
    if (!run || !run.entry || !run.entry.executionFinished || run.listed) {
      try {
        run = await refreshRun(id);
      } catch (e) {
        if (!run || !S.runs.has(id)) throw e;
      }
    }
    const action = S.actions.get(run.entry.actionId);
    const mode = (action && action.popupOnStart) || "";
    const badge = h("span.badge");
    // One line: how it ended, how long it took, who started it, when.
    const meta = h("p.runmeta");
    const pre = h("pre.out", { tabindex: "0", "aria-label": "Output", "aria-live": "off" });
    const frame = h("iframe.htmlout", { sandbox: "", title: "Output", hidden: true });
    const killBtn = h("button.btn.danger", { type: "button", onclick: kill }, "Kill");
    // Why Kill did nothing, under the buttons (a toast there would cover them).
    const killNote = h("p.killnote", { role: "status", hidden: true });
    const rerunBtn = h("button.btn", { type: "button", onclick: rerun }, "Run again");
    const notice = h("p.notice", { hidden: true });
    const outNote = h("p.outnote");
    const outBar = h("div.outbar", {}, outNote, wrapButton());
    const el = h("section.panel.run", {},
      h("div.form-head", {}, backLink(), icon(run.entry.actionIcon, "icon big", run.entry.actionTitle), h("div.titles", {}, h("h1", {}, run.entry.actionTitle || run.entry.actionId), badge)),
      meta, notice, outBar, pre, frame,
      h("div.runbar", {}, h("div.actions", {}, killBtn, rerunBtn), killNote));

    let said = !!run.entry.executionFinished;
    // The newest line stays in view while the run goes on, until the user scrolls up to read.
    let follow = true;
    pre.addEventListener("scroll", () => (follow = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 40), { passive: true });
    let renderer = null;
    let base = -1; // run.dropped when the live output was last drawn from scratch
    let drawn = 0; // chunks drawn, counted from the first chunk ever received
    let finalShown = false;
    let shownRunning = false; // Kill is on screen, where Run again comes when the run ends

    function paintLive() {
      // When this page missed chunks (it was opened during the run, or the stream dropped),
      // output read from the service may be ahead of them: the live view goes on from that.
      // A page that has every chunk waits for them instead, since a read and the events in
      // flight overlap.
      const sofar = (run.entry.stdout || "") + (run.entry.stderr || "");
      if (run.chunks && !run.whole && sofar.length > run.size) {
        run.chunks = [sofar];
        run.size = sofar.length;
        run.dropped++;
      }
      if (base !== run.dropped) {
        base = run.dropped;
        renderer = new Ansi();
        pre.replaceChildren(run.trimmed ? h("span.none", {}, "… earlier output is shown when the run ends\n") : "");
        drawn = run.dropped;
      }
      const fresh = run.chunks ? run.chunks.slice(drawn - run.dropped) : [];
      if (fresh.length) {
        const w = pre.querySelector(".wait");
        if (w) w.remove();
        pre.append(renderer.push(fresh.join("")));
        drawn += fresh.length;
      }
      if (!pre.textContent) pre.append(h("span.none.wait", {}, "Waiting for output…"));
      outNote.textContent = "Live: stdout and stderr as they arrive.";
    }

    function paintFinal(e, end) {
      finalShown = true;
      if (mode === "execution-dialog-output-html") {
        frame.hidden = false;
        frame.srcdoc = HTML_FRAME + (e.stdout || "");
        pre.hidden = outBar.hidden = !e.stderr;
        pre.replaceChildren(h("span.stderr", {}, ansi(e.stderr)));
        outNote.textContent = "";
        return;
      }
      // Whatever the mode, a run that did not succeed shows stderr: that is where the reason is.
      const o = outputNodes(run, mode !== "execution-dialog-stdout-only" || end.state !== "ok");
      pre.replaceChildren(...o.nodes);
      outNote.textContent = o.note;
    }

    function paint() {
      const e = run.entry;
      const end = ending(e);
      badge.className = "badge " + TONE[end.state];
      badge.replaceChildren(end.state === "running" ? h("span.spin", { "aria-hidden": "true" }) : "", end.label || "Starting");
      // Exit -1 is every ending the command did not choose: its word says which.
      const how = !e.executionFinished ? "Running" : e.exitCode === -1 || end.state === "blocked" ? end.label : "exit " + e.exitCode;
      const today = new Date().toISOString().slice(0, 10);
      const at = (e.datetimeStarted || "").startsWith(today) ? e.datetimeStarted.slice(11, 16) : (e.datetimeStarted || "").slice(0, 16);
      const parts = [sheet.took(run), e.user, at].filter(Boolean);
      meta.replaceChildren(h("span.how", { dataset: { state: end.state } }, MARK[end.state] ? h("span", { "aria-hidden": "true" }, MARK[end.state] + " ") : "", how), ...parts.map((p) => h("span", {}, " · " + p)));
      meta.title = "Started " + (e.datetimeStarted || "") + (e.user ? " by " + e.user : "");
      if (e.executionFinished && !said && !run.mine) sheet.say(sheet.sentence(run));
      said = said || e.executionFinished;
      // Run again takes Kill's place when the run ends: a tap meant for Kill in that moment
      // must not start the action again.
      if (e.executionFinished && shownRunning) unsettle();
      shownRunning = !e.executionFinished;
      killBtn.hidden = e.executionFinished;
      if (e.executionFinished) {
        killBtn.classList.remove("busy");
        killBtn.textContent = "Kill";
        killNote.hidden = true;
      }
      paintKill();
      // Offered only to a caller who may run the action (its canExec, when the page knows it).
      const known = S.actions.get(e.actionId);
      rerunBtn.hidden = !e.executionFinished || (!!known && !known.canExec);
      notice.hidden = !end.why;
      notice.textContent = end.why;
      if (!e.executionFinished) paintLive();
      else if (!finalShown) paintFinal(e, end);
      if (follow) pre.scrollTop = pre.scrollHeight;
    }

    // Kill of an action whose kill actiond refused this caller is shown locked, as a button
    // the caller may not press is: "Log in to kill" for a guest where users can log in (it
    // opens the login, which comes back here). The page learns it from the refusal: the API's
    // answers say who may run an action (canExec), not who may kill its runs.
    const killLock = () => (!S.noKill.has(run.entry.actionId) ? "" : S.init.authenticatedUserProvider === "system" && S.init.authLocalLogin ? "login" : "denied");
    function paintKill() {
      const lock = killLock();
      if (!lock || killBtn.classList.contains("busy")) return;
      killBtn.classList.add("locked");
      killBtn.disabled = false;
      killBtn.setAttribute("aria-disabled", "true");
      killBtn.replaceChildren(h("span", { "aria-hidden": "true" }, "🔒 "), lock === "login" ? "Log in to kill" : "Not allowed to kill");
    }

    // The button says "Stopping…" until the run has ended; the kill ladder may take the
    // action's grace period.
    async function kill() {
      const lock = killLock();
      if (lock === "login") {
        S.afterLogin = { to: S.here || "#/" };
        return go("#/login");
      }
      if (lock) return;
      killBtn.disabled = true;
      killBtn.classList.add("busy");
      killBtn.textContent = "Stopping…";
      try {
        const r = await call("KillAction", { executionTrackingId: id });
        if (r.alreadyCompleted) toast("It had already finished.");
        if (!S.live) setTimeout(() => refreshRun(id).catch(() => {}), 1000);
      } catch (e) {
        killBtn.disabled = false;
        killBtn.classList.remove("busy");
        killBtn.textContent = "Kill";
        if (e.code === "permission_denied" || e.code === "unauthenticated") S.noKill.add(run.entry.actionId);
        paintKill();
        killNote.textContent = e.message.replace(/^./, (c) => c.toUpperCase()) + (/[.!?]$/.test(e.message) ? "" : ".");
        killNote.hidden = false;
      }
    }

    // A run with a confirmation, a password, or of a dangerous action is not repeated as it
    // was: its form opens again, unticked and without secrets.
    async function rerun() {
      if (rerunBtn.disabled || echo() || !settled()) return;
      rerunBtn.disabled = true;
      const action = await actionForRerun(run.entry.actionId);
      rerunBtn.disabled = false;
      const args = (action && action.arguments) || [];
      if (action && (dangerous(action) || args.some((a) => a.type === "confirmation" || a.type === "password"))) {
        return go("#/a/" + enc(action.bindingId) + "/again");
      }
      rerunBtn.disabled = true;
      try {
        const r = await call("RestartAction", { executionTrackingId: id });
        upsert(Object.assign({}, run.entry, { executionTrackingId: r.executionTrackingId, executionStarted: false, executionFinished: false, exitCode: 0, timedOut: false, blocked: false, stdout: "", stderr: "", datetimeStarted: "", datetimeFinished: "" }), S.live);
        location.replace("#/x/" + enc(r.executionTrackingId));
      } catch (e) {
        toast(e.message, "error");
        rerunBtn.disabled = false;
      }
    }

    paint();
    const ticker = setInterval(() => {
      if (!el.isConnected) return clearInterval(ticker);
      if (!run.entry.executionFinished && S.runs.has(id)) paint();
    }, 1000);
    return {
      el,
      update(kind, which) {
        if (kind === "resync" && !run.entry.executionFinished) refreshRun(id).catch(() => {});
        if (which !== id && kind !== "resync") return;
        if (!S.runs.has(id)) {
          // Forgotten: the service restarted without keeping its history.
          notice.hidden = false;
          notice.textContent = "actiond no longer has this run: it restarted without keeping its history.";
          killBtn.hidden = true;
          return;
        }
        run = S.runs.get(id);
        paint();
      },
    };
  }

  // ---------------------------------------------------------------------------------------
  // History
  // ---------------------------------------------------------------------------------------

  async function logsView(offset) {
    const el = h("section.panel.logs", {}, h("h1", {}, "History"));
    const list = h("ol.loglist");
    const pager = h("nav.pager", { "aria-label": "Pages" });
    el.append(list, pager);
    let refreshTimer = null;

    async function load() {
      const page = await call("GetLogs", { startOffset: offset });
      const size = parseInt(page.pageSize, 10) || 10;
      const total = parseInt(page.totalCount, 10) || 0;
      const remaining = parseInt(page.countRemaining, 10) || 0;
      list.replaceChildren(...page.logs.map(row));
      if (!page.logs.length) list.append(h("li.empty", {}, offset ? "Nothing on this page." : "Nothing has run yet."));
      const from = page.logs.length ? offset + 1 : 0;
      pager.replaceChildren(
        h("a.btn" + (offset > 0 ? "" : ".off"), offset > 0 ? { href: "#/logs/" + Math.max(0, offset - size), rel: "prev" } : { "aria-disabled": "true" }, "‹ Newer"),
        h("span.count", {}, total ? `${from}–${offset + page.logs.length} of ${total}` : ""),
        h("a.btn" + (remaining > 0 ? "" : ".off"), remaining > 0 ? { href: "#/logs/" + (offset + size), rel: "next" } : { "aria-disabled": "true" }, "Older ›"));
    }

    function row(e) {
      const end = ending(e);
      const state = end.state;
      const took = e.executionFinished ? sheet.took({ entry: e }) : "";
      const today = new Date().toISOString().slice(0, 10);
      return h("li", {}, h("a.logrow", { href: "#/x/" + enc(e.executionTrackingId) },
        icon(e.actionIcon, "icon", e.actionTitle || e.actionId),
        h("span.what", {}, h("span.title", {}, e.actionTitle || e.actionId), h("span.sub", {}, [e.datetimeStarted.startsWith(today) ? e.datetimeStarted.slice(11) : e.datetimeStarted, took, e.user].filter(Boolean).join(" · "))),
        h("span.badge." + TONE[state], {}, state === "running" ? h("span.spin", { "aria-hidden": "true" }) : "", end.label)));
    }

    await load();
    return {
      el,
      update(kind) {
        if (offset !== 0 || (kind !== "run" && kind !== "resync")) return;
        clearTimeout(refreshTimer);
        refreshTimer = setTimeout(() => load().catch(() => {}), 300);
      },
    };
  }

  // ---------------------------------------------------------------------------------------
  // Login, logout, diagnostics
  // ---------------------------------------------------------------------------------------

  function loginView() {
    const user = h("input", { id: "login-user", autocomplete: "username", autocapitalize: "off", spellcheck: "false", required: true });
    const pass = h("input", { id: "login-pass", type: "password", autocomplete: "current-password", required: true });
    const err = h("div.alert", { role: "alert", hidden: true });
    const btn = h("button.btn.primary", { type: "submit" }, "Log in");
    // Opened by a locked button: the login says what it is for, and returns there.
    const wanted = S.afterLogin && S.actions.get(S.afterLogin.binding);
    const form = h("form.panel.loginform", { novalidate: true },
      h("img.logo", { src: $("link[rel=icon]").href, alt: "", width: 56, height: 56 }),
      h("h1", {}, "Log in to " + (S.init.pageTitle || "actiond")),
      wanted ? h("p.hint", {}, "Log in to run " + wanted.title + ".") : null,
      S.init.loginRequired ? h("p.hint", {}, "This board asks everyone to log in before using it.") : null,
      err,
      h("div.field", {}, h("label", { for: "login-user" }, "Username"), user),
      h("div.field", {}, h("label", { for: "login-pass" }, "Password"), pass),
      h("div.actions", {}, btn));
    if (!S.init.authLocalLogin) {
      err.textContent = "Local login is not enabled in this board's config.";
      err.hidden = false;
      btn.disabled = true;
    }
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      err.hidden = true;
      if (!user.value || !pass.value) {
        err.textContent = "Enter your username and password.";
        err.hidden = false;
        return (user.value ? pass : user).focus();
      }
      btn.disabled = true;
      btn.classList.add("busy");
      try {
        const r = await call("LocalUserLogin", { username: user.value, password: pass.value });
        if (!r.success) {
          err.textContent = "That username and password do not match.";
          err.hidden = false;
          pass.select();
          return;
        }
        pass.value = "";
        const after = S.afterLogin;
        S.afterLogin = null;
        // The guest's runs and outputs are not the user's: the page starts over.
        forgetAll();
        await boot(after ? after.to : "#/", after && after.binding);
      } catch (e) {
        err.textContent = e.message;
        err.hidden = false;
      } finally {
        btn.disabled = false;
        btn.classList.remove("busy");
      }
    });
    return { el: form, focus: () => user.focus() };
  }

  // Logging out forgets everything the page holds for the user, as a fresh load would.
  async function logout() {
    let failed = null;
    try {
      await call("Logout");
    } catch (e) {
      failed = e;
    }
    forgetAll();
    await boot("#/");
    if (failed) toast(failed.message, "error");
  }

  // The service wants a login (guests must log in, and the session ended): the page forgets
  // the user and shows the login.
  function needLogin() {
    if (!S.init || S.init.loginRequired) return;
    forgetAll();
    boot("#/login");
  }

  async function diagView() {
    const el = h("section.panel.diag", {}, h("h1", {}, "Diagnostics"));
    const dl = (rows) => h("dl.meta.wide", {}, ...rows.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v))));
    const [who, diag] = await Promise.all([call("WhoAmI"), call("GetDiagnostics").catch((e) => ({ error: e.message }))]);
    el.append(h("h2", {}, "You"), dl([["User", who.authenticatedUser], ["Group", who.usergroup], ["Signed in by", who.provider], ["Access lists", (who.acls || []).join(", ") || "none"]]));
    el.append(h("h2", {}, "This board"), dl([["actiond", S.init.currentVersion], ["Live updates", S.live ? "connected" : "reconnecting"]].concat(diag.error ? [["Diagnostics", diag.error]] : [["SSH key", diag.SshFoundKey], ["SSH config", diag.SshFoundConfig]])));
    const out = h("pre.out", { hidden: true });
    el.append(h("h2", {}, "Support report"), h("p.hint", {}, "A plain-text summary of the version, system, config counts and limits. It never contains a secret."),
      h("div.actions", {}, h("button.btn", {
        type: "button",
        onclick: async () => {
          try {
            const r = await call("SosReport");
            out.textContent = r.alert;
            out.hidden = false;
          } catch (e) {
            toast(e.message, "error");
          }
        },
      }, "Make a report")), out);
    return { el };
  }

  return { TONE, outputNodes, runView, logsView, loginView, logout, needLogin, diagView };
};
