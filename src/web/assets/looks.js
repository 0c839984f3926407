// How a component of the config looks on actiond's page: its classes, its icon's stand-in
// when the icon is one OliveTin's page fetches from the internet (an Iconify name such as
// `mdi:garage`, or an `<iconify-icon>` element), which a board without internet access cannot
// show, and the config's HTML made safe (`sanitize`: an allow-list of tags and attributes, no
// address of the API). The server warns about online icons at load by the same rule
// (config::is_online_icon). It keeps no state and touches no element of the page; app.js
// calls it. It is loaded before app.js, and everything in it is under one name, ActiondLooks.
// tests/web/looks.test.mjs runs its pure parts in Node.
"use strict";

var ActiondLooks = (() => {
  const ICONIFY_NAME = /^\s*[a-z][a-z0-9-]*:[a-z0-9-]+\s*$/;

  // Whether an icon (HTML from the config) needs the internet.
  const online = (html) => ICONIFY_NAME.test(html || "") || /<iconify-icon\b/i.test(html || "");

  // What stands in for such an icon: the title's first letter (a whole character, so an emoji
  // or an accented capital stays whole), upper-cased; "?" for an empty title.
  const initial = (title) => ([...((title || "").trim() || "?")][0] || "?").toUpperCase();

  // The classes a dashboard gives a component, each kept to letters, digits, `-` and `_`, so
  // that a class rendered from an entity file cannot reach past its attribute.
  const classes = (cssClass) => (cssClass || "").split(/\s+/).map((c) => c.replace(/[^\w-]/g, "")).filter(Boolean);
  // The same as a selector suffix for h(): ".a.b".
  const selector = (cssClass) => classes(cssClass).map((c) => "." + c).join("");

  // HTML from the config: an allow-list sanitizer over an inert template. It needs a browser
  // (document, location) only when called.
  const KEEP = new Set(("A ABBR B BLOCKQUOTE BR CODE DD DEL DIV DL DT EM H1 H2 H3 H4 H5 H6 HR I " +
    "IMG KBD LI MARK OL P PRE S SMALL SPAN STRONG SUB SUP TABLE TBODY TD TFOOT TH THEAD TR U UL").split(" "));
  const DROP = new Set("SCRIPT STYLE IFRAME OBJECT EMBED TEMPLATE NOSCRIPT SVG MATH FORM INPUT BUTTON TEXTAREA SELECT LINK META BASE FRAME FRAMESET".split(" "));
  const ATTRS = { A: ["href", "title"], IMG: ["src", "alt", "title", "width", "height"], ABBR: ["title"], TD: ["colspan", "rowspan"], TH: ["colspan", "rowspan"] };

  // An address on this board that reaches the API (a start URL above all): HTML from the
  // config or an entity file must never make the browser load one, nor link to one (the
  // page's own calls do not go through here).
  const API_PATH = /(^|\/)(api|svc\.api\.v1\.[^/]*)(\/|$)/i;
  function apiAddress(u) {
    if (u.origin !== location.origin) return false;
    let path = u.pathname;
    try { path = decodeURIComponent(path); } catch { return true; }
    return API_PATH.test(path);
  }

  // The banner's CSS from the config, without any declaration that loads something (`url()`,
  // `image-set()`): styles may colour the banner, never make the browser fetch an address.
  function safeCss(text) {
    const probe = document.createElement("div").style;
    probe.cssText = text || "";
    for (const name of [...probe]) {
      if (/(url|image-set|image|cross-fade|element)\s*\(/i.test(probe.getPropertyValue(name))) probe.removeProperty(name);
    }
    return probe.cssText;
  }

  function safeUrl(value, forImage) {
    try {
      const u = new URL(value, location.href);
      if (apiAddress(u)) return null;
      if (forImage) return u.origin === location.origin || /^data:image\/(png|gif|jpeg|webp);/i.test(value) ? u.href : null;
      return ["http:", "https:", "mailto:"].includes(u.protocol) ? u.href : null;
    } catch {
      return null;
    }
  }

  function sanitize(html) {
    // A template's content is parsed but never rendered: its scripts do not run. Chromium
    // still tries an image's inline onerror there; the page's Content-Security-Policy
    // (script-src 'self', served with index.html) refuses it, and nothing of it is copied.
    const doc = document.createElement("template");
    doc.innerHTML = String(html || "");
    const out = document.createDocumentFragment();
    const walk = (src, dst) => {
      for (const n of src.childNodes) {
        if (n.nodeType === Node.TEXT_NODE) dst.append(n.data);
        if (n.nodeType !== Node.ELEMENT_NODE || DROP.has(n.tagName)) continue;
        if (!KEEP.has(n.tagName)) {
          walk(n, dst); // unknown wrapper: keep its text, lose the tag
          continue;
        }
        const el = document.createElement(n.tagName);
        for (const name of ATTRS[n.tagName] || []) {
          const v = n.getAttribute(name);
          if (v === null) continue;
          if (name === "href" || name === "src") {
            const u = safeUrl(v, name === "src");
            if (u) el.setAttribute(name, u);
          } else el.setAttribute(name, v);
        }
        const cls = n.getAttribute("class");
        if (cls) el.className = cls.replace(/[^\w -]/g, "");
        if (n.tagName === "A") el.setAttribute("rel", "noopener noreferrer");
        walk(n, el);
        dst.append(el);
      }
    };
    walk(doc.content, out);
    return out;
  }

  return { online, initial, classes, selector, sanitize, safeUrl, safeCss };
})();
