/* stream_rag chat widget: verified, cited answers as they stream. No build step, no framework.
 *
 * Embed: <script src="https://HOST/static/widget.js" data-collection="support" defer></script>
 *    or: <stream-rag-chat data-collection="support"></stream-rag-chat> plus the script tag.
 * Attributes: data-collection, data-api (default: where this script came from, path prefix and all),
 * data-key (a chat-scoped API key, sent as a Bearer token), data-title, data-theme (light or
 * dark; default: the system's).
 * Theme it from the host page with CSS custom properties (--srw-accent, --srw-bg, ...).
 * Untrusted text (answers, names, passages, messages) is only ever set as textContent.
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
.a p.body { margin: 0; overflow-wrap: anywhere; }
.s.k-heading { display: block; font-weight: 600; margin-top: .3em; }
.s.k-list_item { display: list-item; margin-left: 1.2em; }
.s.k-code { display: block; white-space: pre-wrap; font-family: ui-monospace, Menlo, Consolas, monospace; }
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
      const title = this.dataset.title;
      if (title) frame.append(el("div", "head", title));
      this.log = el("div", "log");
      this.log.setAttribute("role", "log");
      this.log.setAttribute("aria-live", "polite");
      this.log.setAttribute("aria-label", "Answers");
      this.log.append(el("p", "empty", "Ask a question about the documents. Answers cite their sources."));
      const form = el("form");
      const label = el("label", "sr-only", "Your question");
      const input = el("textarea");
      input.id = "q";
      label.htmlFor = "q";
      input.rows = 2;
      input.placeholder = "Ask a question…  (Enter sends, Shift+Enter new line)";
      input.setAttribute("aria-label", "Your question");
      // No maxLength: it cut a pasted question silently; too long, it is kept and explained.
      input.setAttribute("aria-describedby", "hint");
      this.hint = el("p", "hint");
      this.hint.id = "hint";
      this.hint.setAttribute("aria-live", "polite");
      const send = el("button", "primary", "Ask");
      send.type = "submit";
      const stop = el("button", "stop", "Stop");
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
      frame.append(this.log, this.hint, form);
      root.append(frame, this.tip);
      this.input = input;
      this.form = form;
      this.sendButton = send;
      this.stopButton = stop;
      this.turns = [];
      this.current = null;

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
          if (!this.tip.hidden) this.dismissTip();
          else if (this.current) this.stop();
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
        ? `Your question is ${length.toLocaleString("en-US")} characters long; questions can be at most ${MAX_QUESTION_CHARS.toLocaleString("en-US")}. Shorten it to ask.`
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
        this.hint.textContent = BUSY;
        return;
      }
      this.input.value = "";
      const empty = this.log.querySelector(".empty");
      if (empty) empty.remove();
      this.run(question);
    }

    stop() {
      if (this.current) this.current.controller.abort();
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
      const body = { question };
      if (this.dataset.collection) body.collection = this.dataset.collection;
      const history = this.history();
      if (history.length) body.history = history;
      turn.say("Searching the documents…");
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
        if (response.status === 400 && body.history) {
          // A server that does not take `history` refused before answering: ask without it.
          delete body.history;
          response = await post(body);
        }
        if (!response.ok) {
          turn.fail(await errorMessage(response));
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
            if (event.id) lastId = event.id;
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
          turn.fail(turn.sentences.length ? "the connection ended before the rest came." : "The answer broke off before it was complete.");
        }
      } catch (error) {
        const lower = (text) => (turn.sentences.length ? text[0].toLowerCase() + text.slice(1) : text);
        if (turn.lost) turn.fail(lower("Nothing came from the server for a minute: the connection was lost."));
        else if (turn.controller.signal.aborted) turn.stopped();
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
        if (this.hint.textContent === BUSY || this.hint.textContent === BUSY_RETRY) this.hint.textContent = "";
        this.follow();
      }
    }

    newTurn(question) {
      const chat = this;
      const node = el("article", "turn");
      const q = el("p", "q", question);
      const a = el("div", "a");
      const body = el("p", "body");
      const status = el("p", "status");
      status.setAttribute("role", "status");
      a.append(body, status);
      node.append(q, a);
      this.log.append(node);
      this.stick = true;
      this.follow();

      const turn = {
        question, node, body, status, controller: new AbortController(),
        blocks: new Map(), sentences: [], dropped: [], cited: new Map(),
        finished: false, failed: false, refused: false,
        withheld: null, sourcesList: null, uncovered: "",
        say(text) { status.textContent = text; },
        /** Returns true when the stream is over. */
        handle(event) {
          let data;
          try { data = JSON.parse(event.data); } catch (_) { return false; }
          switch (event.name) {
            case "sources":
              for (const block of data.blocks || []) turn.blocks.set(block.n, block);
              turn.say("Writing a verified answer…");
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
              turn.fail(`${data.message || "The answer failed."} (${data.code || "error"})`);
              return true;
            default:
              return false;
          }
        },
        addSentence(data) {
          // Built whole, then inserted once: a shown sentence is never touched again.
          const span = el("span", `s k-${data.kind || "sentence"}`, data.text);
          span.dataset.index = data.index;
          for (const cite of data.citations || []) {
            const block = Object.assign({}, turn.blocks.get(cite.n) || {}, cite);
            const chip = chat.docLink("chip", String(cite.n), cite.url, block, turn);
            chip.dataset.n = cite.n;
            chip.setAttribute("aria-label",
              `Source ${cite.n}: ${block.name}, version ${block.version}. Opens the document.`);
            chip.srwSentence = data.text;
            span.append(chip);
            if (!turn.cited.has(cite.n)) { turn.cited.set(cite.n, block); turn.addSource(block); }
          }
          if (turn.body.childNodes.length) turn.body.append(document.createTextNode(" "));
          turn.body.append(span);
          turn.sentences.push(data);
        },
        addSource(block) {
          if (!turn.sourcesList) {
            const box = el("div", "sources");
            box.append(el("h3", null, "Sources"));
            turn.sourcesList = el("ol");
            box.append(turn.sourcesList);
            a.insertBefore(box, status);
          }
          const item = el("li");
          const link = chat.docLink(null, block.name, block.url, block, turn);
          item.append(el("span", "n", `[${block.n}] `), link, ` · v${block.version} · `,
            el("code", null, `sha256 ${String(block.sha256 || "").slice(0, 12)}`));
          item.title = `document ${block.doc_id}, version ${block.version}`;
          turn.sourcesList.append(item);
        },
        addDropped(data) {
          turn.dropped.push(data);
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
          if (turn.sentences.length) {
            // What the question asked that no source covers: the answer above leaves it out.
            const gaps = data && Array.isArray(data.uncovered) ? data.uncovered : [];
            if (gaps.length) {
              turn.uncovered = `The sources do not cover: ${gaps.map((g) => g.question).join(" ")}`;
              a.append(el("p", "uncovered", turn.uncovered));
            }
            const actions = el("div", "actions");
            const copy = el("button", null, "Copy answer");
            copy.type = "button";
            copy.addEventListener("click", () => turn.copy(copy));
            actions.append(copy);
            a.append(actions);
          }
        },
        async copy(button) {
          const lines = [turn.sentences.map((s) => s.text + s.citations.map((c) => `[${c.n}]`).join("")).join(" "), ""];
          // Copied without it, the answer's silence on that part reads as a "no".
          if (turn.uncovered) lines.push(turn.uncovered, "");
          lines.push("Sources:");
          for (const block of turn.cited.values()) {
            lines.push(`[${block.n}] ${block.name}, version ${block.version} (sha256 ${block.sha256}): ${chat.resolve(block.url)}`);
          }
          const text = lines.join("\n");
          try {
            await navigator.clipboard.writeText(text);
            button.textContent = "Copied";
          } catch (_) {
            // No async clipboard (a page served over plain http): the old way still works.
            const area = el("textarea", "sr-only");
            area.value = text;
            a.append(area);
            area.select();
            const copied = document.execCommand("copy");
            area.remove();
            button.focus();
            button.textContent = copied ? "Copied" : "Copy failed";
          }
        },
        stopped() {
          turn.finished = true;
          turn.partial = true;
          turn.say(turn.sentences.length ? "Stopped. The answer above is incomplete." : "Stopped.");
        },
        fail(message) {
          turn.failed = true;
          turn.say("");
          const box = el("div", "error");
          box.setAttribute("role", "alert");
          // Sentences shown before the failure are only part of the answer: say so, as Stop does.
          box.append(el("span", null, turn.sentences.length ? `The answer above is incomplete: ${message}` : message));
          const retry = el("button", null, "Retry");
          retry.type = "button";
          retry.addEventListener("click", () => {
            if (chat.current) {
              chat.hint.textContent = BUSY_RETRY;
              return;
            }
            retry.disabled = true;
            chat.run(question);
          });
          box.append(retry);
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
        if (!response.ok) { failed(await errorMessage(response)); return; }
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
    for (const name of ["collection", "api", "key", "title", "theme"]) {
      if (SCRIPT.dataset[name]) widget.dataset[name] = SCRIPT.dataset[name];
    }
    if (!widget.dataset.api) widget.dataset.api = SCRIPT_BASE;
    SCRIPT.after(widget);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
