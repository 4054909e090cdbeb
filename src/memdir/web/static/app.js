// The memory page (docs/web.md): hash routes over the JSON API. No framework, no build.
// Every value from the server goes into the page with textContent; the one exception is a
// note's rendered body (`html`), which the server sanitises (raw HTML off, safe URLs only).

// -- the token: first, before anything else ---------------------------------------------
const TOKEN_KEY = "memdir.token";
(function takeToken() {
  const match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search + "#/");
  }
})();
const token = () => sessionStorage.getItem(TOKEN_KEY);

const TYPES = ["user", "feedback", "project", "reference"];
const SCOPES = ["project", "user"];
const POLL_MS = 2000;
const SEARCH_DEBOUNCE_MS = 120;

// -- small DOM helpers (never innerHTML) --------------------------------------------------
function h(tag, attrs, ...children) {
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
function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}
const $ = (sel, root = document) => root.querySelector(sel);
const main = () => $("#main");

function when(ms) {
  if (ms === null || ms === undefined) return "never";
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}`
  );
}
function timeEl(ms) {
  if (ms === null || ms === undefined) return h("span", { text: "never" });
  return h("time", { datetime: new Date(ms).toISOString(), text: when(ms) });
}
function noteHref(id, scope) {
  return `#/note/${encodeURIComponent(id)}${scope ? `?scope=${encodeURIComponent(scope)}` : ""}`;
}
function splitList(text) {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}
// What an action said (restored, synced, resolved), per page, kept across live refreshes
// of that page and dropped when the person goes elsewhere.
const results = new Map();
function resultArea(name, id) {
  const out = h("div", { id, "aria-live": "polite" });
  if (results.has(name)) out.append(results.get(name));
  return out;
}
function showResult(name, out, node) {
  results.set(name, node);
  out.replaceChildren(node);
}
function setStatus(text) {
  $("#status").textContent = text || "";
}

// -- the API ------------------------------------------------------------------------------
class ApiError extends Error {
  constructor(status, kind, message, data) {
    super(message);
    this.status = status;
    this.kind = kind;
    this.data = data;
  }
}

async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${token()}`, Accept: "application/json" };
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(`/api/${path}`, init);
  } catch (err) {
    throw new ApiError(0, "unavailable", "memdir ui is not answering (was it stopped?)", null);
  }
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    if (response.status === 401) showNoToken(true);
    throw new ApiError(
      response.status,
      error.kind || String(response.status),
      error.message || `the request failed (${response.status})`,
      data,
    );
  }
  return data;
}
const qs = (params) => {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) out.set(k, v);
  const text = out.toString();
  return text ? `?${text}` : "";
};

function errorBox(err, what) {
  const message = err instanceof ApiError ? err.message : String(err);
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", { text: what ? `${what}: ` : "" }),
    message,
  );
}

function showNoToken(wrong) {
  stopPolling();
  const el = main();
  el.replaceChildren(
    h(
      "section",
      { class: "notice", role: "alert", id: "no-token" },
      h("h1", { text: wrong ? "This page's key is not valid" : "No key for this page" }),
      h("p", {
        text:
          "Open the link memdir ui printed (it carries a one-time key after #token=). " +
          "Each run of memdir ui makes a new key; an old tab or a bookmark cannot reach your memory.",
      }),
    ),
  );
}

// -- routing ------------------------------------------------------------------------------
function parseRoute() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, query] = raw.split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { parts, params, name: parts[0] || "list" };
}

let view = { name: null, refresh: null, dirty: () => false, onChange: null };
let renderSeq = 0;

async function render() {
  const seq = ++renderSeq;
  const route = parseRoute();
  for (const a of document.querySelectorAll("[data-nav]")) {
    if (a.dataset.nav === route.name) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (route.name !== "search") {
    const q = $("#q");
    if (document.activeElement !== q) q.value = "";
  }
  const handlers = {
    list: viewList,
    search: viewSearch,
    note: route.parts[2] === "edit" ? viewEditor : viewNote,
    new: viewEditor,
    tidy: viewTidy,
    backups: viewBackups,
    sync: viewSync,
    conflicts: viewConflicts,
  };
  const handler = handlers[route.name] || viewMissing;
  view = { name: route.name, refresh: null, dirty: () => false, onChange: null };
  try {
    await handler(route, () => seq === renderSeq);
  } catch (err) {
    if (seq === renderSeq) main().replaceChildren(errorBox(err, "could not show this page"));
  }
}

function page(title, ...children) {
  const el = main();
  el.replaceChildren(h("h1", { text: title, id: "page-title" }), ...children);
  document.title = `${title} · memdir`;
  return el;
}
function viewMissing() {
  page("Not here", h("p", {}, "No such page. ", h("a", { href: "#/", text: "See all notes" })));
}

// -- the list -----------------------------------------------------------------------------
function noteRow(n) {
  return h(
    "tr",
    {},
    h("td", {}, h("a", { href: noteHref(n.id, n.scope), text: n.summary || n.id })),
    h("td", { class: "mono", text: n.id }),
    h("td", { text: n.type || "—" }),
    h("td", {}, (n.tags || []).map((t) => h("span", { class: "tag", text: t }))),
    h("td", {}, h("span", { class: `scope scope-${n.scope}`, text: n.scope })),
    h("td", {}, n.private ? h("span", { class: "badge", text: "private" }) : null),
    h("td", {}, timeEl(n.updated)),
  );
}

async function viewList(route, current) {
  const filters = {
    scope: route.params.get("scope") || "",
    type: route.params.get("type") || "",
    tag: route.params.get("tag") || "",
  };
  const data = await api("GET", `notes${qs(filters)}`);
  if (!current()) return;
  const notes = data.notes || [];
  const tags = new Set();
  for (const n of notes) for (const t of n.tags || []) tags.add(t);
  if (filters.tag) tags.add(filters.tag);

  const select = (name, label, values) =>
    h(
      "label",
      {},
      label,
      " ",
      h(
        "select",
        {
          name,
          id: `filter-${name}`,
          onchange: (e) => {
            const next = { ...filters, [name]: e.target.value };
            location.hash = `#/${qs(next)}`;
          },
        },
        h("option", { value: "", text: "all" }),
        values.map((v) => h("option", { value: v, text: v, selected: v === filters[name] })),
      ),
    );
  const table = notes.length
    ? h(
        "table",
        { class: "notes", id: "notes" },
        h("caption", { class: "visually-hidden", text: "Notes, newest first" }),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Summary", "Id", "Type", "Tags", "Scope", "", "Updated"].map((t) =>
              h("th", { scope: "col", text: t }),
            ),
          ),
        ),
        h("tbody", {}, notes.map(noteRow)),
      )
    : h("p", { class: "empty", text: "No notes here yet." });
  page(
    "Notes",
    h(
      "form",
      { class: "filters", "aria-label": "Filters", onsubmit: (e) => e.preventDefault() },
      select("scope", "Scope", SCOPES),
      select("type", "Type", TYPES),
      select("tag", "Tag", [...tags].sort()),
      h("span", { class: "count", text: `${notes.length} notes` }),
    ),
    table,
  );
  view.refresh = () => viewList(route, current);
}

