// The answer to a press, where it was made: a sheet at the bottom of the screen with the
// outcome in words, the duration, the first lines of output (stderr first when the run did not
// succeed) and "Details" to the whole run; while the run goes on, its newest lines. After a
// dangerous action, when the board goes away (a reboot), the sheet says so and the page
// reconnects by itself. Outcomes are also said through a live region, for screen readers.
// app.js calls `ActiondSheet(core)` once. The safety rule of app.js holds here too: text
// from the server goes into the page as text nodes, never as markup.
"use strict";

const ActiondSheet = (core) => {
  const { $, h, enc, icon, S } = core;
  const { ending, MARK, duration, firstLines } = ActiondOutput;
  const LINES = 4;
  const TONE = { idle: "run", running: "run", ok: "ok", fail: "fail", timeout: "warn", blocked: "warn", killed: "warn" };

  const el = $("#sheet");
  // What the sheet shows: {id} of a run, {action, error} of a press that started nothing, or
  // {away} while the board is gone after a dangerous action.
  let shown = null;

  // Says `text` to screen readers, once (the region is emptied first so a repeated sentence
  // is said again).
  function say(text) {
    const region = $("#say");
    region.textContent = "";
    setTimeout(() => (region.textContent = text), 50);
  }

  // How long a run took: to the tenth of a second when this page timed it, else from the
  // service's times (whole seconds).
  function took(run) {
    const e = run.entry;
    const t = (s) => {
      const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)$/.exec(s || "");
      return m ? new Date(+m[1], m[2] - 1, +m[3], +m[4], +m[5], +m[6]).getTime() : NaN;
    };
    if (run.t0 && run.t1) return duration(run.t1 - run.t0, true);
    if (e.executionFinished) return duration(t(e.datetimeFinished) - t(e.datetimeStarted));
    if (run.t0) return duration(Date.now() - run.t0);
    // The board's clock and this device's may disagree: its start time counts only when it is
    // plausible here, else the time since this page saw the run.
    const since = Date.now() - t(e.datetimeStarted);
    return duration(since >= 0 && since < 864e5 ? since : Date.now() - (run.seen || Date.now()));
  }

  // A sentence for a finished run: "Show the date: Succeeded, 0.4 s".
  function sentence(run) {
    const end = ending(run.entry);
    return (run.entry.actionTitle || run.entry.actionId) + ": " + end.label + (took(run) ? ", " + took(run) : "") + (end.why ? ". " + end.why : "");
  }

  function frame(title, iconHtml, ...body) {
    return [
      h("div.sheet-head", {}, icon(iconHtml, "icon", title), h("h2", {}, title), h("button.sheet-x", { type: "button", "aria-label": "Close", onclick: close }, "×")),
      ...body.filter(Boolean),
    ];
  }

  function paint() {
    if (!shown) return;
    if (shown.away) {
      const back = shown.away === "back";
      el.className = "sheet " + (back ? "ok" : "away");
      el.replaceChildren(...frame(shown.title, shown.icon,
        h("p.sheet-state", {}, back ? h("span", { "aria-hidden": "true" }, "✓ ") : h("span.spin", { "aria-hidden": "true" }), back ? "The board is back." : "The board went away after " + shown.title + "."),
        h("p.sheet-note", {}, back ? "The page is live again." : "It is probably restarting. This page reconnects by itself when it is back; a board that was shut down comes back only when it is powered on again.")));
      return;
    }
    if (shown.error) {
      // A press whose answer did not arrive may have started it: the sheet does not say it did not.
      el.className = "sheet " + (shown.unsure ? "warn" : "fail");
      el.replaceChildren(...frame(shown.action.title, shown.action.icon, h("p.sheet-state", {}, h("span", { "aria-hidden": "true" }, shown.unsure ? "? " : "✕ "), shown.unsure ? "May have run" : "Not started"), h("p.sheet-note", {}, shown.error)));
      return;
    }
    const run = S.runs.get(shown.id);
    if (!run || !run.entry) return close();
    const e = run.entry;
    const end = ending(e);
    el.className = "sheet " + TONE[end.state];
    const state = h("p.sheet-state", {},
      end.state === "running" ? h("span.spin", { "aria-hidden": "true" }) : h("span", { "aria-hidden": "true" }, MARK[end.state] + " "),
      end.label || "Starting", took(run) ? h("span.sheet-time", {}, " · " + took(run)) : "");
    let lines;
    if (!e.executionFinished) {
      // The newest lines while it runs.
      const text = (run.chunks || []).join("") || (e.stdout || "") + (e.stderr || "");
      const all = text.split("\n").filter((l) => l.trim() !== "");
      lines = { lines: all.slice(-LINES).map((l) => [false, l]), more: all.length > LINES };
    } else lines = firstLines(e, LINES);
    const out = lines.lines.length
      ? h("pre.sheet-out", {}, ...lines.lines.map(([err, l]) => h(err ? "span.err" : "span", {}, l + "\n")), lines.more ? h("span.none", {}, "…") : "")
      : h("p.sheet-note", {}, e.executionFinished ? "No output." : "Waiting for output…");
    const why = end.why ? h("p.sheet-note", {}, end.why) : null;
    el.replaceChildren(...frame(e.actionTitle || e.actionId, e.actionIcon, state, why, out,
      h("a.btn.small.sheet-more", { href: "#/x/" + enc(shown.id) }, "Details ›")));
  }

  function open(what) {
    shown = what;
    el.hidden = false;
    document.body.classList.add("sheeted");
    paint();
  }

  function close() {
    shown = null;
    el.hidden = true;
    el.replaceChildren();
    document.body.classList.remove("sheeted");
  }

  return {
    say,
    sentence,
    took,
    // The run a press started.
    show: (id) => open({ id }),
    // A press that started nothing, and why; `unsure`: one whose answer did not arrive.
    failed: (action, error, unsure) => open({ action, error, unsure }),
    // The board went away after a dangerous action (`title`), or came back.
    away: (title, iconHtml) => open({ away: "gone", title, icon: iconHtml }),
    back: () => {
      if (shown && shown.away) open(Object.assign({}, shown, { away: "back" }));
    },
    isAway: () => !!(shown && shown.away === "gone"),
    update(id) {
      if (shown && shown.id === id) paint();
    },
    // The sheet belongs to the dashboards: another view closes it.
    route(head) {
      if (shown && head !== "" && head !== "d") close();
    },
    close,
  };
};
