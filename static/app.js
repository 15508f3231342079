"use strict";

const statusLine = document.getElementById("status");
const rows = document.getElementById("documents");

function cell(content) {
  const td = document.createElement("td");
  if (typeof content === "string") td.textContent = content; else td.append(content);
  return td;
}

async function refresh() {
  const response = await fetch("/v1/documents");
  const body = await response.json();
  rows.replaceChildren();
  for (const doc of body.documents) {
    const tr = document.createElement("tr");
    const id = document.createElement("code");
    id.textContent = doc.id;
    const versions = document.createElement("span");
    versions.className = "versions";
    for (const v of doc.versions) {
      const a = document.createElement("a");
      a.href = v.url;
      a.textContent = `v${v.version}`;
      a.title = `${v.filename} · ${v.size} bytes · sha256 ${v.sha256.slice(0, 12)}… · ${v.chunk_count} chunks`;
      versions.append(a);
    }
    const remove = document.createElement("button");
    remove.textContent = "Delete";
    remove.onclick = async () => {
      if (!confirm(`Delete ${doc.name} and all its versions?`)) return;
      await fetch(`/v1/documents/${doc.id}`, { method: "DELETE" });
      refresh();
    };
    tr.append(cell(doc.name), cell(id), cell(doc.collection), cell(versions), cell(remove));
    rows.append(tr);
  }
}

document.getElementById("upload").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  for (const key of ["name", "collection"]) if (!form.get(key)) form.delete(key);
  statusLine.className = "";
  statusLine.textContent = "Uploading…";
  const response = await fetch("/v1/documents", { method: "POST", body: form });
  const body = await response.json();
  if (!response.ok) {
    statusLine.className = "error";
    statusLine.textContent = `${body.error.code}: ${body.error.message}`;
    return;
  }
  statusLine.textContent = body.duplicate
    ? `Already stored as ${body.document.id} (v${body.version.version}).`
    : `Stored as ${body.document.id} v${body.version.version}.`;
  event.target.reset();
  refresh();
});

refresh();