// -- search as you type -------------------------------------------------------------------
let searchTimer = null;
let searchSeq = 0;
function onSearchInput() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    const q = $("#q").value.trim();
    const mode = $("#mode").value;
    const target = q ? `#/search${qs({ q, mode: mode === "any" ? "" : mode })}` : "#/";
    if (parseRoute().name === "search" && q) {
      history.replaceState(null, "", target);
      render();
    } else if (location.hash !== target) {
      location.hash = target;
    }
  }, SEARCH_DEBOUNCE_MS);
}

async function viewSearch(route, current) {
  const q = route.params.get("q") || "";
  const mode = route.params.get("mode") || "any";
  const input = $("#q");
  if (input.value.trim() !== q && document.activeElement !== input) input.value = q;
  $("#mode").value = mode;
  const seq = ++searchSeq;
  const data = await api("GET", `search${qs({ q, mode, limit: "30" })}`);
  if (!current() || seq !== searchSeq) return;
  const hits = data.hits || [];
  const list = h(
    "ol",
    { class: "hits", id: "hits" },
    hits.map((hit) =>
      h(
        "li",
        {},
        h("a", { href: noteHref(hit.id, hit.scope), text: hit.summary || hit.id }),
        " ",
        h("span", { class: `scope scope-${hit.scope}`, text: hit.scope }),
        hit.superseded_by
          ? h("span", { class: "badge", text: `superseded by ${hit.superseded_by}` })
          : null,
        h("p", { class: "snippet", text: hit.snippet || "" }),
      ),
    ),
  );
  const warnings = (data.warnings || []).map((w) => h("p", { class: "warning", text: w }));
  page(
    `Search: ${q}`,
    h("p", {
      class: "count",
      id: "hit-count",
      text: `${hits.length} ${hits.length === 1 ? "note" : "notes"} found` +
        (data.method ? ` (${data.method})` : ""),
    }),
    warnings,
    hits.length ? list : h("p", { class: "empty", text: "Nothing matches." }),
  );
  view.refresh = () => viewSearch(route, current);
}

// -- a note -------------------------------------------------------------------------------
function linkList(items, emptyText, id) {
  if (!items || !items.length) return h("p", { class: "empty", text: emptyText });
  return h(
    "ul",
    { class: "links", id },
    items.map((l) => {
      const target = l.target || l.id;
      if (l.scope === null || l.scope === undefined) {
        return h(
          "li",
          { class: "dangling" },
          h("span", { class: "mono", text: target }),
          " ",
          h("span", { class: "badge warn", text: "dangling: no such note" }),
        );
      }
      return h(
        "li",
        {},
        h("a", { href: noteHref(target, l.scope), text: l.summary || target }),
        " ",
        h("span", { class: `scope scope-${l.scope}`, text: l.scope }),
      );
    }),
  );
}

function diffView(text) {
  const pre = h("pre", { class: "diff", id: "diff" });
  const lines = (text || "").replace(/\n$/, "").split("\n");
  for (const [i, line] of lines.entries()) {
    // A header line that kept its own newline leaves an empty line behind: not content.
    if (line === "" && i > 0 && /^(---|\+\+\+) /.test(lines[i - 1])) continue;
    let cls = "";
    if (line.startsWith("+++") || line.startsWith("---")) cls = "meta";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    pre.append(h("span", { class: cls, text: line }), "\n");
  }
  if (!text) pre.append(h("span", { text: "(no differences)" }));
  return pre;
}

