// The argument forms of actiond's page: one field per declared argument, the page's own
// mirror of the types' rules, required fields found and marked before anything is sent, and
// every refusal shown next to its field, naming it by its title. app.js calls
// `ActiondForms(core)` once, with what the forms need of it. The safety rule of app.js holds
// here too: text from the server goes into the page as text nodes; only `html` arguments go
// through its sanitizer.
"use strict";

const ActiondForms = (core) => {
  const { h, call, S, icon, sanitize, backLink, start, goBack, dangerous, echo, settled, pressRan } = core;

  const RULES = {
    ascii: [/^[A-Za-z0-9]+$/, "must be letters and digits only (A-Z, a-z, 0-9)"],
    ascii_identifier: [/^[A-Za-z0-9._-]+$/, "must be letters, digits, dots, underscores and hyphens only (A-Z, a-z, 0-9, '.', '_', '-')"],
    ascii_sentence: [/^[A-Za-z0-9._, -]+$/, "must be letters, digits, spaces, commas, dots, underscores and hyphens only (A-Z, a-z, 0-9, ' ', ',', '.', '_', '-')"],
    unicode_identifier: [/^[\p{L}\p{N}_.-]+$/u, "must be letters and digits of any script, dots, underscores and hyphens only"],
    int: [/^-?[0-9]+$/, "must be a whole number: an optional '-' followed by the digits 0-9"],
    email: [/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/, "must be an email address like name@example.com"],
    url: [/^https?:\/\/[\x21-\x7e]+$/i, "must be an absolute http:// or https:// URL"],
    datetime: [/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/, "must be a date and time written YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS"],
  };
  const INT_MAX = 9223372036854775807n;

  // The local mirror of ValidateArgumentType for one value; "" when it passes. An empty value
  // is checked as required or not (below), never against the type.
  function localCheck(arg, value) {
    if (value === "") return "";
    if (value.includes("\0")) return "must not contain a NUL byte";
    const choices = (arg.choices || []).map((c) => c.value);
    if (arg.type === "checkbox") return ["true", "false", "1", "0", ...choices].includes(value) ? "" : "must be true, false, 1 or 0";
    if (arg.type === "checklist") return value.split(",").every((v) => choices.includes(v)) ? "" : "must be a comma-separated list of the choices";
    if (choices.length) return choices.includes(value) ? "" : "must be one of the declared choices";
    const rule = RULES[arg.type || "ascii"];
    if (!rule) return "";
    if (!rule[0].test(value)) return rule[1];
    if (arg.type === "int") {
      const n = BigInt(value);
      if (n > INT_MAX || n < -INT_MAX - 1n) return "must be a whole number between -9223372036854775808 and 9223372036854775807";
    }
    return "";
  }

  // A rule as a person reads it. A `regex:` rule's pattern means nothing to most people: the
  // argument's description says what is expected, and its default is an example.
  function explain(arg, rule) {
    if (!/^must match the pattern /.test(rule)) return rule;
    const example = arg.defaultValue && !arg.defaultValue.includes("\n") ? " (for example " + arg.defaultValue + ")" : "";
    return "is not in the expected form" + example + (arg.description ? ": " + arg.description.replace(/\.?\s*$/, ".") : ".");
  }

  // Types with a rule to check beyond the local mirror: the server checks the value against
  // the argument as declared (its `regex:` pattern included), by binding id and name.
  const SERVER_CHECKED = (t) => t && !["password", "raw_string_multiline", "very_dangerous_raw_string", "checklist", "confirmation", "html"].includes(t);

  // Types whose field always sends a value, or none the server could require.
  const NEVER_EMPTY = ["confirmation", "checkbox", "checklist", "html"];

  async function findAction(bindingId) {
    if (!S.actions.has(bindingId)) {
      const r = await call("GetActionBinding", { bindingId });
      S.actions.set(bindingId, r.action);
    }
    return S.actions.get(bindingId);
  }

  // The arguments the service refuses empty (`rejectNull` without a default): the Action
  // message does not say, so the service is asked, as a start would check an empty value.
  // Asked once per form, all at once, before the form is drawn.
  async function requiredNames(action) {
    const asks = action.arguments.filter((a) => !a.defaultValue && !NEVER_EMPTY.includes(a.type) && !(a.choices && a.choices.length));
    const names = new Set();
    await Promise.all(asks.map(async (a) => {
      try {
        const r = await call("ValidateArgumentType", { bindingId: action.bindingId, argumentName: a.name, value: "" }, true);
        if (!r.valid) names.add(a.name);
      } catch {
        // The start will say so.
      }
    }));
    return names;
  }

  // `again`: opened by "Run again" of a run whose values cannot simply be repeated (a
  // confirmation, a password, a dangerous action): the values start from the defaults, the
  // confirmation unticked and secrets empty.
  async function formView(bindingId, again) {
    const action = await findAction(bindingId);
    const required = await requiredNames(action);
    const danger = dangerous(action) || again;
    const fields = [];
    const form = h("form.panel.argform" + (danger ? ".danger" : ""), { novalidate: true, autocomplete: "off" });
    const header = h("div.form-head", {}, backLink(), icon(action.icon, "icon big", action.title), h("h1", {}, action.title));
    form.append(header);
    if (again) form.append(h("p.hint.again", {}, "Run again: check the values" + (action.arguments.some((a) => a.type === "confirmation") ? " and confirm" : "") + ". Nothing runs until you press Run."));

    for (const arg of action.arguments) {
      const id = "arg-" + arg.name.replace(/[^\w-]/g, "_");
      const title = arg.title || arg.name;
      const hint = arg.description ? h("p.hint", { id: id + "-hint" }, arg.description) : null;
      const err = h("p.err", { id: id + "-err", "aria-live": "polite" });
      const describedBy = [hint ? id + "-hint" : "", id + "-err"].join(" ").trim();
      const type = arg.type || "";
      const must = required.has(arg.name);
      const label = (extra) => [title, must || extra ? h("span.req", {}, "required") : null];
      let field;
      if (type === "html") {
        form.append(h("div.field.htmlarg", {}, sanitize(arg.defaultValue || arg.description || arg.title)));
        continue;
      } else if (type === "confirmation") {
        const input = h("input", { type: "checkbox", id, "aria-describedby": describedBy, "aria-required": "true" });
        field = { arg, title, input, err, get: () => (input.checked ? "1" : ""), confirm: true };
        form.append(h("div.field.check", {}, h("label", { for: id }, input, h("span", {}, label(true))), hint, err));
      } else if (type === "checkbox") {
        const [on, off] = arg.choices && arg.choices.length ? [arg.choices[0].value, (arg.choices[1] || { value: "" }).value] : ["true", "false"];
        const input = h("input", { type: "checkbox", id, checked: ["true", "1", on].includes(arg.defaultValue), "aria-describedby": describedBy });
        field = { arg, title, input, err, get: () => (input.checked ? on : off) };
        form.append(h("div.field.check", {}, h("label", { for: id }, input, h("span", {}, title)), hint, err));
      } else if (type === "checklist") {
        const initial = (arg.defaultValue || "").split(",");
        const boxes = arg.choices.map((c) => h("input", { type: "checkbox", value: c.value, checked: initial.includes(c.value) }));
        field = { arg, title, input: boxes[0], err, get: () => boxes.filter((b) => b.checked).map((b) => b.value).join(",") };
        form.append(h("fieldset.field.list", { "aria-describedby": describedBy }, h("legend", {}, title), ...boxes.map((b, i) => h("label.opt", {}, b, h("span", {}, arg.choices[i].title || arg.choices[i].value))), hint, err));
      } else if (arg.choices && arg.choices.length) {
        // Without a default nothing is chosen for the user: a list that opened on its first
        // entry would run that one on a careless tap.
        const preset = arg.choices.some((c) => c.value === arg.defaultValue);
        const pick = !preset && !arg.choices.some((c) => c.value === "");
        const input = h("select", { id, "aria-describedby": describedBy, "aria-required": pick ? "true" : null },
          pick ? h("option", { value: "", disabled: true }, "Choose…") : null,
          ...arg.choices.map((c) => h("option", { value: c.value }, c.title || c.value)));
        input.value = preset ? arg.defaultValue : "";
        field = { arg, title, input, err, get: () => input.value, must: pick };
        form.append(h("div.field", {}, h("label", { for: id }, label(pick)), input, hint, err));
      } else {
        const attrs = { id, name: arg.name, value: type === "password" ? "" : arg.defaultValue || "", "aria-describedby": describedBy, "aria-required": must ? "true" : null, spellcheck: "false", autocapitalize: "off" };
        let input;
        if (type === "raw_string_multiline") input = h("textarea", Object.assign(attrs, { rows: 5 }));
        else {
          const kind = { password: "password", email: "email", url: "url", datetime: "datetime-local", int: "text" }[type] || "text";
          Object.assign(attrs, { type: kind });
          if (type === "int") Object.assign(attrs, { inputmode: "numeric" });
          if (type === "datetime") Object.assign(attrs, { step: 1 });
          if (type === "password") Object.assign(attrs, { autocomplete: "new-password" });
          const sugg = Object.entries(arg.suggestions || {});
          if (sugg.length) attrs.list = id + "-list";
          input = h("input", attrs);
          if (sugg.length) form.append(h("datalist", { id: id + "-list" }, ...sugg.map(([v, t]) => h("option", { value: v }, t || v))));
        }
        field = { arg, title, input, err, get: () => input.value, must };
        form.append(h("div.field", {}, h("label", { for: id }, label(false)), input, hint, err));
      }
      fields.push(field);
      let timer = null;
      let asked = 0;
      const check = async () => {
        const value = field.get();
        const local = field.confirm ? "" : localCheck(arg, value);
        showErr(field, local);
        summary();
        if (local || !value || !SERVER_CHECKED(type) || (arg.choices && arg.choices.length)) return;
        const mine = ++asked;
        try {
          const r = await call("ValidateArgumentType", { bindingId, argumentName: arg.name, value });
          if (mine === asked && field.get() === value) showErr(field, r.valid ? "" : explain(arg, r.description));
          summary();
        } catch {
          // The start will answer anyway.
        }
      };
      const later = () => {
        clearTimeout(timer);
        timer = setTimeout(check, 250);
      };
      const box = field.input.closest(".field");
      box.addEventListener("input", later);
      box.addEventListener("change", later);
    }

    // Next to the Run button, where the eye is when it is pressed: what still stops the run.
    // It goes as soon as its cause does.
    const errorBox = h("div.alert", { role: "alert", hidden: true });
    const runBtn = h("button.btn.primary" + (danger ? ".danger" : ""), { type: "submit" }, h("span.label", {}, "Run"));
    // Below the buttons, not above: a box that appears above Run moves Run down under a
    // finger about to tap again, and the second tap lands on the box.
    form.append(h("div.actions", {}, runBtn, backLink("Cancel", "a.btn")), errorBox);

    // `text` follows the field's title ("Count must be a whole number"), or, starting with a
    // capital, is a sentence that names it itself.
    function showErr(field, text) {
      field.err.textContent = !text ? "" : /^[A-Z]/.test(text) ? text : field.title + " " + text;
      field.input.setAttribute("aria-invalid", text ? "true" : "false");
      field.input.closest(".field").classList.toggle("bad", !!text);
    }

    let serverSaid = "";
    let unsure = ""; // what the page knows of a press whose answer did not arrive
    function summary() {
      const bad = fields.filter((f) => f.err.textContent);
      const list = bad.map((f) => f.title).join(", ");
      const text = [bad.length ? (bad.length === 1 ? "Check " : "Check these fields: ") + list + (/[.?!]$/.test(list) ? "" : ".") : serverSaid, unsure].filter(Boolean).join(" ");
      errorBox.textContent = text;
      errorBox.hidden = !text;
    }

    form.addEventListener("input", () => {
      serverSaid = "";
      summary();
    });

    // Once sent, the form stays sent: Run comes back only after a refusal. A second tap of a
    // double tap would otherwise find Run enabled again in the moment before the page moves
    // on, and start the action twice (a reboot, twice). Run is also off for a moment after
    // the form appears or the page comes back into view (app.js `unsettle`), and while the
    // page finds out whether a press whose answer did not arrive ran.
    let sent = false;
    let armed = false;
    const paintRun = () => (runBtn.disabled = sent || !armed);
    paintRun();

    // Where the answer shows: on the dashboard the form was opened from (the sheet), or, from
    // a run's "Run again", as the new run in place of the old one.
    function after(id) {
      if (!(action.popupOnStart || "").startsWith("execution-dialog")) {
        if (again || !/^#\/(d\/|$)/.test(S.prev || "")) location.replace("#/x/" + encodeURIComponent(id));
        else goBack();
      }
    }

    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      if (sent || echo() || !settled()) return;
      serverSaid = unsure = "";
      let firstBad = null;
      for (const f of fields) {
        const value = f.get();
        const why = f.confirm ? (value ? "" : "Tick “" + f.title + "” to confirm.") : f.must && !(typeof value === "string" ? value.trim() : value) ? (f.arg.choices && f.arg.choices.length ? "must be chosen" : "is required") : localCheck(f.arg, value);
        showErr(f, why);
        if (why && !firstBad) firstBad = f;
      }
      summary();
      if (firstBad) {
        firstBad.input.focus();
        firstBad.input.closest(".field").scrollIntoView({ block: "center" });
        return;
      }
      const args = fields.filter((f) => !f.confirm).map((f) => ({ name: f.arg.name, value: f.get() }));
      sent = true;
      paintRun();
      runBtn.classList.add("busy");
      try {
        after(await start(action, args, true));
      } catch (e) {
        if (e.code === "unsure") {
          // It may have run: nothing is offered for a blind retry. A confirmation is asked
          // again, and the page looks for the run (its events, then actiond) before Run comes
          // back; a resend with the same values is the same press, which runs once at most.
          for (const f of fields) if (f.confirm) f.input.checked = false;
          unsure = e.message + " Checking whether it ran…";
          summary();
          if (await pressRan(action, e.trackingId)) return after(e.trackingId);
          if (!form.isConnected) return;
          const confirm = fields.find((f) => f.confirm);
          unsure = e.message + " See History before you press again. Run sends this same press again" + (confirm ? " once you tick “" + confirm.title + "”" : "") + ": it runs once at most.";
          summary();
          sent = false;
          paintRun();
          return;
        }
        // A refusal that names an argument goes next to it, by its title.
        const m = /^argument "((?:[^"\\]|\\.)*)": (.*)$/s.exec(e.message || "");
        const named = m && fields.find((f) => f.arg.name === m[1]);
        if (named) {
          showErr(named, explain(named.arg, m[2]));
          named.input.focus();
        } else serverSaid = e.message;
        summary();
        sent = false;
        paintRun();
      } finally {
        runBtn.classList.remove("busy");
      }
    });

    return {
      el: form,
      arm(on) {
        armed = on;
        paintRun();
      },
      // The page's events brought the run of a press whose answer did not arrive.
      ran(id) {
        pressRan(action, id).then((yes) => yes && after(id), () => {});
      },
      focus: () => {
        const first = form.querySelector("input, select, textarea");
        if (first) first.focus();
      },
    };
  }

  return { formView, findAction };
};
