// Installed in the page by the browser tests: records every sentence the widget adds, every
// change inside a shown sentence (text, attributes, children) and every removal.
(() => {
  const widget = document.querySelector('stream-rag-chat');
  const root = widget.shadowRoot;
  const log = { added: [], changed: [], batches: [], done: [] };
  const inSentence = (node) => {
    const el = node.nodeType === 1 ? node : node.parentElement;
    return !!(el && el.closest('.s'));
  };
  const observer = new MutationObserver((records) => {
    const now = performance.now();
    for (const r of records) {
      if (r.type === 'childList') {
        for (const n of r.addedNodes) {
          if (n.nodeType === 1 && n.matches('.s')) log.added.push({ index: Number(n.dataset.index), text: n.textContent, t: now });
          if (n.nodeType === 1 && n.matches('.actions, .refusal, .error')) log.done.push(now);
        }
        for (const n of r.removedNodes) {
          if (n.nodeType === 1 && (n.matches('.s') || n.querySelector('.s'))) log.changed.push('removed ' + n.textContent);
        }
        if (inSentence(r.target)) log.changed.push('children of ' + r.target.textContent);
      } else if (inSentence(r.target)) {
        log.changed.push(r.type + ' ' + (r.attributeName || '') + ' in ' + r.target.textContent);
      }
    }
    log.batches.push(root.querySelectorAll('.s').length);
  });
  observer.observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
  window.__srwLog = log;
})