async function historySection(note) {
  const scope = note.scope;
  const data = await api("GET", `notes/${encodeURIComponent(note.id)}/history${qs({ scope })}`);
  // Newest first, whatever order the server lists them in.
  const entries = (data.entries || [])
    .map((e, i) => ({ ...e, i }))
    .sort((x, y) => (y.current ? 1 : 0) - (x.current ? 1 : 0) || (y.ts || 0) - (x.ts || 0) || y.i - x.i);
  const section = h("section", { class: "history", "aria-labelledby": "history-title" });
  section.append(h("h2", { id: "history-title", text: `History (${entries.length})` }));
  if (entries.length < 1) {
    section.append(h("p", { class: "empty", text: "No earlier versions." }));
    return section;
  }
  const list = h(
    "ol",
    { class: "entries" },
    entries.map((e) =>
      h(
        "li",
        {},
        timeEl(e.ts),
        ` ${e.event || ""} `,
        h("span", { class: "mono", text: String(e.revision).slice(0, 12) }),
        e.current ? h("span", { class: "badge", text: "current" }) : null,
      ),
    ),
  );
  if (entries.length < 2) {
    section.append(list, h("p", { class: "empty", text: "No earlier versions to compare." }));
    return section;
  }
  const options = (selected) =>
    entries.map((e, i) =>
      h("option", {
        value: e.revision,
        selected: i === selected,
        text: `${when(e.ts)} · ${e.event || ""} · ${String(e.revision).slice(0, 10)}${
          e.current ? " (current)" : ""
        }`,
      }),
    );
  const a = h("select", { id: "diff-a" }, options(Math.min(1, entries.length - 1)));
  const b = h("select", { id: "diff-b" }, options(0));
  const out = h("div", { class: "diff-out" });
  const show = async () => {
    try {
      const d = await api(
        "GET",
        `notes/${encodeURIComponent(note.id)}/diff${qs({ a: a.value, b: b.value, scope })}`,
      );
      out.replaceChildren(diffView(d.diff));
    } catch (err) {
      out.replaceChildren(errorBox(err, "no diff"));
    }
  };
  section.append(
    list,
    h(
      "div",
      { class: "diff-pick" },
      h("label", { for: "diff-a" }, "From "),
      a,
      h("label", { for: "diff-b" }, " to "),
      b,
      " ",
      h("button", { type: "button", id: "show-diff", onclick: show, text: "Show diff" }),
    ),
    out,
  );
  return section;
}

function renderedBody(note) {
  const body = h("div", { class: "body", id: "note-body" });
  // The server renders Markdown with raw HTML off and only safe URL schemes; see docs/web.md.
  body.innerHTML = note.html || "";
  const dangling = new Set(
    (note.links || []).filter((l) => l.scope === null || l.scope === undefined).map((l) => l.target),
  );
  for (const a of body.querySelectorAll("a[href]")) {
    const href = a.getAttribute("href");
    const m = /^#\/note\/([^?]+)/.exec(href);
    if (m && dangling.has(decodeURIComponent(m[1]))) {
      a.classList.add("dangling");
      a.title = "dangling: no such note";
    } else if (!href.startsWith("#")) {
      a.rel = "noopener noreferrer";
    }
  }
  return body;
}

async function viewNote(route, current) {
  const id = route.parts[1];
  const scope = route.params.get("scope") || "";
  let note;
  try {
    note = await api("GET", `notes/${encodeURIComponent(id)}${qs({ scope })}`);
  } catch (err) {
    if (!current()) return;
    if (err.status === 404) {
      page("No such note", h("p", { text: `There is no note ${id} (any more).` }));
      view.refresh = () => viewNote(route, current);
      return;
    }
    throw err;
  }
  if (!current()) return;
  const history = await historySection(note).catch((err) => errorBox(err, "no history"));
  if (!current()) return;
  const supersededBy = [note.superseded_by || []].flat();
  const meta = h(
    "dl",
    { class: "meta" },
    h("dt", { text: "Id" }),
    h("dd", { class: "mono", text: note.id }),
    h("dt", { text: "Scope" }),
    h("dd", { text: note.scope }),
    h("dt", { text: "Type" }),
    h("dd", { text: note.type || "—" }),
    h("dt", { text: "Tags" }),
    h("dd", {}, (note.tags || []).length
      ? note.tags.map((t) => h("a", { class: "tag", href: `#/${qs({ tag: t })}`, text: t }))
      : "—"),
    h("dt", { text: "Updated" }),
    h("dd", {}, timeEl(note.updated)),
    h("dt", { text: "Created" }),
    h("dd", {}, timeEl(note.created)),
    (note.supersedes || []).length ? h("dt", { text: "Supersedes" }) : null,
    (note.supersedes || []).length
      ? h("dd", {}, note.supersedes.map((s) => [h("a", { href: noteHref(s), text: s }), " "]))
      : null,
    supersededBy.length ? h("dt", { text: "Superseded by" }) : null,
    supersededBy.length
      ? h("dd", {}, supersededBy.map((s) => [h("a", { href: noteHref(s), text: s }), " "]))
      : null,
    note.private ? h("dt", { text: "Private" }) : null,
    note.private ? h("dd", { text: "yes: shown here only, never to MCP" }) : null,
  );
  page(
    note.summary || note.id,
    h(
      "div",
      { class: "actions" },
      h("a", {
        class: "button",
        id: "edit",
        href: `#/note/${encodeURIComponent(note.id)}/edit${qs({ scope: note.scope })}`,
        text: "Edit",
      }),
      h("button", {
        type: "button",
        id: "forget",
        class: "danger",
        text: "Forget…",
        onclick: () => forgetFlow(note),
      }),
    ),
    meta,
    renderedBody(note),
    h(
      "section",
      { class: "linkage" },
      h(
        "div",
        {},
        h("h2", { text: "Links" }),
        linkList(note.links, "This note links to no other.", "links"),
      ),
      h(
        "div",
        {},
        h("h2", { text: "Backlinks" }),
        linkList(note.backlinks, "No note links here.", "backlinks"),
      ),
    ),
    history,
  );
  view.refresh = () => viewNote(route, current);
}

