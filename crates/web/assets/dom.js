// dom.js — the one way this page builds elements, plus small formatters.
//
// Guarantees: text always enters the DOM as text nodes / textContent; no
// string is ever parsed as HTML here. No inline `style` attribute and no
// `on*` attribute is ever set (the page's CSP forbids both; handlers are
// attached with addEventListener). Only markdown.js turns text into markup,
// through its sanitizer.

/**
 * Creates an element. `props`: `class`, `text`, `dataset` {..}, `on`
 * {event: handler}, any other key becomes an attribute (true → present,
 * false/null → absent). Children: nodes, strings (as text), arrays, null.
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (value == null || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'text') el.textContent = value;
      else if (key === 'dataset') Object.assign(el.dataset, value);
      else if (key === 'on') {
        for (const [type, fn] of Object.entries(value)) el.addEventListener(type, fn);
      } else if (key === 'style' || key.toLowerCase().startsWith('on')) {
        throw new Error(`h(): the attribute ${key} is not allowed`);
      } else el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  appendChildren(el, children);
  return el;
}

function appendChildren(el, children) {
  for (const child of children) {
    if (child == null || child === false) continue;
    if (Array.isArray(child)) appendChildren(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** A decorative icon drawn by CSS (a mask over currentColor). */
export function icon(name) {
  return h('span', { class: `icon i-${name}`, 'aria-hidden': 'true' });
}

export const byId = (id) => document.getElementById(id);

/** The last component of a path (either separator). */
export function basename(path) {
  const parts = String(path || '').split(/[\\/]+/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path || '');
}

/** 950 → "950", 12345 → "12.3k", 200000 → "200k", 1047576 → "1.05M". */
export function formatTokens(n) {
  const v = Number(n) || 0;
  if (v < 1000) return String(v);
  if (v < 1e6) return `${trim(v / 1000, v < 1e4 ? 1 : 0)}k`;
  return `${trim(v / 1e6, v < 1e7 ? 2 : 1)}M`;
}

function trim(x, digits) {
  return x.toFixed(digits).replace(/\.0+$/, '').replace(/(\.\d*?)0+$/, '$1');
}

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", a date. */
export function relativeTime(ms, now = Date.now()) {
  const t = Number(ms);
  if (!Number.isFinite(t) || t <= 0) return '';
  const s = Math.max(0, (now - t) / 1000);
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  if (s < 2 * 86400) return 'yesterday';
  if (s < 7 * 86400) return `${Math.floor(s / 86400)} days ago`;
  const d = new Date(t);
  const sameYear = d.getFullYear() === new Date(now).getFullYear();
  return d.toLocaleDateString(undefined, sameYear
    ? { month: 'short', day: 'numeric' }
    : { year: 'numeric', month: 'short', day: 'numeric' });
}

/** Pretty JSON for display; never throws. */
export function prettyJson(value) {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Number of text lines (1 for the empty string). */
export function lineCount(text) {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * Wraps `content` so it shows at most about `lines` lines, with a
 * "Show all" button (handled by a delegated click on `.more`) when the text
 * is longer. Returns the wrapper.
 */
export function clamp(content, text, lines, extraClass = '') {
  const long = lineCount(text) > lines || text.length > lines * 160;
  const wrap = h('div', { class: `clamp ${extraClass}`.trim(), dataset: { lines: String(lines) } }, content);
  wrap.classList.add(`clamp-${lines}`);
  if (long) {
    wrap.classList.add('clamped');
    wrap.append(h('button', { type: 'button', class: 'more', 'aria-expanded': 'false', text: 'Show all' }));
  }
  return wrap;
}
