// The memory page (docs/web.md), its entry point: hash routes over the JSON API, the live
// refresh, keyboard shortcuts. No framework, no build. Every value from the server goes
// into the page with textContent; the one exception is a note's rendered body (`html`),
// which the server sanitises (raw HTML off, safe URLs only): see notes.js.

import "./token.js"; // first: the key leaves the address bar before anything else
import { api, onUnauthorized, qs } from "./api.js";
import { $, errorBox, h, main, page, results, view } from "./dom.js";
import { viewEditor } from "./editor.js";
import { viewList, viewNote, viewSearch } from "./notes.js";
import { viewConflicts, viewSync } from "./sync.js";
import { viewBackups, viewTidy } from "./tidy.js";
import { token } from "./token.js";

const POLL_MS = 2000;
const SEARCH_DEBOUNCE_MS = 120;

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
onUnauthorized(() => showNoToken(true));

// -- routing ------------------------------------------------------------------------------
function parseRoute() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, query] = raw.split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { parts, params, name: parts[0] || "list" };
}

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
  Object.assign(view, { name: route.name, refresh: null, dirty: () => false, onChange: null });
  try {
    await handler(route, () => seq === renderSeq);
  } catch (err) {
    if (seq === renderSeq) main().replaceChildren(errorBox(err, "could not show this page"));
  }
}

function viewMissing() {
  page("Not here", h("p", {}, "No such page. ", h("a", { href: "#/", text: "See all notes" })));
}

// -- search as you type -------------------------------------------------------------------
let searchTimer = null;
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
  // The skip link moves focus to the content; it is no route (routes start with "#/").
  $("#skip").addEventListener("click", (e) => {
    e.preventDefault();
    main().focus();
  });
  window.addEventListener("hashchange", () => {
    if (location.hash && !location.hash.startsWith("#/")) return; // an in-page anchor
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