// -- dialogs ------------------------------------------------------------------------------
function openDialog(title, content, buttons) {
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

async function forgetFlow(note) {
  let plan;
  try {
    plan = await api("POST", `notes/${encodeURIComponent(note.id)}/forget`, {
      confirm: false,
      scope: note.scope,
    });
  } catch (err) {
    openDialog("Cannot forget this note", errorBox(err), [{ text: "Close", id: "dialog-close" }]);
    return;
  }
  const facts = h(
    "ul",
    { id: "forget-plan" },
    h("li", { text: `Note: ${note.id} (${plan.scope || note.scope})` }),
    plan.path ? h("li", { text: `File: ${plan.path}` }) : null,
    plan.history_versions !== undefined
      ? h("li", { text: `Earlier versions kept in history: ${plan.history_versions}` })
      : null,
    plan.backups !== undefined ? h("li", { text: `Backups of it: ${plan.backups}` }) : null,
    plan.keeps_backup !== undefined
      ? h("li", {
          text: plan.keeps_backup
            ? "A backup of it is kept: it can be restored from Backups."
            : "No backup is kept.",
        })
      : null,
  );
  const hash = plan.hash || (plan.note && plan.note.hash);
  openDialog("Forget this note?", [h("p", { text: note.summary }), facts], [
    { text: "Cancel", id: "forget-cancel" },
    {
      text: "Forget it",
      id: "forget-confirm",
      class: "danger",
      action: async (close) => {
        try {
          await api("POST", `notes/${encodeURIComponent(note.id)}/forget`, {
            confirm: true,
            scope: note.scope,
            hash,
          });
          close();
          setStatus(`Forgot ${note.id}.`);
          location.hash = "#/";
        } catch (err) {
          $("#dialog-content").append(errorBox(err, "not forgotten"));
        }
      },
    },
  ]);
}

// -- the editor ---------------------------------------------------------------------------
function field(label, control, hint) {
  return h(
    "div",
    { class: "field" },
    h("label", { for: control.id, text: label }),
    control,
    hint ? h("small", { class: "hint", text: hint }) : null,
  );
}

function noteColumn(title, n, id) {
  return h(
    "section",
    { class: "version", id },
    h("h3", { text: title }),
    h(
      "dl",
      { class: "meta" },
      h("dt", { text: "Summary" }),
      h("dd", { text: n.summary || "" }),
      h("dt", { text: "Type" }),
      h("dd", { text: n.type || "—" }),
      h("dt", { text: "Tags" }),
      h("dd", { text: (n.tags || []).join(", ") || "—" }),
    ),
    h("pre", { class: "text", text: n.body || "" }),
  );
}

async function viewEditor(route, current) {
  const isNew = route.name === "new";
  const scopeParam = route.params.get("scope") || "";
  let note = {
    summary: "",
    body: "",
    type: "",
    tags: [],
    supersedes: [],
    private: false,
    scope: scopeParam,
  };
  if (!isNew) {
    note = await api("GET", `notes/${encodeURIComponent(route.parts[1])}${qs({ scope: scopeParam })}`);
    if (!current()) return;
  }
  let revision = note.revision || null;
  const opened = { summary: note.summary, body: note.body || "" };
  const summary = h("input", { id: "summary", name: "summary", required: true, value: note.summary || "" });
  const type = h(
    "select",
    { id: "type", name: "type" },
    h("option", { value: "", text: "(none)" }),
    TYPES.map((t) => h("option", { value: t, text: t, selected: t === note.type })),
  );
  const tags = h("input", { id: "tags", name: "tags", value: (note.tags || []).join(", ") });
  const body = h("textarea", { id: "body", name: "body", rows: 14 });
  body.value = note.body || "";
  const supersedes = h("input", {
    id: "supersedes",
    name: "supersedes",
    value: (note.supersedes || []).join(", "),
  });
  const priv = h("input", { id: "private", name: "private", type: "checkbox", checked: !!note.private });
  const scope = h(
    "select",
    { id: "scope", name: "scope", disabled: !isNew },
    isNew ? h("option", { value: "", text: "(default for the type)" }) : null,
    SCOPES.map((s) => h("option", { value: s, text: s, selected: s === note.scope })),
  );
  const changed = h("div", { id: "changed-banner", class: "warning", role: "status", hidden: true });
  const problems = h("div", { id: "save-problem", "aria-live": "assertive" });
  const conflict = h("div", { id: "conflict-area" });

  const values = () => ({
    summary: summary.value,
    body: body.value,
    type: type.value || null,
    tags: splitList(tags.value),
    supersedes: splitList(supersedes.value),
    private: priv.checked,
    scope: scope.value || null,
  });

  async function save(over) {
    problems.replaceChildren();
    const v = values();
    try {
      let written;
      if (isNew) written = await api("POST", "notes", v);
      else {
        written = await api("PUT", `notes/${encodeURIComponent(note.id)}`, {
          ...v,
          scope: note.scope,
          revision: over || revision,
        });
      }
      const saved = written.note || written;
      setStatus(`Saved ${saved.id}.`);
      view.dirty = () => false;
      location.hash = noteHref(saved.id, saved.scope);
    } catch (err) {
      if (err.status === 409 && err.data && err.data.current) showConflict(err.data.current);
      else problems.replaceChildren(errorBox(err, "not saved"));
    }
  }

  function showConflict(theirs) {
    conflict.replaceChildren(
      h(
        "section",
        { class: "stale", role: "alert", "aria-labelledby": "stale-title" },
        h("h2", { id: "stale-title", text: "This note changed since you opened it" }),
        h("p", {
          text:
            "Someone (another tab, an agent, a sync) saved it meanwhile. Nothing was overwritten. " +
            "Choose which version to keep.",
        }),
        h(
          "div",
          { class: "side-by-side" },
          noteColumn("Yours (this form)", values(), "stale-mine"),
          noteColumn("The current one", theirs, "stale-theirs"),
        ),
        h(
          "div",
          { class: "actions" },
          h("button", {
            type: "button",
            id: "keep-mine",
            text: "Keep mine (save again over the current)",
            onclick: () => save(theirs.revision),
          }),
          h("button", {
            type: "button",
            id: "take-theirs",
            text: "Take theirs",
            onclick: () => {
              summary.value = theirs.summary || "";
              body.value = theirs.body || "";
              type.value = theirs.type || "";
              tags.value = (theirs.tags || []).join(", ");
              supersedes.value = (theirs.supersedes || []).join(", ");
              priv.checked = !!theirs.private;
              revision = theirs.revision;
              opened.summary = theirs.summary;
              opened.body = theirs.body || "";
              conflict.replaceChildren();
              changed.hidden = true;
              setStatus("Took the current version; nothing of yours was saved.");
            },
          }),
        ),
      ),
    );
    conflict.querySelector("#keep-mine").focus();
  }

  const form = h(
    "form",
    {
      class: "editor",
      id: "editor",
      onsubmit: (e) => {
        e.preventDefault();
        save();
      },
    },
    changed,
    field("Summary", summary, "one line: what a reader needs to know"),
    h(
      "div",
      { class: "row" },
      field("Type", type),
      field("Scope", scope),
    ),
    field("Tags", tags, "comma-separated"),
    field("Body (Markdown; [[id]] links a note)", body),
    field("Supersedes", supersedes, "ids of notes this one replaces, comma-separated"),
    h(
      "div",
      { class: "field check" },
      priv,
      h("label", { for: "private", text: "Private (shown here only, never to MCP)" }),
    ),
    problems,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", id: "save", text: isNew ? "Save new note" : "Save" }),
      h("a", {
        class: "button secondary",
        href: isNew ? "#/" : noteHref(note.id, note.scope),
        text: "Cancel",
      }),
    ),
    conflict,
  );
  page(isNew ? "New note" : `Edit: ${note.summary}`, form);
  summary.focus();
  view.dirty = () => summary.value !== opened.summary || body.value !== opened.body;
  if (!isNew) {
    // Live: never touch the form; say that the note changed underneath it.
    view.onChange = async () => {
      try {
        const now = await api("GET", `notes/${encodeURIComponent(note.id)}${qs({ scope: note.scope })}`);
        if (now.revision !== revision) {
          changed.hidden = false;
          changed.textContent =
            "This note changed since you opened it. Saving will show both versions first.";
        }
      } catch (err) {
        changed.hidden = false;
        changed.textContent =
          err.status === 404 ? "This note was removed since you opened it." : err.message;
      }
    };
  }
}

