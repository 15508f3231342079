/* The page at /: the chat widget plus a Documents panel, over the public HTTP API only. */
"use strict";

const $ = (id) => document.getElementById(id);
const chat = $("chat");
const picker = $("collection");
const statusLine = $("status");
const list = $("documents");
const uploads = $("uploads");
const drop = $("drop");
const fileInput = $("file");
const keyInput = $("key");
const COLLECTION = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const KEY_ITEM = "stream-rag-key";
const NEED_KEY = "This server needs an API key: enter one above.";
let pollTimer = null;
let shown = new Map(); // doc id -> JSON last rendered, so unchanged rows keep their focus
// The API is where this page is: behind a reverse proxy that is under its path prefix
// (https://host/rag/), so no URL here may start at the origin's root.
const BASE = new URL(".", location.href);

/** A server path ("/v1/...", as the API gives and takes them) under this page's base. */
function api(path) {
  return path.startsWith("/") && !path.startsWith("//") ? new URL(path.slice(1), BASE).href : new URL(path, BASE).href;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function button(text, onClick, className) {
  const b = el("button", className, text);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

/** The API key typed into this tab (servers with keys need one; open mode needs none). */
function key() {
  return sessionStorage.getItem(KEY_ITEM) || "";
}

function auth(headers) {
  const out = Object.assign({}, headers);
  if (key()) out.Authorization = `Bearer ${key()}`;
  return out;
}

function collection() {
  const value = picker.value.trim();
  // Left empty: the server's default, which it wrote into the field's value attribute.
  return COLLECTION.test(value) ? value : picker.defaultValue || "default";
}

function say(text, isError) {
  statusLine.className = isError ? "status error" : "status";
  statusLine.textContent = text;
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

async function errorText(response) {
  try {
    const body = await response.json();
    return `${body.error.message} (${body.error.code})`;
  } catch (_) {
    return `HTTP ${response.status}`;
  }
}

/** POST a file with upload progress (fetch cannot report it); resolves to [status, body]. */
function send(url, file, fields, progress) {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    form.append("file", file, file.name);
    for (const [key, value] of Object.entries(fields)) form.append(key, value);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.responseType = "json";
    if (key()) xhr.setRequestHeader("Authorization", `Bearer ${key()}`);
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable) { progress.max = e.total; progress.value = e.loaded; }
    });
    xhr.addEventListener("load", () => resolve([xhr.status, xhr.response]));
    xhr.addEventListener("error", () => reject(new Error("network error")));
    xhr.send(form);
  });
}

async function upload(files, docId) {
  for (const file of files) {
    const row = el("li", "upload");
    const label = el("span", "what", docId ? `New version of ${file.name}` : file.name);
    const bar = el("progress");
    bar.max = file.size || 1;
    bar.value = 0;
    bar.setAttribute("aria-label", `Uploading ${file.name}`);
    const outcome = el("span", "outcome", "uploading…");
    row.append(label, bar, outcome);
    uploads.prepend(row);
    const url = api(docId ? `/v1/documents/${encodeURIComponent(docId)}/versions` : "/v1/documents");
    try {
      const [status, body] = await send(url, file, docId ? {} : { collection: collection() }, bar);
      bar.value = bar.max;
      if (status >= 400) {
        const error = body && body.error ? `${body.error.message} (${body.error.code})` : `HTTP ${status}`;
        outcome.textContent = `failed: ${error}`;
        row.classList.add("error");
      } else {
        outcome.textContent = body.duplicate
          ? `already stored as v${body.version.version}`
          : `stored as v${body.version.version}, indexing`;
      }
    } catch (_) {
      outcome.textContent = "failed: connection lost";
      row.classList.add("error");
    }
    while (uploads.children.length > 6) uploads.lastChild.remove();
  }
  refresh();
}

