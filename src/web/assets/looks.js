// How a component of the config looks on actiond's page: its classes, and its icon's stand-in
// when the icon is one OliveTin's page fetches from the internet (an Iconify name such as
// `mdi:garage`, or an `<iconify-icon>` element), which a board without internet access cannot
// show. The server warns about those icons at load by the same rule (config::is_online_icon).
// It keeps no state and touches no element; app.js calls it. It is loaded before app.js, and
// everything in it is under one name, ActiondLooks. tests/web/looks.test.mjs runs it in Node.
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

  return { online, initial, classes, selector };
})();
