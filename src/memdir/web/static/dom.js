// Small DOM helpers shared by every view. Text goes in with textContent, never innerHTML;
// attributes with setAttribute, event handlers as functions.

export const TYPES = ["user", "feedback", "project", "reference"];
export const SCOPES = ["project", "user"];

/** What the current page asks of the live refresh (app.js resets it on every render). */
export const view = { name: null, refresh: null, dirty: () => false, onChange: null };

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}
export const $ = (sel, root = document) => root.querySelector(sel);
export const main = () => $("#main");

export function when(ms) {
  if (ms === null || ms === undefined) return "never";
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}`
  );
}
export function timeEl(ms) {
  if (ms === null || ms === undefined) return h("span", { text: "never" });
  return h("time", { datetime: new Date(ms).toISOString(), text: when(ms) });
}
export function noteHref(id, scope) {
  return `#/note/${encodeURIComponent(id)}${scope ? `?scope=${encodeURIComponent(scope)}` : ""}`;
}
export function splitList(text) {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}
// What an action said (restored, synced, resolved), per page, kept across live refreshes
// of that page and dropped when the person goes elsewhere.
export const results = new Map();
export function resultArea(name, id) {
  const out = h("div", { id, "aria-live": "polite" });
  if (results.has(name)) out.append(results.get(name));
  return out;
}
export function showResult(name, out, node) {
  results.set(name, node);
  out.replaceChildren(node);
}
export function setStatus(text) {
  $("#status").textContent = text || "";
}

// The server's hint (a memdir.errors.Remedy value) as this page's next step.
const REMEDIES = {
  "sync-login": () => ["Sign in first: ", h("code", { text: "memdir sync login" }), "."],
  "sync-on": () => ["Turn sync on in ", h("a", { href: "#/sync", text: "Sync" }), "."],
  "sync-now": () => [h("a", { href: "#/sync", text: "Sync now" }), ", then try again."],
  doctor: () => ["Run ", h("code", { text: "memdir doctor" }), " to see which files."],
  backups: () => ["See the ", h("a", { href: "#/backups", text: "backups" }), "."],
  "audit-verify": () => ["Run ", h("code", { text: "memdir audit verify" }), "."],
  "other-project": () => ["Open memdir ui from the project this belongs to."],
  upgrade: () => ["Upgrade memdir."],
  unlock: () => [
    "Unlock the encrypted notes in a terminal: ",
    h("code", { text: "memdir unlock" }),
    ", then reload.",
  ],
};

export function errorBox(err, what) {
  const message = err && err.message ? err.message : String(err);
  const hint = err && err.data && err.data.error ? err.data.error.hint : null;
  const remedy = hint && REMEDIES[hint] ? REMEDIES[hint]() : null;
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", { text: what ? `${what}: ` : "" }),
    message,
    remedy ? h("p", { class: "remedy" }, remedy) : null,
  );
}

export function page(title, ...children) {
  const el = main();
  el.replaceChildren(h("h1", { text: title, id: "page-title" }), ...children);
  document.title = `${title} · memdir`;
  return el;
}

export function openDialog(title, content, buttons) {
  const dialog = $("#dialog");
  $("#dialog-title").textContent = title;
  $("#dialog-content").replaceChildren(...[content].flat());
  const close = () => dialog.close();
  $("#dialog-actions").replaceChildren(
    ...buttons.map((b) =>
      h("button", {
        type: "button",
        id: b.id,
        class: b.class,
        text: b.text,
        onclick: async () => {
          if (b.action) await b.action(close);
          else close();
        },
      }),
    ),
  );
  if (!dialog.open) dialog.showModal();
  return dialog;
}

export function field(label, control, hint) {
  return h(
    "div",
    { class: "field" },
    h("label", { for: control.id, text: label }),
    control,
    hint ? h("small", { class: "hint", text: hint }) : null,
  );
}