function versionRow(doc, v) {
  const li = el("li", "version");
  const link = el("a", null, `v${v.version}`);
  link.title = `Download version ${v.version} (${v.filename})`;
  if (key()) {
    // No href: a URL cannot carry the key, and a link would offer "open in new tab" and
    // "copy link" for a URL that answers 401. Every activation downloads with the key.
    link.setAttribute("role", "link");
    link.tabIndex = 0;
    const go = (e) => { e.preventDefault(); download(api(v.url), v.filename); };
    link.addEventListener("click", go);
    link.addEventListener("auxclick", (e) => { if (e.button === 1) go(e); });
    link.addEventListener("keydown", (e) => { if (e.key === "Enter") go(e); });
  } else {
    link.href = api(v.url);
    link.download = v.filename;
  }
  const badge = el("span", `badge ${v.status}`, v.status);
  li.append(link, " ", el("span", "meta", `${v.filename} · ${size(v.size)} · sha256 ${v.sha256.slice(0, 12)}`), " ", badge);
  if (v.status === "failed" && v.status_reason) li.append(el("span", "reason", v.status_reason));
  if (doc.live_version === v.version) li.append(el("span", "live", "answers use this"));
  return li;
}

/** A link cannot carry the key: with one, fetch the bytes with it and save them. */
async function download(url, filename) {
  let response;
  try {
    response = await fetch(url, { headers: auth() });
  } catch (_) {
    say(`Could not download ${filename}: could not reach the server.`, true);
    return;
  }
  if (!response.ok) { say(`Could not download ${filename}: ${await errorText(response)}`, true); return; }
  const blob = new Blob([await response.blob()], { type: "application/octet-stream" });
  const save = document.createElement("a");
  save.href = URL.createObjectURL(blob);
  save.download = filename;
  save.click();
  setTimeout(() => URL.revokeObjectURL(save.href), 10000);
}

function documentRow(doc) {
  const li = el("li", "doc");
  li.dataset.id = doc.id;
  const head = el("div", "doc-head");
  head.append(el("strong", "name", doc.name), el("code", "id", doc.id));
  const versions = el("ul", "versions");
  for (const v of [...doc.versions].reverse()) versions.append(versionRow(doc, v));
  const actions = el("div", "doc-actions");
  const picker = el("input");
  picker.type = "file";
  picker.className = "sr-only";
  picker.tabIndex = -1;
  picker.addEventListener("change", () => { if (picker.files.length) upload([...picker.files], doc.id); });
  const add = button("Add version", () => picker.click());
  add.dataset.focus = `add:${doc.id}`;
  const remove = button("Delete", () => confirmDelete(doc, actions, remove));
  remove.dataset.focus = `delete:${doc.id}`;
  actions.append(add, remove, picker);
  li.append(head, versions, actions);
  return li;
}

function confirmDelete(doc, actions, remove) {
  const count = doc.versions.length;
  const box = el("div", "confirm");
  box.setAttribute("role", "group");
  box.append(el("span", null, `Delete ${doc.name} and its ${count} version${count === 1 ? "" : "s"}?`));
  const cancel = button("Cancel", () => { box.remove(); remove.hidden = false; remove.focus(); });
  const yes = button("Delete for good", async () => {
    yes.disabled = true;
    const response = await fetch(api(`/v1/documents/${encodeURIComponent(doc.id)}`), { method: "DELETE", headers: auth() });
    if (response.ok) say(`Deleted ${doc.name}.`);
    else say(`Could not delete ${doc.name}: ${await errorText(response)}`, true);
    refresh();
  }, "danger");
  box.append(yes, cancel);
  remove.hidden = true;
  actions.append(box);
  cancel.focus();
}

async function refresh() {
  clearTimeout(pollTimer);
  let body;
  try {
    const response = await fetch(api(`/v1/documents?collection=${encodeURIComponent(collection())}`), { cache: "no-store", headers: auth() });
    if (response.status === 401) { say(NEED_KEY, true); return; }
    if (!response.ok) { say(`Could not list documents: ${await errorText(response)}`, true); return; }
    if (statusLine.textContent === NEED_KEY) say("");
    body = await response.json();
  } catch (_) {
    say("Could not reach the server.", true);
    pollTimer = setTimeout(refresh, 3000);
    return;
  }
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.focus : null;
  const next = new Map();
  const rows = [];
  for (const doc of body.documents) {
    const json = JSON.stringify(doc);
    next.set(doc.id, json);
    const old = list.querySelector(`li.doc[data-id="${CSS.escape(doc.id)}"]`);
    // Keep unchanged rows (and an open delete confirmation) as they are.
    rows.push(old && shown.get(doc.id) === json ? old : documentRow(doc));
  }
  list.replaceChildren(...rows);
  if (!rows.length) list.append(el("li", "none", `No documents in “${collection()}” yet.`));
  shown = next;
  if (focused && !list.contains(document.activeElement)) {
    const again = list.querySelector(`[data-focus="${CSS.escape(focused)}"]`);
    if (again) again.focus();
  }
  const indexing = body.documents.some((d) => d.versions.some((v) => v.status === "indexing"));
  if (indexing) pollTimer = setTimeout(refresh, 700);
}

