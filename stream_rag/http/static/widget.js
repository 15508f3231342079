/* stream_rag chat widget: verified, cited answers as they stream. No build step, no framework.
 *
 * Embed: <script src="https://HOST/static/widget.js" data-collection="support" defer></script>
 *    or: <stream-rag-chat data-collection="support"></stream-rag-chat> plus the script tag.
 * Attributes: data-collection, data-api (default: where this script came from, path prefix and all),
 * data-key (a chat-scoped API key, sent as a Bearer token), data-title, data-theme (light or
 * dark; default: the system's), data-mode ("inline", the default, or "bubble": a corner button
 * that opens a panel), data-lang ("en" or "de"; default: the host page's), data-suggestions
 * (questions offered before the first one, separated by "|"), data-handoff-url (the hand-off
 * link shown with refusals and errors), data-text-<name> (any visitor text: data-text-greeting,
 * data-text-refusal, data-text-handoff, ...; see TEXTS), data-details (developer details:
 * ids, hashes, scores, withheld sentences and the API's own error words).
 * Theme it from the host page with CSS custom properties (--srw-accent, --srw-bg, ...).
 * Untrusted text (answers, names, passages, messages) is only ever set as textContent; the
 * Markdown subset in answers is parsed into elements built one by one (markdown(), inline()).
 */
