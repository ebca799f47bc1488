// DOM helpers shared by every view: element building, focus, live region, toast, CSS variables.

/** Creates an element: el('button', {class: 'x', onclick}, 'text', child). */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
      else if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else if (k === 'style' && typeof v === 'object') Object.assign(node.style, v);
      else if (k in node && typeof v !== 'string') node[k] = v;
      else node.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** True when keyboard focus is in a text field (shortcuts must not fire). */
export function typingTarget(e) {
  const t = e.target;
  if (!t || !t.tagName) return false;
  return t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable;
}

/** Announces text to screen readers through the page's live region. */
export function announce(text) {
  const live = document.getElementById('live');
  if (live) live.textContent = text;
}

let toastTimer = null;
/** Shows a short message in the page's toast for four seconds. */
export function toast(text, kind = 'info') {
  const box = document.getElementById('toast');
  if (!box) return;
  box.textContent = text;
  box.dataset.kind = kind;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 4000);
}

/** Reads a CSS custom property from the document root. */
export function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}