async function loadCollections() {
  try {
    const response = await fetch(api("/v1/documents"), { cache: "no-store", headers: auth() });
    if (!response.ok) return;
    const names = new Set([picker.defaultValue || "default", collection()]);
    for (const doc of (await response.json()).documents) names.add(doc.collection);
    $("collections").replaceChildren(...[...names].sort().map((n) => { const o = el("option"); o.value = n; return o; }));
  } catch (_) { /* the list shows the error */ }
}

picker.addEventListener("change", () => {
  chat.dataset.collection = collection();
  shown = new Map();
  refresh();
});

fileInput.addEventListener("change", () => {
  if (fileInput.files.length) upload([...fileInput.files]);
  fileInput.value = "";
});
document.querySelector("label.choose").addEventListener("keydown", (e) => {
  if (e.key === "Enter" || e.key === " ") { e.preventDefault(); fileInput.click(); }
});
for (const name of ["dragenter", "dragover"]) {
  drop.addEventListener(name, (e) => { e.preventDefault(); drop.classList.add("over"); });
}
for (const name of ["dragleave", "drop"]) {
  drop.addEventListener(name, () => drop.classList.remove("over"));
}
drop.addEventListener("drop", (e) => {
  e.preventDefault();
  if (e.dataTransfer && e.dataTransfer.files.length) upload([...e.dataTransfer.files]);
});

keyInput.value = key();
keyInput.addEventListener("change", () => {
  const value = keyInput.value.trim();
  if (value) sessionStorage.setItem(KEY_ITEM, value); else sessionStorage.removeItem(KEY_ITEM);
  if (value) chat.dataset.key = value; else delete chat.dataset.key;
  shown = new Map();
  loadCollections();
  refresh();
});
if (key()) chat.dataset.key = key();
chat.dataset.collection = collection();
loadCollections();
refresh();

// -- Insights (admin keys): what visitors asked, the knowledge base's gaps, their ratings ----

const insightsTab = $("insights-tab");
const insightsSection = $("insights-section");
const insightsBox = $("insights");
const days = $("days");
const REASON_TEXT = {
  low_evidence: "the documents say too little about it",
  conflicting_sources: "documents disagree",
  no_results: "nothing in the documents matches",
  nothing_verified: "no sentence of the answer checked out",
};

function insightsUrl(path) {
  return api(`${path}${path.includes("?") ? "&" : "?"}days=${encodeURIComponent(days.value)}`);
}

/** The Insights button appears when the key may read them (an admin key, or open mode). */
async function probeInsights() {
  let allowed = false;
  try {
    const response = await fetch(insightsUrl("/v1/insights"), { headers: auth() });
    allowed = response.ok;
  } catch (_) { allowed = false; }
  insightsTab.hidden = !allowed;
  if (!allowed) insightsSection.hidden = true;
}

function section(title, className) {
  const box = el("section", `panel ${className}`);
  box.append(el("h3", null, title));
  insightsBox.append(box);
  return box;
}

function cite(list) {
  return list.map((c) => `${c.name} (v${c.version})`).join(", ");
}