// -- the tidy-up list ---------------------------------------------------------------------
const KIND_LABEL = {
  same_topic: "Same topic",
  broken_link: "Broken link",
  missing_file: "Missing file",
  unused: "Unused",
  too_long: "Too long",
  contradiction: "Contradiction",
};

async function viewTidy(route, current) {
  const data = await api("GET", "tidy");
  if (!current()) return;
  const findings = data.findings || [];
  const list = h("ul", { class: "findings", id: "findings" });
  for (const f of findings) list.append(findingItem(f));
  page(
    "Tidy up",
    h("p", { class: "count", text: `${findings.length} ${findings.length === 1 ? "finding" : "findings"}` }),
    findings.length ? list : h("p", { class: "empty", text: "Nothing to tidy up." }),
  );
  view.refresh = () => viewTidy(route, current);
  // An open merge draft is never thrown away by a live refresh.
  view.dirty = () => !!main().querySelector(".merge-draft");
}

function findingItem(f) {
  const box = h("div", { class: "finding-actions" });
  const notes = f.notes || [];
  const dismiss = h("button", {
    type: "button",
    class: "secondary dismiss",
    text: "Dismiss",
    onclick: async () => {
      try {
        await api("POST", "tidy/dismiss", { id: f.id });
        setStatus("Dismissed until one of its notes changes.");
        li.remove();
      } catch (err) {
        box.append(errorBox(err, "not dismissed"));
      }
    },
  });
  const buttons = [];
  if (f.kind === "same_topic" || f.kind === "contradiction") {
    buttons.push(
      h("button", { type: "button", class: "merge", text: "Merge…", onclick: () => mergeFlow(f, box) }),
    );
  }
  if (f.kind === "contradiction" && notes.length === 2) {
    const [a, b] = notes;
    const supersede = (old, by) =>
      h("button", {
        type: "button",
        class: "supersede",
        text: `${by} supersedes ${old}`,
        onclick: async () => {
          try {
            await api("POST", "supersede", { old, by, scope: f.scope });
            setStatus(`${by} now supersedes ${old}.`);
            li.remove();
          } catch (err) {
            box.append(errorBox(err, "not superseded"));
          }
        },
      });
    buttons.push(supersede(a, b), supersede(b, a));
  }
  buttons.push(dismiss);
  const li = h(
    "li",
    { class: `finding kind-${f.kind}`, "data-finding": f.id },
    h("h2", {}, h("span", { class: "kind", text: KIND_LABEL[f.kind] || f.kind }), " ",
      h("span", { class: `scope scope-${f.scope}`, text: f.scope })),
    h("p", { class: "reason", text: f.reason || "" }),
    h("ul", { class: "finding-notes" }, notes.map((id) =>
      h("li", {}, h("a", { href: noteHref(id, f.scope), text: id })))),
    h("div", { class: "actions" }, buttons),
    box,
  );
  return li;
}

