// Sync: status per scope, the on/off switch, "sync now", the team the project's notes are
// shared with (members, roles, and adding or removing members for its owner and admins),
// and the conflict view (baseline, this machine and the server side by side; keep one,
// keep both, or merge by hand).

import { api, qs } from "./api.js";
import {
  errorBox,
  field,
  h,
  main,
  noteHref,
  page,
  resultArea,
  results,
  showResult,
  timeEl,
  view,
} from "./dom.js";

// -- sync ---------------------------------------------------------------------------------
export function pullCounts(s) {
  const pull = s.last_pull || s.pull || null;
  if (!pull) return "—";
  return `${pull.added ?? 0} added, ${pull.changed ?? 0} changed, ${pull.removed ?? 0} removed`;
}

export async function viewSync(route, current) {
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
    scopes.some((s) => s.team) ? await teamSection(route, current) : null,
  );
  view.refresh = () => viewSync(route, current);
}

// -- team --------------------------------------------------------------------------------
const ROLES = ["admin", "editor", "reader"];

async function teamSection(route, current) {
  const out = h("div", { id: "team-result" });
  let team;
  try {
    team = await api("GET", "team");
  } catch (err) {
    return h("section", { id: "team" }, h("h2", { text: "Team" }), errorBox(err, "team not read"));
  }
  if (!team.team) return null;
  const manages = team.you === "owner" || team.you === "admin";
  const change = async (body, what) => {
    try {
      await api("POST", "team/change", body);
      if (current()) await viewSync(route, current);
    } catch (err) {
      out.replaceChildren(errorBox(err, what));
    }
  };
  const rows = Object.entries(team.members).map(([name, role]) =>
    h(
      "tr",
      { "data-member": name },
      h("th", { scope: "row", text: name }),
      h("td", { text: role }),
      h(
        "td",
        {},
        manages && role !== "owner"
          ? h("button", {
              type: "button",
              text: "Remove",
              "aria-label": `Remove ${name}`,
              onclick: () => change({ action: "remove", member: name }, "member not removed"),
            })
          : null,
      ),
    ),
  );
  const name = h("input", { id: "team-member", autocomplete: "off", required: true });
  const role = h(
    "select",
    { id: "team-role" },
    ROLES.map((r) => h("option", { value: r, text: r, selected: r === "editor" })),
  );
  const add = manages
    ? h(
        "form",
        {
          class: "actions",
          id: "team-add",
          onsubmit: (event) => {
            event.preventDefault();
            change({ action: "add", member: name.value.trim(), role: role.value }, "member not added");
          },
        },
        field("Account", name),
        field("Role", role),
        h("button", { type: "submit", text: "Add member" }),
      )
    : null;
  const recent = (team.history || []).slice().reverse().map((e) =>
    h("li", {}, timeEl(e.at), ` ${e.actor} ${e.action} ${e.member}${e.role ? ` as ${e.role}` : ""}`),
  );
  return h(
    "section",
    { id: "team" },
    h("h2", { text: `Team ${team.team}` }),
    h("p", { text: `This project's notes are shared with team ${team.team}; you are ${team.you}.` }),
    h(
      "table",
      { class: "sync", id: "team-members" },
      h("thead", {}, h("tr", {}, ["Member", "Role", ""].map((t) => h("th", { scope: "col", text: t })))),
      h("tbody", {}, rows),
    ),
    team.revoked.length ? h("p", { text: `Revoked for good: ${team.revoked.join(", ")}.` }) : null,
    teamKeysView(team.keys),
    add,
    out,
    recent.length ? h("details", {}, h("summary", { text: "Latest membership changes" }), h("ol", {}, recent)) : null,
  );
}

function teamKeysView(keys) {
  if (!keys) return null;
  const renew = keys.renew ? " A member left: the next sync of a writer starts a new key." : "";
  const rows = Object.entries(keys.members).map(([name, m]) =>
    h(
      "li",
      { "data-member": name },
      m.fingerprint
        ? `${name}: key ${m.fingerprint}${m.has_current_key ? "" : " (waiting for the current key)"}`
        : `${name}: no member key yet (enrolled at their next sync)`,
    ),
  );
  return h(
    "div",
    { id: "team-keys" },
    h("p", {
      text: `End-to-end encrypted: the server holds these notes sealed, key epoch ${keys.epoch}.${renew}`,
    }),
    h("details", {}, h("summary", { text: "Member keys (compare fingerprints with each member)" }), h("ul", {}, rows)),
  );
}

export function errorText(error) {
  if (!error) return "";
  return typeof error === "string" ? error : error.message || error.kind || "failed";
}

export function syncRunView(run) {
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
export async function viewConflicts(route, current) {
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

export function conflictItem(c, done) {
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
