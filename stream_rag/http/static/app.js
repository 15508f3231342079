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
