// The editor: summary, type, tags, body, supersedes, private. A save sends the revision it
// opened; a 409 shows both versions side by side, a guard refusal its message, and a
// change made elsewhere meanwhile is announced, never written over the form.

import { api, qs } from "./api.js";
import {
  SCOPES,
  TYPES,
  errorBox,
  field,
  h,
  noteHref,
  page,
  setStatus,
  splitList,
  view,
} from "./dom.js";

export function noteColumn(title, n, id) {
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

export async function viewEditor(route, current) {
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
    // "" clears a saved type (null would keep it).
    h("option", { value: "", text: "(none)", selected: !note.type }),
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
    type: type.value,
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
      const notes = [`Saved ${saved.id}.`];
      if (written.likely_duplicate && written.duplicate_of) {
        notes.push(`It looks like ${written.duplicate_of}, which was there already.`);
      }
      if ((written.dangling_links || []).length) {
        notes.push(`Links to no note: ${written.dangling_links.join(", ")}.`);
      }
      setStatus(notes.join(" "));
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
