// Tending memory: the tidy-up list (merge with an editable draft, supersede, dismiss) and
// the backups (the latest fifty, restore).

import { api } from "./api.js";
import {
  $,
  errorBox,
  field,
  h,
  main,
  noteHref,
  openDialog,
  page,
  resultArea,
  setStatus,
  showResult,
  timeEl,
  view,
  when,
} from "./dom.js";

// -- the tidy-up list ---------------------------------------------------------------------
// The kinds of finding are memdir's (`GET /api/tidy` sends them beside the findings, as
// `{kind: {label, merge, supersede}}`): what a finding is called and offers comes from there.
export async function viewTidy(route, current) {
  const data = await api("GET", "tidy");
  if (!current()) return;
  const findings = data.findings || [];
  const kinds = data.kinds || {};
  const list = h("ul", { class: "findings", id: "findings" });
  for (const f of findings) list.append(findingItem(f, kinds[f.kind] || {}));
  page(
    "Tidy up",
    h("p", { class: "count", text: `${findings.length} ${findings.length === 1 ? "finding" : "findings"}` }),
    findings.length ? list : h("p", { class: "empty", text: "Nothing to tidy up." }),
  );
  view.refresh = () => viewTidy(route, current);
  // An open merge draft is never thrown away by a live refresh.
  view.dirty = () => !!main().querySelector(".merge-draft");
}

export function findingItem(f, kind = {}) {
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
  if (kind.merge) {
    buttons.push(
      h("button", { type: "button", class: "merge", text: "Merge…", onclick: () => mergeFlow(f, box) }),
    );
  }
  if (kind.supersede && notes.length === 2) {
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
    h("h2", {}, h("span", { class: "kind", text: kind.label || f.kind }), " ",
      h("span", { class: `scope scope-${f.scope}`, text: f.scope })),
    h("p", { class: "reason", text: f.reason || "" }),
    h("ul", { class: "finding-notes" }, notes.map((id) =>
      h("li", {}, h("a", { href: noteHref(id, f.scope), text: id })))),
    h("div", { class: "actions" }, buttons),
    box,
  );
  return li;
}

export async function mergeFlow(f, box) {
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
            // Apply the very plan that was shown (its revisions), with the draft as edited:
            // a note changed since the draft was made is refused (409), never merged away.
            let final = plan;
            if (summary.value !== plan.draft.summary || body.value !== plan.draft.body) {
              final = {
                ...plan,
                source: "edited",
                draft: { ...plan.draft, summary: summary.value, body: body.value },
              };
            }
            const result = await api("POST", "tidy/apply", { plan: final });
            setStatus(`Merged into ${result.kept || final.keep}.`);
            location.hash = noteHref(result.kept || final.keep, final.scope);
          } catch (err) {
            const stale = err.status === 409;
            problems.replaceChildren(
              errorBox(err, stale ? "not merged: a note changed since this draft" : "not merged"),
              stale
                ? h("button", {
                    type: "button",
                    class: "secondary redraft",
                    text: "Draft again from the notes as they are now",
                    onclick: () => mergeFlow(f, box),
                  })
                : null,
            );
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
export async function viewBackups(route, current) {
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