async function mergeFlow(f, box) {
  box.replaceChildren(h("p", { text: "Drafting the merge…" }));
  let plan;
  try {
    plan = await api("POST", "tidy/merge", { ids: f.notes, scope: f.scope });
  } catch (err) {
    box.replaceChildren(errorBox(err, "no merge"));
    return;
  }
  const uid = f.id.replace(/[^a-zA-Z0-9_-]/g, "");
  const summary = h("input", { id: `merge-summary-${uid}`, class: "merge-summary", value: plan.draft.summary });
  const body = h("textarea", { id: `merge-body-${uid}`, class: "merge-body", rows: 10 });
  body.value = plan.draft.body;
  const problems = h("div", { "aria-live": "assertive" });
  const deletes =
    plan.deletes || (plan.notes || []).map((n) => n.id).filter((id) => id !== plan.keep);
  box.replaceChildren(
    h(
      "form",
      {
        class: "merge-draft",
        onsubmit: async (e) => {
          e.preventDefault();
          problems.replaceChildren();
          try {
            let final = plan;
            if (summary.value !== plan.draft.summary || body.value !== plan.draft.body) {
              final = await api("POST", "tidy/merge", {
                ids: f.notes,
                scope: f.scope,
                summary: summary.value,
                body: body.value,
              });
            }
            const result = await api("POST", "tidy/apply", { plan: final });
            setStatus(`Merged into ${result.kept || final.keep}.`);
            location.hash = noteHref(result.kept || final.keep, final.scope);
          } catch (err) {
            problems.replaceChildren(errorBox(err, "not merged"));
          }
        },
      },
      h("p", {
        text: `Keeps ${plan.keep} (the oldest) and deletes ${deletes.join(", ") || "nothing"}; ` +
          "links to the deleted notes are rewritten, every changed note is backed up.",
      }),
      (plan.warnings || []).map((w) => h("p", { class: "warning", text: w })),
      field("Merged summary", summary),
      field("Merged body", body),
      problems,
      h(
        "div",
        { class: "actions" },
        h("button", { type: "submit", class: "apply-merge", text: "Apply merge" }),
        h("button", { type: "button", class: "secondary", text: "Cancel", onclick: () => box.replaceChildren() }),
      ),
    ),
  );
  summary.focus();
}