async function loadInsights() {
  insightsBox.replaceChildren(el("p", "hint", "Loading…"));
  let report;
  try {
    const response = await fetch(insightsUrl("/v1/insights"), { headers: auth() });
    if (!response.ok) { insightsBox.replaceChildren(el("p", "status error", await errorText(response))); return; }
    report = await response.json();
  } catch (_) {
    insightsBox.replaceChildren(el("p", "status error", "Could not reach the server."));
    return;
  }
  insightsBox.replaceChildren();
  const outcomes = report.outcomes || {};
  insightsBox.append(el("p", "summary",
    `${report.questions} questions in ${report.days} days: ${outcomes.answered || 0} answered, ` +
    `${outcomes.refused || 0} not answered, ${outcomes.failed || 0} failed, ${outcomes.stopped || 0} stopped. ` +
    `Rated helpful ${report.feedback.up}, not helpful ${report.feedback.down}. Questions are kept ${report.retention_days} days.`));

  const time = section("Questions over time", "by-day");
  const most = Math.max(1, ...report.by_day.map((d) => d.asked));
  const table = el("table");
  table.append(el("caption", "sr-only", "Questions per day: asked, answered, not answered"));
  const head = el("tr");
  for (const h of ["Day", "Asked", "Answered", "Not answered", ""]) head.append(el("th", null, h));
  table.append(head);
  for (const d of report.by_day) {
    const row = el("tr");
    const bar = el("td", "bar");
    const fill = el("span");
    fill.style.width = `${Math.round((100 * d.asked) / most)}%`;
    bar.append(fill);
    row.append(el("td", null, d.day), el("td", null, d.asked), el("td", null, d.answered || 0), el("td", null, d.refused || 0), bar);
    table.append(row);
  }
  time.append(report.by_day.length ? table : el("p", "none", "No questions yet."));

  const gaps = section("Not answered: the documents' gaps", "refused");
  const reasons = el("ul");
  for (const r of report.refused.by_reason) {
    const li = el("li");
    li.append(el("strong", null, `${REASON_TEXT[r.reason] || r.reason} (${r.count})`), `: ${r.examples.join(" · ")}`);
    reasons.append(li);
  }
  gaps.append(el("h4", null, "By reason"), report.refused.by_reason.length ? reasons : el("p", "none", "None."));
  const topics = el("ul", "topics");
  for (const t of report.refused.topics) {
    const li = el("li");
    const more = el("details");
    more.append(el("summary", null, `${t.label} (${t.count})`));
    const asked = el("ul");
    for (const q of t.questions) asked.append(el("li", null, q));
    more.append(asked);
    li.append(more);
    topics.append(li);
  }
  gaps.append(el("h4", null, "By topic"), report.refused.topics.length ? topics : el("p", "none", "None."));

  const down = section("Answers rated down", "rated-down");
  const downs = el("ul");
  for (const r of report.rated_down) {
    const li = el("li");
    li.append(el("strong", null, r.question));
    if (r.comment) li.append(el("blockquote", null, r.comment));
    li.append(el("p", "meta", `${r.asked_at.replace("T", " ").slice(0, 16)} · ${r.outcome}` +
      (r.citations.length ? ` · cited ${cite(r.citations)}` : "")));
    if (r.conversation) {
      const forget = button("Delete conversation", () => { forget.disabled = true; forgetConversation(r.conversation); });
      li.append(forget);
    }
    downs.append(li);
  }
  down.append(report.rated_down.length ? downs : el("p", "none", "None."));

  const conflicts = section("Conflicts found between documents", "conflicts");
  const pairs = el("ul");
  for (const c of report.conflicts) pairs.append(el("li", null, `${cite([c.a])} and ${cite([c.b])}: ${c.count}×`));
  conflicts.append(report.conflicts.length ? pairs : el("p", "none", "None."));

  const cited = section("Documents cited most", "top-cited");
  const top = el("ol");
  for (const d of report.top_cited) top.append(el("li", null, `${d.name}: ${d.count}`));
  cited.append(report.top_cited.length ? top : el("p", "none", "None yet."));
}

/** A visitor's questions are theirs: an admin deletes a conversation on request. */
async function forgetConversation(id) {
  let response;
  try {
    response = await fetch(api(`/v1/conversations/${encodeURIComponent(id)}`), { method: "DELETE", headers: auth() });
  } catch (_) {
    say("Could not delete the conversation: could not reach the server.", true);
    return;
  }
  if (!response.ok) say(`Could not delete the conversation: ${await errorText(response)}`, true);
  else {
    const n = (await response.json()).deleted;
    say(`Deleted conversation ${id}: ${n} question${n === 1 ? "" : "s"}.`);
  }
  loadInsights();
}

$("forget-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const id = $("forget-id").value.trim();
  if (id) forgetConversation(id);
  $("forget-id").value = "";
});

insightsTab.addEventListener("click", () => {
  insightsSection.hidden = false;
  loadInsights();
  insightsSection.scrollIntoView({ block: "start" });
  $("insights-title").focus();
});
days.addEventListener("change", loadInsights);
$("insights-refresh").addEventListener("click", loadInsights);
for (const kind of ["csv", "json"]) {
  $(`export-${kind}`).addEventListener("click", () => {
    download(insightsUrl(`/v1/insights/questions?format=${kind}`), `questions.${kind}`);
  });
}
keyInput.addEventListener("change", probeInsights);
probeInsights();
