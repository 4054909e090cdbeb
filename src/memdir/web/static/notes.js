// The notes: the list with its filters, search results, a note with its links, backlinks
// and history (diffs between any two revisions), and forget with its plan.

import { api, qs } from "./api.js";
import {
  $,
  SCOPES,
  TYPES,
  errorBox,
  h,
  noteHref,
  openDialog,
  page,
  setStatus,
  timeEl,
  view,
  when,
} from "./dom.js";

// -- the list -----------------------------------------------------------------------------
export function noteRow(n) {
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

export async function viewList(route, current) {
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

// -- search results ------------------------------------------------------------------
let searchSeq = 0;

export async function viewSearch(route, current) {
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
  const weak = hits.length > 0 && hits.every((hit) => hit.weak);
  page(
    `Search: ${q}`,
    h("p", {
      class: "count",
      id: "hit-count",
      text: weak
        ? "No good match: the closest notes may not be what you are looking for"
        : `${hits.length} ${hits.length === 1 ? "note" : "notes"} found` +
          (data.method ? ` (${data.method})` : ""),
    }),
    warnings,
    hits.length ? list : h("p", { class: "empty", text: "Nothing matches." }),
  );
  view.refresh = () => viewSearch(route, current);
}

// -- a note -------------------------------------------------------------------------------
export function linkList(items, emptyText, id) {
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

export function diffView(text) {
  const pre = h("pre", { class: "diff", id: "diff" });
  const lines = (text || "").replace(/\n$/, "").split("\n");
  let inHunk = false;
  for (const [i, line] of lines.entries()) {
    const header = !inHunk && /^(---|\+\+\+) /.test(line);
    // A header line that kept its own newline leaves an empty line behind: not content.
    if (line === "" && !inHunk && i > 0 && /^(---|\+\+\+) /.test(lines[i - 1])) continue;
    let cls = "";
    if (header) cls = "head";
    else if (line.startsWith("@@")) {
      cls = "hunk";
      inHunk = true;
    }
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    pre.append(h("span", { class: cls, text: line }), "\n");
  }
  if (!text) pre.append(h("span", { text: "(no differences)" }));
  return pre;
}

export async function historySection(note) {
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

export function renderedBody(note) {
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

export async function viewNote(route, current) {
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

export async function forgetFlow(note) {
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