// -- backups ------------------------------------------------------------------------------
async function viewBackups(route, current) {
  const data = await api("GET", "backups");
  if (!current()) return;
  const backups = data.backups || [];
  const out = resultArea("backups", "backup-result");
  const rows = backups.map((b) =>
    h(
      "tr",
      {},
      h("td", {}, timeEl(b.created_at)),
      h("td", {}, b.note_id ? h("a", { href: noteHref(b.note_id, b.scope), text: b.note_id }) : "—"),
      h("td", { text: b.scope || "—" }),
      h("td", { text: b.reason || "—" }),
      h("td", { class: "mono", text: b.id }),
      h(
        "td",
        {},
        h("button", {
          type: "button",
          class: "restore",
          "data-backup": b.id,
          text: "Restore",
          onclick: () =>
            openDialog(
              "Restore this backup?",
              h("p", {
                text: `Note ${b.note_id || "?"} goes back to the version of ${when(b.created_at)}. ` +
                  "The version it replaces is backed up first.",
              }),
              [
                { text: "Cancel", id: "restore-cancel" },
                {
                  text: "Restore",
                  id: "restore-confirm",
                  action: async (close) => {
                    try {
                      const r = await api("POST", `backups/${encodeURIComponent(b.id)}/restore`);
                      close();
                      const id = (r.note && r.note.id) || b.note_id;
                      showResult(
                        "backups",
                        out,
                        h("p", { class: "ok", role: "status" }, "Restored ",
                          h("a", { href: noteHref(id, r.note && r.note.scope), text: id }), "."),
                      );
                    } catch (err) {
                      $("#dialog-content").append(errorBox(err, "not restored"));
                    }
                  },
                },
              ],
            ),
        }),
      ),
    ),
  );
  page(
    "Backups",
    h("p", { class: "count", text: `The latest ${backups.length} backups` }),
    out,
    backups.length
      ? h(
          "table",
          { class: "backups", id: "backups" },
          h("thead", {}, h("tr", {}, ["When", "Note", "Scope", "Reason", "Backup", ""].map((t) =>
            h("th", { scope: "col", text: t })))),
          h("tbody", {}, rows),
        )
      : h("p", { class: "empty", text: "No backups yet." }),
  );
  view.refresh = () => viewBackups(route, current);
}

// -- sync ---------------------------------------------------------------------------------
function pullCounts(s) {
  const pull = s.last_pull || s.pull || null;
  if (!pull) return "—";
  return `${pull.added ?? 0} added, ${pull.changed ?? 0} changed, ${pull.removed ?? 0} removed`;
}

async function viewSync(route, current) {
  const status = await api("GET", "sync");
  if (!current()) return;
  const out = resultArea("sync", "sync-result");
  const scopes = status.scopes || [];
  const toggle = h("button", {
    type: "button",
    role: "switch",
    id: "sync-switch",
    "aria-checked": status.enabled ? "true" : "false",
    text: status.enabled ? "Sync is on" : "Sync is off",
    onclick: async () => {
      toggle.disabled = true;
      try {
        await api("POST", "sync/switch", { on: !status.enabled });
        await viewSync(route, current);
      } catch (err) {
        toggle.disabled = false;
        out.replaceChildren(errorBox(err, "sync not switched"));
      }
    },
  });
  const now = h("button", {
    type: "button",
    id: "sync-now",
    text: "Sync now",
    disabled: !status.enabled,
    onclick: async () => {
      now.disabled = true;
      out.replaceChildren(h("p", { text: "Syncing…" }));
      try {
        const run = await api("POST", "sync/now");
        results.set("sync", syncRunView(run));
        await viewSync(route, current);
      } catch (err) {
        now.disabled = false;
        out.replaceChildren(errorBox(err, "sync failed"));
      }
    },
  });
  const rows = scopes.map((s) =>
    h(
      "tr",
      { "data-scope": s.scope },
      h("th", { scope: "row", text: s.scope }),
      h("td", {}, timeEl(s.last_sync)),
      h("td", { text: pullCounts(s) }),
      h("td", { text: s.version ?? "—" }),
      h("td", {}, s.conflicts ? h("a", { href: "#/conflicts", text: `${s.conflicts}` }) : "0"),
      h("td", {}, s.error || s.paused
        ? h("span", { class: "error-text", text: `${s.scope}: ${errorText(s.error) || s.paused}` })
        : "ok"),
    ),
  );
  page(
    "Sync",
    h(
      "p",
      {},
      status.server
        ? `Signed in to ${status.server}${status.user ? ` as ${status.user}` : ""}.`
        : "Not signed in to a sync server (memdir sync login).",
    ),
    h("div", { class: "actions" }, toggle, now),
    out,
    scopes.length
      ? h(
          "table",
          { class: "sync", id: "sync-scopes" },
          h("thead", {}, h("tr", {}, ["Scope", "Last sync", "Last pull", "Version", "Conflicts", "State"]
            .map((t) => h("th", { scope: "col", text: t })))),
          h("tbody", {}, rows),
        )
      : null,
  );
  view.refresh = () => viewSync(route, current);
}

function errorText(error) {
  if (!error) return "";
  return typeof error === "string" ? error : error.message || error.kind || "failed";
}

function syncRunView(run) {
  const reports = run.reports || [];
  const paused = Object.entries(run.paused || {});
  const errors = Object.entries(run.errors || {});
  return h(
    "ul",
    { class: "sync-run" },
    reports.map((r) =>
      h("li", {
        text: `${r.scope}: ${(r.pulled || []).length} pulled, ${(r.pushed || []).length} pushed, ` +
          `${(r.merged || []).length} merged, ${(r.conflicts || []).length} conflicts`,
      }),
    ),
    paused.map(([scope, why]) => h("li", { class: "error-text", text: `${scope}: ${why}` })),
    errors.map(([scope, error]) =>
      h("li", { class: "error-text", text: `${scope}: ${errorText(error)}` }),
    ),
    !reports.length && !paused.length && !errors.length
      ? h("li", { text: "Nothing to sync." })
      : null,
  );
}

