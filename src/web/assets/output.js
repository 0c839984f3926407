// What a run printed and how it ended, for actiond's page: the ending of a log entry (killed,
// and by whom; timed out; interrupted; blocked, and by what), its mark and duration, its first
// lines, the order in which stdout and stderr were written, and ANSI colours turned into page
// elements. It keeps no state and sends no request; app.js
// calls it. It is loaded before app.js, and everything in it is under one name,
// ActiondOutput. tests/web/output.test.mjs runs its pure parts in Node with tables of cases.
"use strict";

var ActiondOutput = (() => {
  // ---------------------------------------------------------------------------------------
  // How a run ended
  // ---------------------------------------------------------------------------------------

  // The last line of stderr when it is a service notice. actiond appends the notice of an
  // ending (killed, timed out, …) after everything the command wrote, so it is always the
  // last line, and a command cannot write one after it.
  function lastNotice(stderr) {
    const lines = (stderr || "").split("\n");
    while (lines.length && lines[lines.length - 1] === "") lines.pop();
    const last = lines.length ? lines[lines.length - 1] : "";
    return last.startsWith("actiond: ") ? last.slice(9) : "";
  }

  // {state, label, why}: `state` is idle, running, ok, fail, timeout, blocked or killed (the
  // page's styles and marks), `label` the word shown, `why` a sentence for the execution view.
  // Exit code -1 is every ending the command did not choose; the notice says which one.
  function ending(e) {
    if (!e) return { state: "idle", label: "", why: "" };
    if (e.blocked) {
      const n = lastNotice(e.stderr).replace(/^blocked: /, "");
      return { state: "blocked", label: "Blocked", why: n ? "Not run: " + n + "." : "This run was blocked by a limit." };
    }
    if (!e.executionFinished) return { state: "running", label: "Running", why: "" };
    if (e.timedOut) return { state: "timeout", label: "Timed out", why: "This run passed its timeout and was stopped." };
    if (e.exitCode === 0) return { state: "ok", label: "Succeeded", why: "" };
    const n = e.exitCode === -1 ? lastNotice(e.stderr) : "";
    let m;
    if ((m = /^killed by (.*); its process group/.exec(n))) return { state: "killed", label: "Killed", why: "Killed by " + m[1] + ".", by: m[1] };
    if (/^killed because the service is stopping/.test(n)) return { state: "killed", label: "Killed", why: "Killed because actiond was stopping." };
    if ((m = /^terminated by signal (\S+)/.exec(n))) {
      return { state: "killed", label: "Killed", why: "Ended by " + m[1] + " from outside actiond (another program, or the system when memory ran out)." };
    }
    if (/^the service stopped while this was running/.test(n)) return { state: "fail", label: "Interrupted", why: "actiond stopped while this was running; its output was not kept." };
    if (/^failed to start/.test(n)) return { state: "fail", label: "Failed", why: "The command could not be started; stderr says why." };
    return { state: "fail", label: "Failed", why: "" };
  }

  // The mark of each ending, beside its word (never instead of it).
  const MARK = { idle: "", running: "", ok: "✓", fail: "✕", timeout: "⏱", blocked: "⛔", killed: "■" };

  // How long a run took, for people: "0.4 s" when it was timed to the millisecond (this page
  // watched it), else whole seconds as the service's times give them.
  function duration(ms, precise) {
    if (!(ms >= 0)) return "";
    if (precise && ms < 10000) return (Math.max(ms, 100) / 1000).toFixed(1) + " s";
    const s = Math.round(ms / 1000);
    if (s < 1) return "under 1 s";
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
    return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  }

  // The first `n` lines a run printed, for the answer to a press: stdout for a run that
  // succeeded, else stderr first (where the reason is), then stdout. Empty lines are skipped;
  // `more` says whether anything was left out.
  function firstLines(e, n) {
    if (!e) return { lines: [], more: false };
    const split = (t) => (t || "").split("\n").map((l) => l.replace(/\r$/, "")).filter((l) => l.trim() !== "");
    const ok = ending(e).state === "ok" || !e.executionFinished;
    const all = ok ? split(e.stdout).map((l) => [false, l]) : [...split(e.stderr).map((l) => [true, l]), ...split(e.stdout).map((l) => [false, l])];
    return { lines: all.slice(0, n), more: all.length > n };
  }

  // ---------------------------------------------------------------------------------------
  // The order of stdout and stderr
  // ---------------------------------------------------------------------------------------

  // The log entry keeps stdout and stderr apart, and an outputChunk event does not say which
  // stream it came from. Chunks do come in the order actiond read them, so the page can put
  // the two streams back in that order by matching each chunk to the continuation of one of
  // them. Returns [[isStderr, text], …], or null when the chunks do not add up to exactly the
  // two streams: the page missed some (it was opened during the run, or the connection
  // dropped), or actiond cut the output. The only text allowed after the last chunk is
  // actiond's own notices at the end of stderr, which are added when the run ends.
  function order(chunks, stdout, stderr) {
    if (!chunks) return null;
    const parts = [];
    const add = (isErr, text) => {
      const last = parts[parts.length - 1];
      if (last && last[0] === isErr) last[1] += text;
      else parts.push([isErr, text]);
    };
    let o = 0;
    let e = 0;
    for (const c of chunks) {
      if (!c) continue;
      // When a chunk could continue either stream, stdout is tried first; a wrong guess
      // only makes a later chunk fail to match, and then no order is claimed at all.
      if (stdout.startsWith(c, o)) {
        add(false, c);
        o += c.length;
      } else if (stderr.startsWith(c, e)) {
        add(true, c);
        e += c.length;
      } else return null;
    }
    if (o !== stdout.length) return null;
    const rest = stderr.slice(e);
    if (rest && !/^\n?(actiond: [^\n]*\n)+$/.test(rest)) return null;
    if (rest) add(true, rest);
    return parts;
  }

  // ---------------------------------------------------------------------------------------
  // ANSI colours: SGR sequences to spans, everything else of the escape language dropped
  // ---------------------------------------------------------------------------------------

  const PALETTE = ["#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
    "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff"];

  function color256(n) {
    if (n < 16) return PALETTE[n];
    if (n >= 232) {
      const g = 8 + (n - 232) * 10;
      return `rgb(${g},${g},${g})`;
    }
    n -= 16;
    const c = (v) => (v ? 55 + v * 40 : 0);
    return `rgb(${c(Math.floor(n / 36))},${c(Math.floor(n / 6) % 6)},${c(n % 6)})`;
  }

  // A renderer keeps its state between chunks, so colours and split sequences survive them.
  // Text always goes in as text nodes, never as markup.
  class Ansi {
    constructor() {
      this.st = {};
      this.carry = "";
    }
    push(text) {
      const frag = document.createDocumentFragment();
      text = this.carry + text;
      this.carry = "";
      // An escape sequence cut at the end of this chunk waits for the next one.
      const cut = text.match(/\x1b(\[[0-9;?]*|\][^\x07\x1b]*)?$/);
      if (cut) {
        this.carry = cut[0];
        text = text.slice(0, cut.index);
      }
      const re = /\x1b\[([0-9;?]*)([A-Za-z])|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[^[\]]|\r(?!\n)/g;
      let at = 0;
      let m;
      while ((m = re.exec(text))) {
        this.text(frag, text.slice(at, m.index));
        at = re.lastIndex;
        if (m[0] === "\r") this.text(frag, "\n");
        else if (m[2] === "m") this.sgr(m[1]);
      }
      this.text(frag, text.slice(at));
      return frag;
    }
    text(frag, t) {
      if (!t) return;
      t = t.replace(/\r\n/g, "\n");
      const s = this.st;
      if (!s.fg && !s.bg && !s.b && !s.d && !s.i && !s.u) return frag.append(t);
      const span = document.createElement("span");
      span.textContent = t;
      let fg = s.fg;
      let bg = s.bg;
      if (s.inv) [fg, bg] = [bg || "var(--out-bg)", fg || "var(--out-fg)"];
      if (fg) span.style.color = fg;
      if (bg) span.style.background = bg;
      if (s.b) span.style.fontWeight = "bold";
      if (s.d) span.style.opacity = "0.7";
      if (s.i) span.style.fontStyle = "italic";
      if (s.u) span.style.textDecoration = "underline";
      frag.append(span);
    }
    sgr(params) {
      const p = params === "" ? [0] : params.split(";").map((x) => parseInt(x, 10) || 0);
      let s = this.st;
      for (let k = 0; k < p.length; k++) {
        const n = p[k];
        if (n === 0) s = this.st = {};
        else if (n === 1) s.b = true;
        else if (n === 2) s.d = true;
        else if (n === 3) s.i = true;
        else if (n === 4) s.u = true;
        else if (n === 7) s.inv = true;
        else if (n === 22) s.b = s.d = false;
        else if (n === 23) s.i = false;
        else if (n === 24) s.u = false;
        else if (n === 27) s.inv = false;
        else if (n >= 30 && n <= 37) s.fg = PALETTE[n - 30];
        else if (n >= 90 && n <= 97) s.fg = PALETTE[n - 82];
        else if (n === 39) s.fg = null;
        else if (n >= 40 && n <= 47) s.bg = PALETTE[n - 40];
        else if (n >= 100 && n <= 107) s.bg = PALETTE[n - 92];
        else if (n === 49) s.bg = null;
        else if (n === 38 || n === 48) {
          let c = null;
          if (p[k + 1] === 5) {
            c = color256(p[k + 2] & 255);
            k += 2;
          } else if (p[k + 1] === 2) {
            c = `rgb(${p[k + 2] & 255},${p[k + 3] & 255},${p[k + 4] & 255})`;
            k += 4;
          }
          if (n === 38) s.fg = c;
          else s.bg = c;
        }
      }
    }
  }

  const ansi = (text) => new Ansi().push(text || "");

  return { ending, MARK, duration, firstLines, order, Ansi, ansi };
})();