(() => {
  "use strict";
  if (customElements.get("stream-rag-chat")) return;

  const SCRIPT = document.currentScript;
  // The API is where this script came from: the server serves it at <base>/static/widget.js,
  // and <base> may carry a reverse proxy's path prefix (https://host/rag).
  const SCRIPT_BASE = (() => {
    if (!SCRIPT || !SCRIPT.src) return location.origin;
    const src = new URL(SCRIPT.src, location.href);
    const at = src.pathname.lastIndexOf("/static/widget.js");
    return at < 0 ? src.origin : src.origin + src.pathname.slice(0, at);
  })();

  const DARK = `
  --srw-bg: #1b1d21; --srw-fg: #ececef; --srw-muted: #b4b8c0; --srw-border: #474c55;
  --srw-accent: #8ab4f8; --srw-accent-fg: #0d1b33; --srw-chip-bg: #26375a; --srw-chip-fg: #d6e4ff;
  --srw-q-bg: #262930; --srw-refusal-bg: #3a2e12; --srw-refusal-fg: #fbe3ad; --srw-refusal-border: #d69e2e;
  --srw-error-bg: #44161c; --srw-error-fg: #ffc9cf; --srw-focus: #ffb870;`;
  // data-theme="light" or "dark" is the host page's choice; without it the system's.
  const CSS = `
:host { --srw-font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  --srw-bg: #ffffff; --srw-fg: #1d1d1f; --srw-muted: #545861; --srw-border: #c9ced6;
  --srw-accent: #0b57d0; --srw-accent-fg: #ffffff; --srw-chip-bg: #e3ecfd; --srw-chip-fg: #0a3b8c;
  --srw-q-bg: #f1f3f6; --srw-refusal-bg: #fff6e0; --srw-refusal-fg: #5c3b00; --srw-refusal-border: #b7791f;
  --srw-error-bg: #fdecee; --srw-error-fg: #8a0014; --srw-focus: #d1580b; --srw-radius: 10px;
  display: block; color: var(--srw-fg); font: 15px/1.5 var(--srw-font); min-width: 0; }
@media (prefers-color-scheme: dark) { :host(:not([data-theme=light])) {${DARK} } }
:host([data-theme=dark]) {${DARK} }
* { box-sizing: border-box; }
/* Inherited properties (font, colour, spacing) would leak in from the host page through the
   host element, even with !important there: start from initial values instead. */
.root, .tip { all: initial; box-sizing: border-box; font: var(--srw-font-size, 15px)/1.5 var(--srw-font);
  color: var(--srw-fg); }
.root { background: var(--srw-bg); border: 1px solid var(--srw-border); border-radius: var(--srw-radius);
  display: flex; flex-direction: column; max-width: 100%; overflow: hidden; }
.head { padding: .6em .9em; border-bottom: 1px solid var(--srw-border); font-weight: 600; }
.log { padding: .4em .9em; overflow-y: auto; max-height: var(--srw-max-height, 70vh); min-height: 4em; }
.empty { color: var(--srw-muted); margin: .6em 0; }
.turn { margin: .7em 0 1em; min-width: 0; }
.q { background: var(--srw-q-bg); border-radius: var(--srw-radius); padding: .45em .7em; margin: 0 0 .5em auto;
  width: fit-content; max-width: 90%; white-space: pre-wrap; overflow-wrap: anywhere; }
.a .body { overflow-wrap: anywhere; }
.a .body > p { margin: 0 0 .45em; }
.a .body > :last-child { margin-bottom: 0; }
.a .body ul, .a .body ol { margin: .2em 0 .45em; padding-left: 1.4em; }
.a .body li { margin: .1em 0; }
.a .body h4 { font-size: 1em; margin: .5em 0 .2em; }
.a .body pre, .doc pre { white-space: pre-wrap; background: var(--srw-q-bg); border-radius: 6px; padding: .4em .6em; margin: .3em 0; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .92em; }
:not(pre) > code { background: var(--srw-q-bg); border-radius: 4px; padding: 0 .25em; }
.s.k-heading { display: block; font-weight: 600; margin-top: .3em; }
.chip { display: inline-block; min-width: 1.6em; padding: 0 .35em; margin-left: .2em; border-radius: 6px;
  background: var(--srw-chip-bg); color: var(--srw-chip-fg); font-size: .8em; line-height: 1.5;
  text-align: center; text-decoration: none; vertical-align: .1em; font-weight: 600; }
.chip:hover { text-decoration: underline; }
.status { color: var(--srw-muted); font-size: .9em; margin: .3em 0 0; min-height: 0; }
.status:empty { display: none; }
.withheld { color: var(--srw-muted); font-size: .9em; margin: .4em 0 0; }
.withheld summary { cursor: pointer; }
.withheld ul { margin: .2em 0; padding-left: 1.2em; }
.sources { margin: .5em 0 0; font-size: .88em; }
.sources h3 { font-size: .9em; margin: 0 0 .15em; color: var(--srw-muted); font-weight: 600; }
.sources ol { margin: 0; padding-left: 0; list-style: none; }
.sources li { margin: .1em 0; overflow-wrap: anywhere; }
.sources .n { font-weight: 600; }
.sources code, .side code { font-size: .92em; color: var(--srw-muted); }
a { color: var(--srw-accent); }
/* A keyed document link has no href (a URL cannot carry the key): it still looks a link. */
a[role=link] { cursor: pointer; }
a[role=link]:not(.chip) { text-decoration: underline; }
.refusal { background: var(--srw-refusal-bg); color: var(--srw-refusal-fg); border-left: 4px solid var(--srw-refusal-border);
  border-radius: 6px; padding: .55em .75em; margin: .2em 0; overflow-wrap: anywhere; }
.refusal a { color: inherit; }
.refusal .msg { margin: 0; font-weight: 600; }
.refusal .detail { margin: .3em 0 0; font-size: .9em; }
.sides { display: grid; grid-template-columns: repeat(auto-fit, minmax(9.5em, 1fr)); gap: .5em; margin-top: .5em; }
.side { border: 1px solid var(--srw-refusal-border); border-radius: 6px; padding: .45em .55em; min-width: 0; font-size: .92em; }
.side .who { font-weight: 600; margin: 0; }
.side blockquote { margin: .3em 0; font-style: italic; }
.side mark { background: var(--srw-refusal-border); color: #000; padding: 0 .15em; border-radius: 3px; font-style: normal; }
.error { background: var(--srw-error-bg); color: var(--srw-error-fg); border-radius: 6px; padding: .5em .7em;
  margin: .4em 0 0; display: flex; flex-wrap: wrap; gap: .5em; align-items: center; }
.error span { flex: 1 1 12em; overflow-wrap: anywhere; }
.uncovered { margin: .4em 0 0; font-size: .9em; color: var(--srw-muted); overflow-wrap: anywhere; }
.actions { margin-top: .35em; display: flex; gap: .4em; flex-wrap: wrap; }
button { font: inherit; font-size: .9em; border-radius: 6px; padding: .3em .7em; cursor: pointer;
  border: 1px solid var(--srw-border); background: transparent; color: var(--srw-fg); }
button.primary { background: var(--srw-accent); color: var(--srw-accent-fg); border-color: var(--srw-accent); font-weight: 600; }
button[hidden] { display: none; }
form { display: flex; gap: .5em; padding: .6em .9em; border-top: 1px solid var(--srw-border); align-items: flex-end; }
textarea { flex: 1 1 auto; min-width: 0; resize: vertical; font: inherit; padding: .45em .6em; border-radius: 6px;
  border: 1px solid var(--srw-border); background: var(--srw-bg); color: var(--srw-fg); min-height: 2.6em; max-height: 12em; }
textarea::placeholder { color: var(--srw-muted); opacity: 1; }
:focus-visible, .chip:focus { outline: 3px solid var(--srw-focus); outline-offset: 2px; }
textarea:focus-visible { outline-offset: 0; }
.tip { position: fixed; z-index: 2147483647; max-width: min(30em, calc(100vw - 16px)); background: var(--srw-fg);
  color: var(--srw-bg); border-radius: 6px; padding: .45em .6em; font-size: calc(var(--srw-font-size, 15px) * .85); line-height: 1.4;
  box-shadow: 0 4px 16px rgba(0,0,0,.25); pointer-events: none; overflow-wrap: anywhere; }
.tip[hidden] { display: none; }
.tip.pinned { pointer-events: auto; }
.tip-actions { display: flex; gap: .6em; align-items: center; margin-top: .45em; }
.tip .open { color: inherit; text-decoration: underline; font-weight: 600; }
.tip .close { color: inherit; border-color: currentColor; font-size: 1em; padding: .15em .7em; }
/* A finger needs targets of 24 px at least (WCAG 2.5.8): chips were 19 x 18. */
.tip .open, .tip .close { display: inline-flex; align-items: center; min-height: 28px; }
@media (pointer: coarse) {
  .chip { min-width: 26px; min-height: 24px; line-height: 24px; margin-left: .3em; vertical-align: baseline; }
}
.tip .who { font-weight: 600; display: block; }
.tip .passage { display: block; margin-top: .25em; }
.tip mark { background: var(--srw-chip-bg); color: var(--srw-chip-fg); border-radius: 3px; padding: 0 .1em; }
.hint { margin: 0; padding: .4em .9em 0; font-size: .9em; color: var(--srw-error-fg); }
.hint:empty { display: none; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.root { position: relative; }
.head { display: flex; align-items: center; gap: .4em; }
.head .title { flex: 1 1 auto; }
.head:not(:has(.title)) { justify-content: flex-end; padding: .3em .6em; border-bottom: 0; }
.head button { font-weight: 400; }
.head .x { font-size: 1.1em; line-height: 1; padding: .25em .55em; }
.head .forget svg { width: 1.1em; height: 1.1em; fill: currentColor; vertical-align: -.2em; }
.greeting { margin: .6em 0; }
.suggest { display: flex; flex-wrap: wrap; gap: .4em; margin: .2em 0 .6em; }
.suggest button { border-color: var(--srw-accent); color: var(--srw-accent); border-radius: 999px; text-align: left; }
.handoff { margin: .35em 0 0; }
.handoff a { font-weight: 600; }
.rate { display: inline-flex; gap: .3em; }
.rate svg { width: 1.1em; height: 1.1em; fill: currentColor; vertical-align: -.2em; }
.rate .down svg { transform: rotate(180deg); }
.rate button[aria-pressed=true] { background: var(--srw-chip-bg); color: var(--srw-chip-fg); border-color: var(--srw-accent); }
.comment { display: flex; gap: .4em; flex-wrap: wrap; margin-top: .35em; width: 100%; }
.comment textarea { min-height: 2.2em; }
.thanks { color: var(--srw-muted); font-size: .9em; align-self: center; }
/* The reader: a cited version, rendered, at the cited passage. */
.reader { position: absolute; inset: 0; background: var(--srw-bg); display: flex; flex-direction: column; z-index: 2; }
.reader[hidden] { display: none; }
.reader .bar { display: flex; gap: .4em; align-items: center; padding: .5em .8em; border-bottom: 1px solid var(--srw-border); }
.reader .bar h2 { font-size: 1em; margin: 0; flex: 1 1 auto; min-width: 0; overflow-wrap: anywhere; }
.reader .bar a { font-size: .9em; }
.doc { position: relative; overflow-y: auto; padding: .4em .9em 1em; flex: 1 1 auto; overflow-wrap: anywhere; }
.doc p, .doc li { margin: .35em 0; }
.doc h3, .doc h4 { margin: .7em 0 .3em; }
.doc .page { color: var(--srw-muted); font-size: .85em; border-top: 1px dashed var(--srw-border); margin-top: .8em; padding-top: .2em; }
.doc .cited { background: var(--srw-chip-bg); color: var(--srw-chip-fg); border-radius: 4px; box-shadow: 0 0 0 3px var(--srw-chip-bg); }
.doc mark { background: #ffd54f; color: #000; border-radius: 3px; }
/* Bubble mode: a launcher in the corner opens the panel. */
:host([data-mode=bubble]) { position: fixed; right: max(16px, env(safe-area-inset-right)); bottom: max(16px, env(safe-area-inset-bottom));
  z-index: 2147483000; display: block; }
.launcher { all: initial; box-sizing: border-box; width: 56px; height: 56px; border-radius: 50%; background: var(--srw-accent);
  color: var(--srw-accent-fg); display: grid; place-items: center; cursor: pointer; box-shadow: 0 4px 16px rgba(0,0,0,.28); position: relative; }
.launcher:focus-visible { outline: 3px solid var(--srw-focus); outline-offset: 3px; }
.launcher svg { width: 28px; height: 28px; fill: currentColor; }
.launcher .dot { position: absolute; top: 3px; right: 3px; width: 14px; height: 14px; border-radius: 50%; background: #e5484d;
  border: 2px solid var(--srw-bg); }
.launcher .dot[hidden] { display: none; }
:host([data-mode=bubble]) .root { position: absolute; right: 0; bottom: 68px; width: min(400px, calc(100vw - 32px)); max-width: none;
  height: min(640px, calc(100vh - 104px)); box-shadow: 0 8px 32px rgba(0,0,0,.25); }
:host([data-mode=bubble]) .root[hidden] { display: none; }
:host([data-mode=bubble]) .log { max-height: none; flex: 1 1 auto; }
@media (max-width: 480px) {
  :host([data-mode=bubble]) .root { position: fixed; inset: 0; width: auto; height: auto; border-radius: 0; }
  /* The open panel fills the screen and has its own close button. */
  .launcher[aria-expanded=true] { display: none; }
}
`;

  let SHEET = null;
  // The server's limits (stream_rag/answer/limits.py), in characters.
  const MAX_QUESTION_CHARS = 4000;
  const MAX_HISTORY_CHARS = 16000;
  const BUSY = "An answer is still coming: wait for it, or Stop it (Escape), then send this question.";
  const BUSY_RETRY = "An answer is still coming: wait for it, or Stop it (Escape), then Retry.";
  // A stream silent this long is dead (a phone that changed networks closes nothing): the
  // server sends a keep-alive comment every STREAM_RAG_SSE_PING_S (15 s by default).
  const SILENCE_MS = 60000;
  // Tries at resuming an answer whose connection dropped (GET /v1/streams/{id}, Last-Event-ID).
  const RESUME_TRIES = 3;
  const CONFLICT_HEADING = "The sources disagree on this, so I am not choosing between them.";

  const REASONS = {
    uncited: "it cited no source",
    unknown_citation: "it cited a source number that was not given",
    id_mismatch: "its citation named a different document",
    low_overlap: "the cited source does not say this",
    number_mismatch: "a number or date in it is not in the cited source",
    hidden_text: "it held characters that hide or reorder what you would read",
    claim_mismatch: "a part of it is not what the cited source says",
  };

  // What visitors read, in the languages shipped; a team changes any of it with
  // data-text-<name> (data-text-refusal="..."), and {s}, {n} are filled in.
  const TEXTS = {
    en: {
      title: "Questions? Ask us", open: "Open the chat", close: "Close the chat",
      greeting: "Hi! Ask a question and I will answer from our documents, with their sources.",
      placeholder: "Ask a question…", question: "Your question", answers: "Answers", ask: "Ask", stop: "Stop",
      searching: "Searching the documents…", writing: "Writing a verified answer…", sources: "Sources",
      refusal: "Sorry, I cannot answer that from our documents.",
      conflict: "Our documents say different things about this, so I cannot give a reliable answer.",
      handoffLead: "Need more help?", handoff: "Contact us",
      rateLimited: "Too many questions right now, try again in {s} s.",
      unavailable: "The chat is not available right now.",
      busy: "The service is busy. Please try again in a moment.",
      offline: "Could not reach the service. Check your connection and try again.",
      failed: "Something went wrong while answering. Please try again.",
      lost: "The connection was lost. Please try again.",
      silent: "Nothing came for a minute: the connection was lost. Please try again.",
      docGone: "This document is not available any more.",
      incomplete: "The answer above is incomplete.", stopped: "Stopped.", retry: "Try again",
      newConversation: "New conversation", deleteConversation: "Delete conversation",
      helpful: "Helpful", notHelpful: "Not helpful", commentLabel: "What was missing? (optional)",
      send: "Send", thanks: "Thank you for your feedback.", feedbackFailed: "Your feedback could not be sent.",
      copy: "Copy answer", copied: "Copied", download: "Download", loading: "Opening the document…",
      page: "Page {n}", uncovered: "The sources do not cover: ", unread: "New answer", back: "Back to the chat",
      rateLimitedSoon: "Too many questions right now, please try again shortly.",
      busyHint: "An answer is still coming: wait for it, or stop it (Escape).",
      tooLong: "Your question is {n} characters long; questions can be at most {s}. Shorten it to ask.",
    },
    de: {
      title: "Fragen? Fragen Sie uns", open: "Chat öffnen", close: "Chat schließen",
      greeting: "Hallo! Stellen Sie eine Frage – ich antworte aus unseren Dokumenten, mit Quellen.",
      placeholder: "Ihre Frage …", question: "Ihre Frage", answers: "Antworten", ask: "Fragen", stop: "Stopp",
      searching: "Durchsuche die Dokumente …", writing: "Schreibe eine geprüfte Antwort …", sources: "Quellen",
      refusal: "Das kann ich aus unseren Dokumenten leider nicht beantworten.",
      conflict: "Unsere Dokumente sagen hierzu Verschiedenes, daher kann ich keine verlässliche Antwort geben.",
      handoffLead: "Brauchen Sie mehr Hilfe?", handoff: "Kontakt aufnehmen",
      rateLimited: "Gerade zu viele Fragen – bitte in {s} s erneut versuchen.",
      unavailable: "Der Chat ist gerade nicht verfügbar.",
      busy: "Der Dienst ist ausgelastet. Bitte versuchen Sie es gleich noch einmal.",
      offline: "Der Dienst ist nicht erreichbar. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.",
      failed: "Beim Antworten ist etwas schiefgegangen. Bitte versuchen Sie es erneut.",
      lost: "Die Verbindung ist abgebrochen. Bitte versuchen Sie es erneut.",
      silent: "Eine Minute lang kam nichts: die Verbindung ist abgebrochen. Bitte versuchen Sie es erneut.",
      docGone: "Dieses Dokument ist nicht mehr verfügbar.",
      incomplete: "Die Antwort oben ist unvollständig.", stopped: "Gestoppt.", retry: "Erneut versuchen",
      newConversation: "Neues Gespräch", deleteConversation: "Gespräch löschen",
      helpful: "Hilfreich", notHelpful: "Nicht hilfreich", commentLabel: "Was hat gefehlt? (optional)",
      send: "Senden", thanks: "Danke für Ihr Feedback.", feedbackFailed: "Ihr Feedback konnte nicht gesendet werden.",
      copy: "Antwort kopieren", copied: "Kopiert", download: "Herunterladen", loading: "Öffne das Dokument …",
      page: "Seite {n}", uncovered: "Die Quellen decken nicht ab: ", unread: "Neue Antwort", back: "Zurück zum Chat",
      rateLimitedSoon: "Gerade zu viele Fragen – bitte gleich noch einmal versuchen.",
      busyHint: "Eine Antwort kommt noch: warten Sie, oder stoppen Sie sie (Escape).",
      tooLong: "Ihre Frage ist {n} Zeichen lang; erlaubt sind höchstens {s}. Kürzen Sie sie.",
    },
  };

  // Links in answers and documents: only these schemes, opened apart from the host page.
  const LINK_SCHEMES = new Set(["http:", "https:", "mailto:"]);
  const INLINE = /`([^`\n]+)`|\*\*(?=\S)(.+?)\*\*|__(?=\S)(.+?)__|\*(?=[^\s*])([^*\n]*?[^\s*])\*|(?<![\p{L}\p{N}_])_(?=[^\s_])([^_\n]*?[^\s_])_(?![\p{L}\p{N}_])|\[([^\]\n]{1,500})\]\(\s*<?([^\s()<>]{1,2000})>?\s*\)/gu;

  /** A safe link: an absolute http(s) or mailto URL, else null. */
  function safeUrl(raw) {
    try {
      const url = new URL(raw);
      return LINK_SCHEMES.has(url.protocol) ? url.href : null;
    } catch (_) { return null; }
  }

  /** Markdown's inline subset (code, strong, emphasis, links) appended to `into` as elements
   * and text nodes; anything else, HTML included, stays the text it is. */
  function inline(text, into, depth = 0) {
    INLINE.lastIndex = 0;
    const found = [];
    for (let m; (m = INLINE.exec(text));) found.push({ m, index: m.index, end: INLINE.lastIndex });
    let last = 0;
    for (const { m, index, end } of found) {
      if (index > last) into.append(text.slice(last, index));
      last = end;
      if (m[1] !== undefined) { into.append(el("code", null, m[1])); continue; }
      if (depth > 3) { into.append(m[0]); continue; }
      const strong = m[2] !== undefined ? m[2] : m[3];
      const em = m[4] !== undefined ? m[4] : m[5];
      if (strong !== undefined || em !== undefined) {
        const node = el(strong !== undefined ? "strong" : "em");
        inline(strong !== undefined ? strong : em, node, depth + 1);
        into.append(node);
        continue;
      }
      const href = safeUrl(m[7]);
      const link = href ? el("a") : el("span");
      if (href) {
        link.href = href;
        link.target = "_blank";
        link.rel = "noopener noreferrer nofollow";
        link.className = "ext";
      }
      inline(m[6], link, depth + 4); // no links in a link's label
      into.append(link);
    }
    if (last < text.length) into.append(text.slice(last));
  }

  const LIST_MARK = /^\s{0,3}(?:[-*+•]|(\d{1,9})[.)]|[a-z][.)])\s+/;
  const HEADING_MARK = /^\s{0,3}#{1,6}\s+|\s+#+\s*$/g;
  // An info string only before a line break, and only a language's name ("```python"): other
  // text after a fence ("```<script>...") is the code itself, shown, never dropped.
  const FENCE = /^\s*(```|~~~)(?:[ \t]*[\w+#.-]*[ \t]*\n)?|\n?\s*(```|~~~)\s*$/g;

  /** Markdown text (a document) rendered as blocks into `into`, each with the span of the text
   * it came from (`data-start`, `data-end`). */
  function markdown(text, into) {
    const lines = text.split("\n");
    let at = 0;
    let list = null;
    let fence = null;
    let para = null;
    const close = () => { para = null; list = null; };
    for (const line of lines) {
      const start = at;
      at += line.length + 1;
      const span = (node) => { node.dataset.start = node.dataset.start || start; node.dataset.end = at - 1; return node; };
      if (fence) {
        if (/^\s*(```|~~~)/.test(line)) { fence = null; continue; }
        fence.firstChild.append((fence.firstChild.textContent ? "\n" : "") + line);
        span(fence);
        continue;
      }
      if (/^\s*(```|~~~)/.test(line)) {
        close();
        fence = span(el("pre"));
        fence.append(el("code"));
        into.append(fence);
        continue;
      }
      if (!line.trim()) { close(); continue; }
      if (/^\s{0,3}#{1,6}\s/.test(line)) {
        close();
        const level = Math.min(4, 2 + line.trim().indexOf(" ") - 1);
        const h = span(el(`h${Math.max(3, level)}`));
        inline(line.replace(HEADING_MARK, ""), h);
        into.append(h);
        continue;
      }
      const item = LIST_MARK.exec(line);
      if (item) {
        para = null;
        const kind = item[1] ? "ol" : "ul";
        if (!list || list.tagName.toLowerCase() !== kind) {
          list = span(el(kind));
          if (item[1]) list.start = Number(item[1]);
          into.append(list);
        }
        const li = span(el("li"));
        inline(line.slice(item[0].length), li);
        list.append(li);
        span(list);
        continue;
      }
      if (list && /^\s+\S/.test(line)) {
        list.lastChild.append(" ");
        inline(line.trim(), list.lastChild);
        span(list.lastChild);
        span(list);
        continue;
      }
      list = null;
      if (!para) { para = span(el("p")); into.append(para); } else para.append(" ");
      inline(line.trim(), para);
      span(para);
    }
  }

  /** Plain text (HTML's text, PDF, DOCX, .txt) as paragraphs with their spans; the part of a
   * paragraph inside [from, to) is a <mark>. */
  function paragraphs(text, into, from, to) {
    const re = /\n\s*\n/g;
    let start = 0;
    const add = (end) => {
      const chunk = text.slice(start, end);
      if (chunk.trim()) {
        const p = el("p");
        p.dataset.start = start;
        p.dataset.end = end;
        const a = Math.max(from, start) - start;
        const b = Math.min(to, end) - start;
        if (a < b) p.append(chunk.slice(0, a), el("mark", null, chunk.slice(a, b)), chunk.slice(b));
        else p.textContent = chunk;
        into.append(p);
      }
    };
    for (let m; (m = re.exec(text));) { add(m.index); start = re.lastIndex; }
    add(text.length);
  }

  // A thumb (Material Icons' thumb_up, Apache-2.0); thumbs down is it turned over.
  const THUMB = "M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z";

  // A bin (Material Icons' delete, Apache-2.0).
  const TRASH = "M6 19c0 1.1.9 2 2 2h8c1.1 0 2-.9 2-2V7H6v12zM19 4h-3.5l-1-1h-5l-1 1H5v2h14V4z";

  /** An SVG icon of one path, hidden from screen readers (its button has a label). */
  function icon(d) {
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
    path.setAttribute("d", d);
    svg.append(path);
    return svg;
  }

  /** A random id (a conversation's): 32 hex digits. */
  function newId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  /** Create an element with a class and, optionally, text (always as textContent). */
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  /** The cited passage: the sentence highlighted within some of its context when the block
   * quotes it, else the block's opening. */
  function passage(text, sentence) {
    const box = el("span", "passage");
    if (!text) return box;
    const clean = text.replace(/\s+/g, " ").trim();
    const at = sentence ? clean.indexOf(sentence) : -1;
    if (at < 0) {
      box.textContent = clean.length > 320 ? clean.slice(0, 320).replace(/\s\S*$/, "") + "…" : clean;
      return box;
    }
    let start = Math.max(0, at - 140);
    let end = Math.min(clean.length, at + sentence.length + 140);
    let before = clean.slice(start, at);
    let after = clean.slice(at + sentence.length, end);
    if (start > 0) before = "…" + before.replace(/^\S*\s/, "");
    if (end < clean.length) after = after.replace(/\s\S*$/, "") + "…";
    box.append(before, el("mark", null, sentence), after);
    return box;
  }

  /** An error response's JSON message and code, else its status. */
  async function errorMessage(response) {
    try {
      const error = (await response.json()).error;
      if (error && error.message) return `${error.message} (${error.code})`;
    } catch (_) { /* not JSON */ }
    return `The server answered ${response.status}.`;
  }

  /** Server-Sent Events from a fetch body, per the HTML spec's parsing rules. */
  async function* readEvents(body, heard) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let event = { name: "message", data: [], id: null };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        heard();
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.search(/\r\n|\r|\n/)) >= 0) {
          if (buffer[cut] === "\r" && cut === buffer.length - 1) break; // maybe "\r\n" split
          const line = buffer.slice(0, cut);
          buffer = buffer.slice(cut + (buffer.startsWith("\r\n", cut) ? 2 : 1));
          if (line === "") {
            if (event.data.length) yield { name: event.name, data: event.data.join("\n"), id: event.id };
            event = { name: "message", data: [], id: event.id };
            continue;
          }
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? "" : line.slice(colon + 1);
          if (value.startsWith(" ")) value = value.slice(1);
          if (field === "event") event.name = value;
          else if (field === "data") event.data.push(value);
          else if (field === "id") event.id = value;
        }
      }
    } finally {
      reader.releaseLock();
    }
  }

  class StreamRagChat extends HTMLElement {
    connectedCallback() {
      document.addEventListener("pointerdown", this.outside, true);
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: "open" });
      // A constructed sheet is not an inline <style>, so a strict CSP (style-src 'self') on
      // the host page does not block it.
      if (root.adoptedStyleSheets !== undefined && typeof CSSStyleSheet.prototype.replaceSync === "function") {
        if (!SHEET) { SHEET = new CSSStyleSheet(); SHEET.replaceSync(CSS); }
        root.adoptedStyleSheets = [SHEET];
      } else {
        const style = el("style");
        style.textContent = CSS;
        root.append(style);
      }
      const frame = el("div", "root");
      frame.setAttribute("part", "root");
      frame.id = "panel";
      this.frame = frame;
      const bubble = this.dataset.mode === "bubble";
      const title = this.dataset.title || (bubble ? this.t("title") : "");
      const head = el("div", "head");
      if (title) head.append(el("div", "title", title));
      this.fresh = el("button", "new", this.t("newConversation"));
      this.fresh.type = "button";
      this.fresh.hidden = true;
      this.fresh.addEventListener("click", () => this.restart(false));
      // Deleting is the visitor's own choice: a new conversation keeps the team's log.
      this.forget = el("button", "forget");
      this.forget.type = "button";
      this.forget.append(icon(TRASH));
      this.forget.title = this.t("deleteConversation");
      this.forget.setAttribute("aria-label", this.t("deleteConversation"));
      this.forget.hidden = true;
      this.forget.addEventListener("click", () => this.restart(true));
      head.append(this.fresh, this.forget);
      if (bubble) {
        const x = el("button", "x", "×");
        x.type = "button";
        x.setAttribute("aria-label", this.t("close"));
        x.addEventListener("click", () => this.toggle(false));
        head.append(x);
      }
      frame.append(head);
      this.log = el("div", "log");
      this.log.setAttribute("role", "log");
      this.log.setAttribute("aria-live", "polite");
      this.log.setAttribute("aria-label", this.t("answers"));
      this.welcome();
      const form = el("form");
      const label = el("label", "sr-only", this.t("question"));
      const input = el("textarea");
      input.id = "q";
      label.htmlFor = "q";
      input.rows = 2;
      input.placeholder = this.t("placeholder");
      input.setAttribute("aria-label", this.t("question"));
      // No maxLength: it cut a pasted question silently; too long, it is kept and explained.
      input.setAttribute("aria-describedby", "hint");
      this.hint = el("p", "hint");
      this.hint.id = "hint";
      this.hint.setAttribute("aria-live", "polite");
      const send = el("button", "primary", this.t("ask"));
      send.type = "submit";
      const stop = el("button", "stop", this.t("stop"));
      stop.type = "button";
      stop.hidden = true;
      form.append(label, input, send, stop);
      this.tip = el("div", "tip");
      this.tip.setAttribute("role", "tooltip");
      this.tip.id = "tip";
      this.tip.hidden = true;
      // A popover is in the top layer, where a transformed ancestor (a launcher sliding the
      // chat in) is not the containing block of position: fixed, as it would be otherwise.
      if (typeof this.tip.showPopover === "function") this.tip.popover = "manual";
      this.reader = el("section", "reader");
      this.reader.hidden = true;
      this.reader.setAttribute("role", "dialog");
      frame.append(this.log, this.hint, form, this.reader);
      root.append(frame, this.tip);
      this.input = input;
      this.form = form;
      this.sendButton = send;
      this.stopButton = stop;
      this.turns = [];
      this.current = null;
      if (bubble) {
        const launcher = el("button", "launcher");
        launcher.type = "button";
        launcher.setAttribute("aria-controls", "panel");
        launcher.setAttribute("aria-expanded", "false");
        launcher.setAttribute("aria-label", this.t("open"));
        launcher.setAttribute("part", "launcher");
        const svg = icon("M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z");
        this.dot = el("span", "dot");
        this.dot.hidden = true;
        this.dot.setAttribute("role", "status");
        this.dot.setAttribute("aria-label", this.t("unread"));
        launcher.append(svg, this.dot);
        launcher.addEventListener("click", () => this.toggle(frame.hidden));
        this.launcher = launcher;
        frame.hidden = true;
        root.append(launcher);
      }
      this.restore();

      form.addEventListener("submit", (e) => {
        e.preventDefault();
        this.ask(input.value);
      });
      input.addEventListener("input", () => { if (this.hint.textContent) this.tooLong(input.value.trim()); });
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          this.ask(input.value);
        }
      });
      stop.addEventListener("click", () => this.stop());
      root.addEventListener("keydown", (e) => {
        // A key after a touch is a keyboard's: Enter on a chip opens it, as a tap would not.
        this.pointer = "";
        const link = linkOf(e);
        if (e.key === "Enter" && link && !link.hasAttribute("href")) this.activate(e, link);
        if (e.key === "Escape") {
          if (!this.reader.hidden) this.closeReader();
          else if (!this.tip.hidden) this.dismissTip();
          else if (this.current) this.stop();
          else if (this.launcher && !this.frame.hidden) this.toggle(false);
        }
      });
      const chipOf = (e) => (e.target instanceof Element ? e.target.closest(".chip") : null);
      // Hover and focus show a chip's passage card for as long as they last; a tap (no hover on
      // a touch screen) pins it open until a tap elsewhere, its Close button or Escape.
      const transient = () => { if (!this.pinned) this.hideTip(); };
      root.addEventListener("mouseover", (e) => { const c = chipOf(e); if (c) this.showTip(c); });
      root.addEventListener("mouseout", (e) => { if (chipOf(e)) transient(); });
      root.addEventListener("focusin", (e) => {
        if (this.tip.contains(e.target) || this.quiet) return;
        const c = chipOf(e);
        if (c) this.showTip(c); else transient();
      });
      root.addEventListener("focusout", (e) => { if (chipOf(e)) transient(); });
      // Where a click came from, for browsers whose click is not a PointerEvent.
      root.addEventListener("pointerdown", (e) => { this.pointer = e.pointerType; }, { passive: true });
      this.tip.addEventListener("click", (e) => {
        if (e.target instanceof Element && e.target.closest("button.close")) this.dismissTip();
      });
      // A document link opens however it is activated: click (any modifier), middle-click,
      // Enter on a keyed link (no href, so no native activation).
      const linkOf = (e) => (e.target instanceof Element ? e.target.closest("a[data-url]") : null);
      root.addEventListener("click", (e) => { const l = linkOf(e); if (l) this.activate(e, l); });
      root.addEventListener("auxclick", (e) => { const l = linkOf(e); if (l && e.button === 1) this.activate(e, l); });
      // The log follows a growing answer while the reader is at its end; scrolled up to read,
      // it stays put. Content growing fires no scroll event, so this is the reader's choice.
      this.stick = true;
      this.log.addEventListener("scroll", () => {
        this.hideTip();
        this.stick = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 32;
      }, { passive: true });
    }

    disconnectedCallback() {
      document.removeEventListener("pointerdown", this.outside, true);
    }

    /** A visitor text: the team's data-text-<name>, else the widget's language's, else English. */
    t(name, vars) {
      const own = this.dataset["text" + name[0].toUpperCase() + name.slice(1)];
      const lang = String(this.dataset.lang || document.documentElement.lang || "en").slice(0, 2).toLowerCase();
      let text = own !== undefined ? own : (TEXTS[lang] || TEXTS.en)[name] || TEXTS.en[name] || name;
      for (const [key, value] of Object.entries(vars || {})) text = text.split(`{${key}}`).join(String(value));
      return text;
    }

    /** Developer details (ids, hashes, scores, withheld sentences, the API's words) are shown. */
    get details() {
      return this.hasAttribute("data-details") && this.dataset.details !== "false";
    }

    /** The greeting and suggested questions, until the first question. */
    welcome() {
      const box = el("div", "empty");
      box.append(el("p", "greeting", this.t("greeting")));
      const offered = String(this.dataset.suggestions || "").split("|").map((q) => q.trim()).filter(Boolean);
      if (offered.length) {
        const row = el("div", "suggest");
        for (const question of offered.slice(0, 6)) {
          const b = el("button", null, question);
          b.type = "button";
          // The button goes with the greeting: focus moves to the question box, not the page.
          b.addEventListener("click", () => { this.input.focus(); this.ask(question); });
          row.append(b);
        }
        box.append(row);
      }
      this.log.append(box);
    }

    /** Open or close the bubble's panel. */
    toggle(open, focus = true) {
      if (!this.launcher) return;
      this.frame.hidden = !open;
      this.launcher.setAttribute("aria-expanded", String(open));
      this.launcher.setAttribute("aria-label", this.t(open ? "close" : "open"));
      if (open) {
        this.dot.hidden = true;
        if (focus) this.input.focus();
        this.follow();
      } else {
        this.hideTip();
        if (focus) this.launcher.focus();
      }
      this.save();
    }

    /** An answer ended while the bubble was closed: the launcher shows a dot. */
    unread() {
      if (this.launcher && this.frame.hidden && !this.restoring) this.dot.hidden = false;
    }

    /** The hand-off link ("Contact us") the team set, under a refusal or an error. */
    handoff(box) {
      const url = safeUrl(String(this.dataset.handoffUrl || ""));
      if (!url) return;
      const line = el("p", "handoff", `${this.t("handoffLead")} `);
      const link = el("a", null, this.t("handoff"));
      link.href = url;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      line.append(link);
      box.append(line);
    }

    /** What a failed response means for a visitor; the API's own words go to the console
     * (and, with data-details, on screen). */
    async problem(response) {
      const words = await errorMessage(response);
      console.warn(`stream-rag: HTTP ${response.status}: ${words}`);
      if (this.details) return words;
      if (response.status === 429) {
        const wait = Math.ceil(Number(response.headers.get("Retry-After")));
        return wait > 0 ? this.t("rateLimited", { s: wait }) : this.t("rateLimitedSoon");
      }
      if (response.status === 401 || response.status === 403) return this.t("unavailable");
      if (response.status === 404) return this.t("docGone");
      if (response.status >= 500) return this.t("busy");
      return this.t("failed");
    }

    get storeKey() {
      return `stream-rag-chat|${this.api}|${this.dataset.collection || ""}`;
    }

    /** The conversation, kept in this tab (sessionStorage) so a reload shows it again. */
    save() {
      if (this.restoring) return;
      const data = {
        conversation: this.conversation,
        open: this.launcher ? !this.frame.hidden : false,
        turns: this.turns.slice(-30).map((t) => ({ question: t.question, events: t.events, rating: t.rating || null })),
      };
      try { sessionStorage.setItem(this.storeKey, JSON.stringify(data)); } catch (_) { /* full or blocked: the page keeps it */ }
    }

    restore() {
      let saved = null;
      try { saved = JSON.parse(sessionStorage.getItem(this.storeKey) || "null"); } catch (_) { saved = null; }
      const id = saved && saved.conversation;
      this.conversation = typeof id === "string" && /^[A-Za-z0-9_-]{8,64}$/.test(id) ? id : newId();
      this.restoring = true;
      try {
        for (const stored of (saved && Array.isArray(saved.turns) ? saved.turns : [])) {
          if (!stored || typeof stored.question !== "string" || !Array.isArray(stored.events)) continue;
          const empty = this.log.querySelector(".empty");
          if (empty) empty.remove();
          const turn = this.newTurn(stored.question);
          for (const event of stored.events) if (event && typeof event.name === "string") turn.handle(event);
          if (!turn.finished && !turn.failed) turn.stopped();
          if (stored.rating === "up" || stored.rating === "down") turn.rated(stored.rating, true);
        }
      } finally {
        this.restoring = false;
      }
      this.fresh.hidden = this.forget.hidden = !this.turns.length;
      if (saved && saved.open) this.toggle(true, false);
    }

    /** A new conversation: the log and this tab's copy are cleared; with `forget`, the server's
     * copy of its questions is deleted too (they are the visitor's to delete). */
    restart(forget) {
      if (this.current) this.stop();
      const old = this.conversation;
      this.closeReader();
      this.hideTip();
      this.turns = [];
      this.log.replaceChildren();
      this.welcome();
      this.conversation = newId();
      this.fresh.hidden = true;
      this.forget.hidden = true;
      this.save();
      this.input.focus();
      if (!forget) return;
      fetch(`${this.api}/v1/conversations/${old}`, { method: "DELETE", headers: this.headers(), credentials: "omit" })
        .then((r) => { if (!r.ok) console.warn(`stream-rag: deleting the conversation answered ${r.status}`); })
        .catch(() => console.warn("stream-rag: the conversation could not be deleted (network)"));
    }

    async sendFeedback(answerId, rating, comment) {
      try {
        const response = await fetch(`${this.api}/v1/feedback`, {
          method: "POST",
          headers: this.headers({ "Content-Type": "application/json" }),
          body: JSON.stringify({ answer_id: answerId, rating, comment: comment || "" }),
          credentials: "omit",
        });
        if (response.ok) return true;
        console.warn(`stream-rag: feedback answered ${response.status}: ${await errorMessage(response)}`);
      } catch (_) {
        console.warn("stream-rag: feedback could not reach the server");
      }
      return false;
    }

    /** The reader: the cited version, rendered, scrolled to the cited passage (highlighted). */
    async openReader(link) {
      const block = link.srwBlock || {};
      this.hideTip();
      this.readerFrom = link;
      const bar = el("div", "bar");
      const title = el("h2", null, this.details ? `${block.name} · version ${block.version}` : block.name);
      title.id = "reader-title";
      this.reader.setAttribute("aria-labelledby", "reader-title");
      const download = this.docLink("download", this.t("download"), block.url, block, link.srwTurn);
      const back = el("button", "close", this.t("back"));
      back.type = "button";
      back.addEventListener("click", () => this.closeReader());
      bar.append(title, download, back);
      const doc = el("div", "doc");
      doc.tabIndex = 0;
      doc.append(el("p", "loading", this.t("loading")));
      this.reader.replaceChildren(bar, doc);
      this.reader.hidden = false;
      back.focus();
      // A PDF's URL ends in #page=N (the download opens there); the text has no pages.
      const url = this.resolve(String(block.url || "").split("#")[0].replace(/\/content$/, "/text"))
        + (block.chunk_id ? `?chunk=${encodeURIComponent(block.chunk_id)}` : "");
      let body;
      try {
        const response = await fetch(url, { headers: this.headers(), credentials: "omit" });
        if (!response.ok) {
          doc.replaceChildren(el("p", "error", await this.problem(response)));
          return;
        }
        body = await response.json();
      } catch (_) {
        doc.replaceChildren(el("p", "error", this.t("offline")));
        return;
      }
      if (this.reader.hidden || this.readerFrom !== link) return;
      const passage = body.passage || {};
      if (typeof passage.page === "number") title.append(` · ${this.t("page", { n: passage.page })}`);
      this.render(doc, body);
    }

    render(doc, body) {
      doc.replaceChildren();
      const text = String(body.text || "");
      const passage = body.passage || {};
      const from = typeof passage.start === "number" ? passage.start : -1;
      const to = typeof passage.end === "number" ? passage.end : -1;
      const pages = Array.isArray(body.pages) ? body.pages : [];
      if (body.source && /markdown/.test(String(body.media_type || ""))) {
        markdown(text, doc);
      } else if (pages.length) {
        pages.forEach((start, i) => {
          const end = i + 1 < pages.length ? pages[i + 1] : text.length;
          const part = el("div", "sheet");
          part.dataset.page = i + 1;
          part.append(el("p", "page", this.t("page", { n: i + 1 })));
          paragraphs(text.slice(start, end), part, from - start, to - start);
          doc.append(part);
        });
      } else {
        paragraphs(text, doc, from, to);
      }
      for (const node of doc.querySelectorAll("p[data-start], li[data-start], h3[data-start], h4[data-start], pre[data-start], mark")) {
        const start = Number(node.dataset.start);
        const end = Number(node.dataset.end);
        if (node.tagName === "MARK" || (!node.closest(".sheet") && start < to && end > from)) {
          (node.tagName === "MARK" ? node.parentNode : node).classList.add("cited");
        }
      }
      const first = doc.querySelector(".cited");
      if (first) doc.scrollTop = Math.max(0, first.offsetTop - doc.clientHeight / 4);
    }

    closeReader() {
      if (this.reader.hidden) return;
      const inside = this.reader.contains(this.shadowRoot.activeElement);
      this.reader.hidden = true;
      this.reader.replaceChildren();
      if (inside && this.readerFrom && this.readerFrom.isConnected) {
        this.quiet = true;
        this.readerFrom.focus();
        this.quiet = false;
      }
    }

    /** A pinned passage card closes at a touch or click anywhere but on it or its chip. */
    outside = (e) => {
      if (!this.pinned) return;
      const path = e.composedPath();
      if (!path.includes(this.tip) && !path.includes(this.pinned)) this.hideTip();
    };

    /** Keep the newest content in view (the log only: scrollIntoView moved the host page too). */
    follow() {
      if (this.stick) this.log.scrollTop = this.log.scrollHeight;
      // The log grows up to its max-height and pushes the question box down, out of a phone's
      // screen: the page is moved as little as brings it back, unless the reader scrolled it.
      if (this.pageFollow === null || this.pageFollow === undefined) return;
      if (scrollY !== this.pageFollow) { this.pageFollow = null; return; }
      if (!this.inView()) this.form.scrollIntoView({ block: "nearest" });
      this.pageFollow = scrollY;
    }

    /** Whether the question box is on screen (above a phone's keyboard, where it is known). */
    inView() {
      const r = this.form.getBoundingClientRect();
      const v = window.visualViewport;
      const bottom = v ? Math.min(innerHeight, v.offsetTop + v.height) : innerHeight;
      return r.top >= 0 && r.bottom <= bottom + 1;
    }

    get api() {
      return (this.dataset.api || SCRIPT_BASE).replace(/\/+$/, "");
    }

    headers(extra) {
      const headers = Object.assign({}, extra);
      if (this.dataset.key) headers.Authorization = `Bearer ${this.dataset.key}`;
      return headers;
    }

    /** An event's URL resolved against the API: the server's paths ("/v1/...") are under
     * the API's base, prefix and all (a URL resolver would drop the prefix). */
    resolve(url) {
      const path = String(url || "");
      const base = new URL(this.api + "/", location.href);
      if (path.startsWith("/") && !path.startsWith("//")) return new URL(base.href + path.slice(1)).href;
      return new URL(path, base).href;
    }

    /** Earlier questions with their verified answers, for servers that accept `history`. A
     * stopped answer is incomplete: sent, the model would take it for what was said, so its
     * question goes alone (it still gives a follow-up its subject). */
    history() {
      const turns = this.turns
        .filter((t) => t.finished && t.sentences.length && !t.refused)
        .slice(-6)
        .map((t) => (t.partial
          ? { question: t.question }
          : { question: t.question, answer: t.sentences.map((s) => s.text).join(" ").slice(0, 8000) }));
      // Over the server's limit in all, the whole history was refused (and the question asked
      // without it): the newest turns that fit go. UTF-16 length >= the server's count.
      let total = 0;
      let first = turns.length;
      while (first > 0) {
        const size = turns[first - 1].question.length + (turns[first - 1].answer || "").length;
        if (total + size > MAX_HISTORY_CHARS) break;
        total += size;
        first -= 1;
      }
      return turns.slice(first);
    }

    /** Says so when `question` is over the server's limit (in code points, as it counts). */
    tooLong(question) {
      const length = [...question].length;
      const over = length > MAX_QUESTION_CHARS;
      this.hint.textContent = over
        ? this.t("tooLong", { n: length.toLocaleString("en-US"), s: MAX_QUESTION_CHARS.toLocaleString("en-US") })
        : "";
      if (over) this.input.setAttribute("aria-invalid", "true");
      else this.input.removeAttribute("aria-invalid");
      return over;
    }

    ask(raw) {
      const question = raw.trim();
      if (!question || this.tooLong(question)) return;
      if (this.current) {
        // Enter did nothing here: the question stays in the box and the reader learns why.
        this.hint.textContent = this.details ? BUSY : this.t("busyHint");
        return;
      }
      this.input.value = "";
      const empty = this.log.querySelector(".empty");
      if (empty) empty.remove();
      this.run(question);
    }

    stop() {
      const turn = this.current;
      if (!turn) return;
      turn.controller.abort();
      // A server may go on with an answer whose connection closed, for a resume: say it is not
      // wanted (after its first event, which names it).
      if (turn.lastId) {
        const stream = turn.lastId.slice(0, turn.lastId.lastIndexOf("."));
        fetch(`${this.api}/v1/streams/${encodeURIComponent(stream)}`, {
          method: "DELETE", headers: this.headers({}), credentials: "omit", keepalive: true,
        }).catch(() => {});
      }
    }

    async run(question) {
      // Ask (or a Retry) hides or disables the control a keyboard user is on: focus goes to
      // Stop, and from Stop back to the question box when the answer is over.
      const focused = this.shadowRoot.activeElement;
      const turn = this.newTurn(question);
      this.current = turn;
      this.sendButton.hidden = true;
      this.stopButton.hidden = false;
      if (focused && focused.tagName === "BUTTON") this.stopButton.focus();
      const body = { question, conversation: this.conversation };
      if (this.dataset.collection) body.collection = this.dataset.collection;
      const history = this.history();
      if (history.length) body.history = history;
      turn.say(this.t("searching"));
      let silence = null;
      // Asked from the question box in view, the box stays in view as the answer grows.
      this.pageFollow = this.inView() ? scrollY : null;
      const post = (payload) => fetch(`${this.api}/v1/chat`, {
        method: "POST",
        headers: this.headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
        body: JSON.stringify(payload),
        signal: turn.controller.signal,
        credentials: "omit",
        cache: "no-store",
      });
      try {
        let response = await post(body);
        if (response.status === 400 && (body.history || body.conversation)) {
          // A server that does not take `history` (or `conversation`) refused before answering:
          // ask without them.
          delete body.history;
          delete body.conversation;
          response = await post(body);
        }
        if (!response.ok) {
          turn.fail(await this.problem(response));
          return;
        }
        const heard = () => {
          clearTimeout(silence);
          silence = setTimeout(() => { turn.lost = true; turn.controller.abort(); }, SILENCE_MS);
        };
        let lastId = null;
        const consume = async (stream) => {
          heard();
          for await (const event of readEvents(stream, heard)) {
            if (event.id) lastId = turn.lastId = event.id;
            const over = turn.handle(event);
            this.follow();
            if (over) return true;
          }
          return false;
        };
        const dropped = (error) => {
          if (turn.controller.signal.aborted || !lastId) throw error;
          return false;
        };
        let over = await consume(response.body).catch(dropped);
        // A dropped connection: the same answer resumes (on any server) after the last event.
        for (let attempt = 0; !over && lastId && attempt < RESUME_TRIES; attempt++) {
          await new Promise((done) => setTimeout(done, 500 * 2 ** attempt));
          const stream = lastId.slice(0, lastId.lastIndexOf("."));
          const resumed = await fetch(`${this.api}/v1/streams/${encodeURIComponent(stream)}`, {
            headers: this.headers({ Accept: "text/event-stream", "Last-Event-ID": lastId }),
            signal: turn.controller.signal,
            credentials: "omit",
            cache: "no-store",
          }).catch(dropped);
          if (!resumed || resumed.status === 204 || resumed.status === 404) break;
          if (resumed.ok) over = await consume(resumed.body).catch(dropped);
        }
        if (!turn.finished && !turn.failed) {
          if (!this.details) turn.fail(this.t("lost"));
          else turn.fail(turn.sentences.length ? "the connection ended before the rest came." : "The answer broke off before it was complete.");
        }
      } catch (error) {
        const lower = (text) => (turn.sentences.length ? text[0].toLowerCase() + text.slice(1) : text);
        if (turn.controller.signal.aborted && !turn.lost) turn.stopped();
        else if (!this.details) {
          console.warn(`stream-rag: ${turn.lost ? "no data for a minute" : "network error"}: ${error}`);
          turn.fail(this.t(turn.lost ? "silent" : silence !== null ? "lost" : "offline"));
        } else if (turn.lost) turn.fail(lower("Nothing came from the server for a minute: the connection was lost."));
        // Once the server answered, a failure is the connection's, not a site it refuses.
        else if (silence !== null) turn.fail(lower("The connection to the server was lost. Retry to ask again."));
        else turn.fail("Could not reach the server: the connection failed or was lost, or this site may not use it.");
      } finally {
        clearTimeout(silence);
        this.current = null;
        const hadFocus = this.shadowRoot.activeElement === this.stopButton;
        this.stopButton.hidden = true;
        this.sendButton.hidden = false;
        if (hadFocus) this.input.focus();
        if ([BUSY, BUSY_RETRY, this.t("busyHint")].includes(this.hint.textContent)) this.hint.textContent = "";
        // Shown once the answer is over: above the log, it would move the question box down
        // while the page follows it.
        this.fresh.hidden = this.forget.hidden = false;
        this.follow();
        this.save();
      }
    }

    newTurn(question) {
      const chat = this;
      const node = el("article", "turn");
      const q = el("p", "q", question);
      const a = el("div", "a");
      const body = el("div", "body");
      const status = el("p", "status");
      status.setAttribute("role", "status");
      a.append(body, status);
      node.append(q, a);
      this.log.append(node);
      this.stick = true;
      this.follow();

      const turn = {
        question, node, body, status, controller: new AbortController(),
        blocks: new Map(), sentences: [], dropped: [], cited: new Map(), events: [],
        finished: false, failed: false, refused: false, answerId: null, rating: null,
        withheld: null, sourcesList: null, uncovered: "", open: null,
        say(text) { status.textContent = text; },
        /** Returns true when the stream is over. */
        handle(event) {
          turn.events.push({ name: event.name, data: event.data, id: event.id || null });
          if (event.id && !turn.answerId) turn.answerId = String(event.id).split(".")[0];
          if (event.name === "__stopped") { turn.stopped(); return true; }
          let data;
          try { data = JSON.parse(event.data); } catch (_) { return false; }
          switch (event.name) {
            case "sources":
              for (const block of data.blocks || []) turn.blocks.set(block.n, block);
              turn.say(chat.t("writing"));
              return false;
            case "sentence":
              try { performance.mark("stream-rag:sentence-received", { detail: { index: data.index } }); } catch (_) { /* old browser */ }
              turn.addSentence(data);
              return false;
            case "dropped":
              turn.addDropped(data);
              return false;
            case "refusal":
              turn.refuse(data);
              return false;
            case "done":
              turn.finish(data);
              return true;
            case "error":
              console.warn(`stream-rag: the answer failed: ${data.message} (${data.code})`);
              if (chat.details) turn.fail(`${data.message || "The answer failed."} (${data.code || "error"})`);
              else turn.fail(chat.t(data.code === "shutting_down" || data.code === "server_busy" ? "busy" : "failed"));
              return true;
            case "__failed":
              if (!turn.failed) turn.fail(String(data.message || ""));
              return true;
            default:
              return false;
          }
        },
        /** The block a unit of this kind goes into: a paragraph, a list, or its own. */
        container(kind, text) {
          if (kind === "list_item") {
            const mark = LIST_MARK.exec(text);
            const tag = mark && mark[1] ? "ol" : "ul";
            if (!turn.open || turn.open.tagName.toLowerCase() !== tag) {
              turn.open = el(tag);
              if (mark && mark[1]) turn.open.start = Number(mark[1]);
              body.append(turn.open);
            }
            const li = el("li");
            turn.open.append(li);
            return [li, mark ? text.slice(mark[0].length) : text];
          }
          if (kind === "heading") {
            turn.open = null;
            const h = el("h4");
            body.append(h);
            return [h, text.replace(HEADING_MARK, "")];
          }
          if (kind === "code") {
            turn.open = null;
            const pre = el("pre");
            body.append(pre);
            return [pre, text.replace(FENCE, "")];
          }
          if (!turn.open || turn.open.tagName !== "P") {
            turn.open = el("p");
            body.append(turn.open);
          } else {
            turn.open.append(document.createTextNode(" "));
          }
          return [turn.open, text];
        },
        addSentence(data) {
          // Built whole, then inserted once: a shown sentence is never touched again.
          const kind = data.kind || "sentence";
          const span = el(kind === "code" ? "code" : "span", `s k-${kind}`);
          span.dataset.index = data.index;
          const [into, text] = turn.container(kind, String(data.text || ""));
          if (kind === "code") span.textContent = text;
          else inline(text, span);
          for (const cite of data.citations || []) {
            const block = Object.assign({}, turn.blocks.get(cite.n) || {}, cite);
            const chip = chat.docLink("chip", String(cite.n), cite.url, block, turn);
            chip.dataset.n = cite.n;
            chip.setAttribute("aria-label",
              chat.details ? `Source ${cite.n}: ${block.name}, version ${block.version}. Opens the document.`
                : `${chat.t("sources")} ${cite.n}: ${block.name}`);
            chip.srwSentence = data.text;
            span.append(chip);
            if (!turn.cited.has(cite.n)) { turn.cited.set(cite.n, block); turn.addSource(block); }
          }
          into.append(span);
          turn.sentences.push(data);
        },
        addSource(block) {
          if (!turn.sourcesList) {
            const box = el("div", "sources");
            box.append(el("h3", null, chat.t("sources")));
            turn.sourcesList = el("ol");
            box.append(turn.sourcesList);
            a.insertBefore(box, status);
          }
          const item = el("li");
          const link = chat.docLink(null, block.name, block.url, block, turn);
          item.append(el("span", "n", `[${block.n}] `), link);
          if (chat.details) {
            item.append(` · v${block.version} · `, el("code", null, `sha256 ${String(block.sha256 || "").slice(0, 12)}`));
            item.title = `document ${block.doc_id}, version ${block.version}`;
          }
          turn.sourcesList.append(item);
        },
        addDropped(data) {
          turn.dropped.push(data);
          if (!chat.details) return; // withheld sentences are a developer's concern
          if (!turn.withheld) {
            turn.withheld = el("details", "withheld");
            turn.withheldSummary = el("summary");
            turn.withheldList = el("ul");
            turn.withheld.append(turn.withheldSummary, turn.withheldList);
            a.insertBefore(turn.withheld, turn.sourcesList ? turn.sourcesList.parentNode : status);
          }
          const count = turn.dropped.length;
          turn.withheldSummary.textContent =
            `${count} sentence${count === 1 ? "" : "s"} withheld: not supported by the sources`;
          const why = REASONS[data.reason] || data.reason;
          turn.withheldList.append(el("li", null, `Sentence ${data.index + 1}: ${why}.`));
        },
        refuse(data) {
          turn.refused = true;
          const box = el("div", "refusal");
          box.dataset.reason = data.reason;
          chat.unread();
          if (!chat.details) {
            // A visitor reads the team's words; scores and file names are not theirs.
            box.append(el("p", "msg", chat.t(data.reason === "conflicting_sources" ? "conflict" : "refusal")));
            chat.handoff(box);
            a.insertBefore(box, status);
            return;
          }
          const details = Array.isArray(data.details) ? data.details : [];
          // The server's message spells the conflict out for plain clients; shown side by
          // side below, a short heading says it better.
          const sideBySide = data.reason === "conflicting_sources" && details.some((c) => c && c.a && c.b);
          box.append(el("p", "msg", sideBySide ? CONFLICT_HEADING : data.message));
          if (data.reason === "conflicting_sources") {
            for (const conflict of details) box.append(turn.conflict(conflict));
          } else if (data.reason === "low_evidence" && details[0] && typeof details[0].evidence === "number") {
            box.append(el("p", "detail",
              `Best evidence ${details[0].evidence.toFixed(2)}, needed ${Number(details[0].threshold).toFixed(2)}.`));
          }
          chat.handoff(box);
          a.insertBefore(box, status);
        },
        conflict(conflict) {
          const sides = el("div", "sides");
          for (const side of [conflict.a, conflict.b]) {
            if (!side) continue;
            const card = el("div", "side");
            const who = el("p", "who");
            const link = chat.docLink(null, side.name, side.url, side, turn);
            who.append(`[${side.n}] `, link, ` · v${side.version}`);
            card.append(who);
            // A chat key is not shown what a refused answer's sources say: names only.
            if (side.sentence) card.append(el("blockquote", null, side.sentence));
            if (Array.isArray(side.values) && side.values.length) {
              const values = el("p", "detail");
              values.append("Says: ");
              side.values.forEach((v, i) => { if (i) values.append(", "); values.append(el("mark", null, v)); });
              card.append(values);
            }
            sides.append(card);
          }
          return sides;
        },
        finish(data) {
          turn.finished = true;
          turn.say("");
          if (!turn.refused) chat.unread();
          if (!turn.sentences.length && !turn.refused) return;
          if (turn.sentences.length) {
            // What the question asked that no source covers: the answer above leaves it out.
            const gaps = data && Array.isArray(data.uncovered) ? data.uncovered : [];
            if (gaps.length) {
              turn.uncovered = `${chat.t("uncovered")}${gaps.map((g) => g.question).join(" ")}`;
              a.append(el("p", "uncovered", turn.uncovered));
            }
          }
          const actions = el("div", "actions");
          if (turn.sentences.length) {
            const copy = el("button", null, chat.t("copy"));
            copy.type = "button";
            copy.addEventListener("click", () => turn.copy(copy));
            actions.append(copy);
          }
          if (turn.answerId) turn.feedback(actions);
          a.append(actions);
        },
        /** Thumbs up and down; down asks what was missing (optional). */
        feedback(actions) {
          const box = el("span", "rate");
          turn.rateButtons = {};
          for (const [rating, label] of [["up", "helpful"], ["down", "notHelpful"]]) {
            const b = el("button", rating);
            b.append(icon(THUMB));
            b.type = "button";
            b.title = chat.t(label);
            b.setAttribute("aria-label", chat.t(label));
            b.setAttribute("aria-pressed", "false");
            b.addEventListener("click", () => turn.rate(rating));
            box.append(b);
            turn.rateButtons[rating] = b;
          }
          turn.actions = actions;
          actions.append(box);
        },
        rated(rating, quiet) {
          turn.rating = rating;
          for (const [name, b] of Object.entries(turn.rateButtons || {})) b.setAttribute("aria-pressed", String(name === rating));
          if (quiet && turn.actions) turn.thank();
        },
        thank(text) {
          const old = turn.actions.querySelector(".comment, .thanks");
          if (old) old.remove();
          turn.actions.append(el("span", "thanks", text || chat.t("thanks")));
        },
        async rate(rating) {
          turn.rated(rating);
          chat.save();
          const sent = await chat.sendFeedback(turn.answerId, rating, "");
          if (!sent) { turn.thank(chat.t("feedbackFailed")); return; }
          if (rating === "up") { turn.thank(); return; }
          const old = turn.actions.querySelector(".comment, .thanks");
          if (old) old.remove();
          const form = el("form", "comment");
          const box = el("textarea");
          box.rows = 2;
          box.maxLength = 2000;
          box.placeholder = chat.t("commentLabel");
          box.setAttribute("aria-label", chat.t("commentLabel"));
          const send = el("button", null, chat.t("send"));
          send.type = "submit";
          form.append(box, send);
          form.addEventListener("submit", async (e) => {
            e.preventDefault();
            send.disabled = true;
            const ok = await chat.sendFeedback(turn.answerId, "down", box.value.trim());
            turn.thank(ok ? chat.t("thanks") : chat.t("feedbackFailed"));
          });
          turn.actions.append(form);
          box.focus();
        },
        async copy(button) {
          const lines = [turn.sentences.map((s) => s.text + s.citations.map((c) => `[${c.n}]`).join("")).join(" "), ""];
          // Copied without it, the answer's silence on that part reads as a "no".
          if (turn.uncovered) lines.push(turn.uncovered, "");
          lines.push(`${chat.t("sources")}:`);
          for (const block of turn.cited.values()) {
            lines.push(chat.details
              ? `[${block.n}] ${block.name}, version ${block.version} (sha256 ${block.sha256}): ${chat.resolve(block.url)}`
              : `[${block.n}] ${block.name}: ${chat.resolve(block.url)}`);
          }
          const text = lines.join("\n");
          try {
            await navigator.clipboard.writeText(text);
            button.textContent = chat.t("copied");
          } catch (_) {
            // No async clipboard (a page served over plain http): the old way still works.
            const area = el("textarea", "sr-only");
            area.value = text;
            a.append(area);
            area.select();
            const copied = document.execCommand("copy");
            area.remove();
            button.focus();
            button.textContent = copied ? chat.t("copied") : "Copy failed";
          }
        },
        stopped() {
          turn.finished = true;
          turn.partial = true;
          if (!chat.restoring && turn.events[turn.events.length - 1]?.name !== "__stopped") turn.events.push({ name: "__stopped", data: "{}" });
          const stopped = chat.details ? "Stopped." : chat.t("stopped");
          const incomplete = chat.details ? "Stopped. The answer above is incomplete." : `${chat.t("stopped")} ${chat.t("incomplete")}`;
          turn.say(turn.sentences.length ? incomplete : stopped);
        },
        fail(message) {
          turn.failed = true;
          turn.say("");
          chat.unread();
          if (!chat.restoring) turn.events.push({ name: "__failed", data: JSON.stringify({ message }) });
          const box = el("div", "error");
          box.setAttribute("role", "alert");
          // Sentences shown before the failure are only part of the answer: say so, as Stop does.
          const shown = !turn.sentences.length ? message
            : chat.details ? `The answer above is incomplete: ${message}` : `${chat.t("incomplete")} ${message}`;
          box.append(el("span", null, shown));
          const retry = el("button", null, chat.details ? "Retry" : chat.t("retry"));
          retry.type = "button";
          retry.addEventListener("click", () => {
            if (chat.current) {
              chat.hint.textContent = chat.details ? BUSY_RETRY : chat.t("busyHint");
              return;
            }
            retry.disabled = true;
            chat.run(question);
          });
          box.append(retry);
          if (!chat.details) chat.handoff(box);
          a.append(box);
        },
      };
      this.turns.push(turn);
      return turn;
    }

    /** Show `chip`'s passage card; `pin` keeps it open (a tap), with Open and Close buttons,
     * as a dialog named for its source. A pinned card stays until dismissed. */
    showTip(chip, pin = false) {
      if (this.pinned && !pin) return;
      if (this.pinned && this.pinned !== chip) this.pinned.removeAttribute("aria-expanded");
      const block = chip.srwBlock || {};
      const tip = this.tip;
      tip.replaceChildren(
        el("span", "who", `[${block.n}] ${block.name} · version ${block.version}`),
        passage(block.text, chip.srwSentence),
      );
      this.pinned = pin ? chip : null;
      tip.classList.toggle("pinned", pin);
      tip.setAttribute("role", pin ? "dialog" : "tooltip");
      if (pin) {
        tip.setAttribute("aria-label", `Source ${block.n}: ${block.name}, version ${block.version}`);
        chip.setAttribute("aria-expanded", "true");
        const actions = el("span", "tip-actions");
        const open = this.docLink("open", "Open", block.url, block, chip.srwTurn);
        open.setAttribute("aria-label", `Open ${block.name}, version ${block.version}`);
        const close = el("button", "close", "Close");
        close.type = "button";
        actions.append(open, close);
        tip.append(actions);
      } else {
        tip.removeAttribute("aria-label");
      }
      tip.hidden = false;
      if (tip.popover && !tip.matches(":popover-open")) tip.showPopover();
      const r = chip.getBoundingClientRect();
      const w = tip.offsetWidth;
      const h = tip.offsetHeight;
      const left = Math.max(8, Math.min(r.left, innerWidth - w - 8));
      const top = r.bottom + 6 + h <= innerHeight ? r.bottom + 6 : Math.max(8, r.top - h - 6);
      tip.style.left = `${left}px`;
      tip.style.top = `${top}px`;
      // Without popovers, a transformed ancestor offsets and scales the fixed card: where it
      // landed says by how much, and the second placement undoes it.
      const placed = tip.getBoundingClientRect();
      if (Math.abs(placed.left - left) > 0.5 || Math.abs(placed.top - top) > 0.5) {
        const sx = placed.width / tip.offsetWidth || 1;
        const sy = placed.height / tip.offsetHeight || 1;
        tip.style.left = `${left + (left - placed.left) / sx}px`;
        tip.style.top = `${top + (top - placed.top) / sy}px`;
      }
      // Screen readers hear the passage as the chip's description, only while it is this chip's.
      if (this.tipChip && this.tipChip !== chip) this.tipChip.removeAttribute("aria-describedby");
      chip.setAttribute("aria-describedby", "tip");
      this.tipChip = chip;
    }

    hideTip() {
      this.tip.hidden = true;
      if (this.tip.popover && this.tip.matches(":popover-open")) this.tip.hidePopover();
      if (this.tipChip) this.tipChip.removeAttribute("aria-describedby");
      if (this.pinned) this.pinned.removeAttribute("aria-expanded");
      this.tipChip = null;
      this.pinned = null;
    }

    /** Close the card at the reader's word (Escape, Close): focus that was in it goes back to
     * its chip (without showing the card again), not to the page's body. */
    dismissTip() {
      const chip = this.tipChip;
      const inside = this.tip.contains(this.shadowRoot.activeElement);
      this.hideTip();
      if (inside && chip) {
        this.quiet = true;
        chip.focus();
        this.quiet = false;
      }
    }

    /** A link to a cited document. Without a key it is a plain link. With one it has no href:
     * no URL can carry the key, and a link would offer "open in new tab" and "copy link" for
     * a URL that answers 401; every activation goes through `activate` instead. */
    docLink(className, text, url, block, turn) {
      const link = el("a", className, text);
      link.dataset.url = this.resolve(url);
      link.srwBlock = block;
      link.srwTurn = turn;
      if (this.dataset.key) {
        link.setAttribute("role", "link");
        link.tabIndex = 0;
      } else {
        link.href = link.dataset.url;
        link.target = "_blank";
        link.rel = "noopener noreferrer";
      }
      return link;
    }

    /** A document link activated: a plain link does what links do; with a key, the document
     * is fetched with it and opened. */
    activate(event, link) {
      // On a touch screen the first tap on a chip shows its passage (there is no hover); a
      // second tap, or the card's Open, opens the document.
      const kind = event.pointerType === undefined ? this.pointer : event.pointerType;
      if (link.classList.contains("chip") && (kind === "touch" || kind === "pen") && this.pinned !== link) {
        event.preventDefault();
        this.showTip(link, true);
        return;
      }
      // A plain click or Enter reads the passage in the widget; Ctrl/Cmd/Shift-click, a middle
      // click and the reader's Download get the file itself, as links do.
      const plain = event.type !== "auxclick" && !event.ctrlKey && !event.metaKey && !event.shiftKey && !event.altKey;
      if (plain && !link.classList.contains("download") && link.srwBlock && link.srwBlock.doc_id) {
        event.preventDefault();
        this.openReader(link);
        return;
      }
      if (!this.dataset.key) {
        if (link.hasAttribute("href")) return;
        // Shown while the widget had a key it no longer has (the page's key field).
        event.preventDefault();
        window.open(link.dataset.url, "_blank", "noopener");
        return;
      }
      event.preventDefault();
      this.openWithKey(link);
    }

    /** Fetch a document with the key and show it in a new tab if it is text or PDF, else save
     * it. Never HTML from a blob: a blob URL is the host page's origin, so uploaded HTML
     * shown from one would run as the host page (the server's own download is sandboxed). */
    async openWithKey(link) {
      const block = link.srwBlock || {};
      const source = link.dataset.url;
      // The server serves a file by its extension: a tab is opened only for a kind it shows
      // (one opened for a DOCX flashed blank and shut). No file name (an older server): open.
      const ext = /\.(\w+)$/.exec(block.filename || "");
      const showable = !ext || /^(pdf|txt|text|md|markdown)$/i.test(ext[1]);
      // The tab is opened now, within the click: opened after the fetch it would be a popup
      // that browsers block.
      const tab = showable ? window.open("", "_blank") : null;
      // A PDF citation's URL ends in #page=N: the document is fetched and kept once, and the
      // blob's URL gets the fragment back, so the viewer opens at the cited page.
      const hash = source.indexOf("#");
      const fragment = hash < 0 ? "" : source.slice(hash);
      const address = hash < 0 ? source : source.slice(0, hash);
      const kept = BLOBS.get(address);
      if (tab) {
        try {
          tab.opener = null;
          tab.document.title = `${block.name} · version ${block.version}`;
          tab.document.body.textContent = `Opening ${block.name}, version ${block.version}…`;
        } catch (_) { /* not ours to write to: it still shows the document */ }
        if (kept) {
          BLOBS.delete(address);
          BLOBS.set(address, kept);
          tab.location.replace(kept.url + fragment);
          return;
        }
      }
      // A failed download says why in its turn (deleted since, a restarted server that no
      // longer knows the key cited it, the network), instead of a click doing nothing.
      const failed = (why) => {
        if (tab) tab.close();
        if (link.srwTurn) link.srwTurn.say(`Could not open “${block.name}”, version ${block.version}: ${why}`);
      };
      let response;
      let bytes;
      try {
        response = await fetch(address, { headers: this.headers(), credentials: "omit" });
        if (!response.ok) { failed(await this.problem(response)); return; }
        bytes = await response.blob();
      } catch (_) {
        failed("could not reach the server.");
        return;
      }
      const type = response.headers.get("Content-Type") || "";
      const mime = type.split(";")[0].trim().toLowerCase();
      const charset = /;\s*charset=([\w.:-]+)/i.exec(type);
      let shown = null;
      if (mime === "application/pdf") shown = mime;
      else if (mime === "text/plain" || mime === "text/markdown") shown = `text/plain;charset=${charset ? charset[1] : "utf-8"}`;
      if (shown && tab && !tab.closed) {
        tab.location.replace(keep(address, new Blob([bytes], { type: shown })) + fragment);
        return;
      }
      if (tab) tab.close();
      const save = document.createElement("a");
      save.href = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
      save.download = block.filename || block.name || "document";
      save.click();
      setTimeout(() => URL.revokeObjectURL(save.href), 10000);
    }
  }

  // Shown documents' blob URLs, oldest first. A tab showing one reloads it as long as it lives
  // (revoked after a minute, a reload found nothing), and the same version opens again
  // without a download (a version's bytes never change). The newest few are kept.
  const BLOBS = new Map();
  function keep(source, blob) {
    const url = URL.createObjectURL(blob);
    BLOBS.set(source, { url, size: blob.size });
    let total = 0;
    for (const entry of BLOBS.values()) total += entry.size;
    for (const [key, entry] of BLOBS) {
      if (BLOBS.size <= 1 || (BLOBS.size <= 8 && total <= 64 << 20)) break;
      URL.revokeObjectURL(entry.url);
      BLOBS.delete(key);
      total -= entry.size;
    }
    return url;
  }

  customElements.define("stream-rag-chat", StreamRagChat);

  // A bare script tag embeds one widget right after itself, unless the page placed its own.
  function mount() {
    if (!SCRIPT || document.querySelector("stream-rag-chat")) return;
    const widget = document.createElement("stream-rag-chat");
    // Every data-* attribute of the tag is the widget's (data-mode, data-text-refusal, ...).
    for (const [name, value] of Object.entries(SCRIPT.dataset)) widget.dataset[name] = value;
    if (!widget.dataset.api) widget.dataset.api = SCRIPT_BASE;
    // A bubble sits in the corner, wherever its tag is: at the end of the body, after the
    // page's own content in the focus order.
    if (widget.dataset.mode === "bubble") document.body.append(widget);
    else SCRIPT.after(widget);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