// -- conflicts ----------------------------------------------------------------------------
async function viewConflicts(route, current) {
  const data = await api("GET", "sync/conflicts");
  if (!current()) return;
  const conflicts = data.conflicts || [];
  const list = h("div", { id: "conflicts" });
  const out = resultArea("conflicts", "conflict-result");
  for (const c of conflicts) list.append(conflictItem(c, out));
  page(
    "Sync conflicts",
    h("p", { class: "count", text: `${conflicts.length} held back` }),
    out,
    conflicts.length ? list : h("p", { class: "empty", text: "No conflicts." }),
  );
  view.refresh = () => viewConflicts(route, current);
  view.dirty = () => !!main().querySelector(".conflict details[open]");
}

function conflictItem(c, done) {
  const col = (title, text, cls) =>
    h(
      "section",
      { class: `version ${cls}` },
      h("h3", { text: title }),
      text === null || text === undefined
        ? h("p", { class: "empty", text: "(deleted)" })
        : h("pre", { class: "text", text }),
    );
  const out = h("div", { "aria-live": "assertive" });
  const resolve = async (payload) => {
    try {
      await api("POST", "sync/resolve", { id: c.id, scope: c.scope, ...payload });
      showResult(
        "conflicts",
        done,
        h("p", { class: "ok", role: "status" }, `Resolved ${c.id}. `,
          h("a", { href: noteHref(c.id, c.scope), text: "Open the note" })),
      );
      item.remove();
    } catch (err) {
      out.replaceChildren(errorBox(err, "not resolved"));
    }
  };
  const uid = `${c.scope}-${c.id}`.replace(/[^a-zA-Z0-9_-]/g, "");
  const text = h("textarea", { id: `merge-text-${uid}`, class: "hand-merge", rows: 12 });
  text.value = c.local ?? c.server ?? "";
  api("GET", `sync/draft${qs({ id: c.id, scope: c.scope })}`)
    .then((d) => {
      if (d && typeof d.draft === "string" && !text.dataset.touched) text.value = d.draft;
    })
    .catch(() => {});
  text.addEventListener("input", () => {
    text.dataset.touched = "1";
  });
  const byHand = h(
    "details",
    {},
    h("summary", { text: "Merge by hand" }),
    h("p", {
      class: "hint",
      text: "Both sides are combined below; edit the text until it is the note as it should " +
        "be (remove the <<<<<<< ======= >>>>>>> markers), then save it.",
    }),
    field("The note file as it should be", text),
    h("button", { type: "button", class: "save-merge", text: "Save this version",
      onclick: () => resolve({ text: text.value }) }),
  );
  const item = h(
    "article",
    { class: "conflict", "data-conflict": c.id },
    h("h2", {}, h("span", { class: "mono", text: c.id }), " ",
      h("span", { class: `scope scope-${c.scope}`, text: c.scope })),
    h("p", { class: "reason", text: (c.reasons || []).join("; ") }),
    h(
      "div",
      { class: "side-by-side three" },
      col("Baseline (last sync)", c.baseline, "baseline"),
      col("This machine", c.local, "local"),
      col("Server", c.server, "server"),
    ),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "keep-local", text: "Keep this machine's",
        onclick: () => resolve({ keep: "local" }) }),
      h("button", { type: "button", class: "keep-server", text: "Take the server's",
        onclick: () => resolve({ keep: "server" }) }),
      h("button", { type: "button", class: "keep-both", text: "Keep both",
        onclick: () => resolve({ keep: "both" }) }),
    ),
    byHand,
    out,
  );
  return item;
}

// -- live: poll the change stamp ---------------------------------------------------------
let pollTimer = null;
let lastStamp = null;
let polling = false;
function stopPolling() {
  clearInterval(pollTimer);
  pollTimer = null;
}
async function poll() {
  if (polling) return;
  polling = true;
  try {
    const data = await api("GET", "changes");
    const stamp = data.stamp;
    if (lastStamp !== null && stamp !== lastStamp) {
      const live = view;
      if (live.onChange) await live.onChange();
      else if (live.refresh && !$("#dialog").open && !live.dirty()) {
        const focused = document.activeElement && document.activeElement.id;
        const y = window.scrollY;
        await live.refresh();
        window.scrollTo(0, y);
        if (focused && $(`#${CSS.escape(focused)}`)) $(`#${CSS.escape(focused)}`).focus();
      }
    }
    lastStamp = stamp;
  } catch (err) {
    // A failed poll says nothing new; the next one tries again.
  } finally {
    polling = false;
  }
}

// -- start --------------------------------------------------------------------------------
function start() {
  if (!token()) {
    showNoToken(false);
    return;
  }
  $("#q").addEventListener("input", onSearchInput);
  $("#mode").addEventListener("change", onSearchInput);
  $("#search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    onSearchInput();
  });
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    const typing =
      t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement ||
      t instanceof HTMLSelectElement || (t && t.isContentEditable);
    if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      $("#q").focus();
      $("#q").select();
    } else if (e.key === "Escape" && t === $("#q")) {
      $("#q").blur();
    }
  });
  window.addEventListener("hashchange", () => {
    results.clear();
    render().then(() => {
      // Move focus to the new page (for keyboards and screen readers) unless the page
      // itself put it somewhere, or the person is typing a search.
      const active = document.activeElement;
      if (active !== $("#q") && !main().contains(active)) main().focus({ preventScroll: true });
    });
  });
  render();
  pollTimer = setInterval(poll, POLL_MS);
  poll();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
