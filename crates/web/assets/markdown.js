// markdown.js — THE one place model text becomes markup.
//
// Guarantees (the page's safety rules; browser tests attack them):
// - markdown-it runs with `html: false`, so raw HTML in the text is shown
//   as text, never parsed;
// - a link is kept only when it is http(s), mailto, an anchor or a relative
//   path; anything else (javascript:, data:, vbscript:, file:...) loses its
//   href;
// - images are never fetched: `![alt](src)` renders as a link to src;
// - the HTML markdown-it produced is sanitised AGAIN by DOMPurify with a
//   short allow-list of tags and attributes and an http/https/mailto URI
//   rule, and comes back as a DOM fragment (no innerHTML assignment here);
// - every link opens in a new tab with rel="noopener noreferrer";
// - no inline style attribute survives (table alignment becomes a class),
//   so the strict CSP never reports a violation.

import markdownit from './vendor/markdown-it/markdown-it.esm.min.mjs';
import DOMPurify from './vendor/dompurify/purify.es.mjs';
import { highlightHtml, languageOf } from './code.js';
import { h, icon } from './dom.js';

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const ALLOWED_SCHEMES = new Set(['http', 'https', 'mailto']);

/** True for http(s)/mailto URLs, anchors and scheme-less relative paths. */
export function isSafeUrl(url) {
  // Browsers ignore these characters inside a scheme ("java\tscript:").
  const s = String(url).replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  const m = SCHEME.exec(s);
  return m ? ALLOWED_SCHEMES.has(m[1].toLowerCase()) : true;
}

// What DOMPurify accepts in href: an allowed scheme, or no scheme at all.
const ALLOWED_URI_REGEXP = /^(?:(?:https?|mailto):|[^a-z]|[a-z0-9+.-]*(?:[^a-z0-9+.\-:]|$))/i;

const md = markdownit({
  html: false,
  linkify: true,
  typographer: false,
  breaks: false,
  highlight(code, info) {
    const lang = languageOf(info);
    const inner = highlightHtml(code, lang) ?? md.utils.escapeHtml(code);
    const cls = lang ? `hljs language-${md.utils.escapeHtml(lang)}` : 'hljs';
    return `<pre><code class="${cls}">${inner}</code></pre>`;
  },
});

md.validateLink = isSafeUrl;

// An image becomes a link to it (nothing is fetched); an unsafe or empty
// source leaves only the alt text.
md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx];
  const src = token.attrGet('src') || '';
  const alt = md.utils.escapeHtml(token.content || src || 'image');
  if (!src || !isSafeUrl(src)) return `<span class="image-alt">${alt}</span>`;
  return `<a class="image-link" href="${md.utils.escapeHtml(src)}">${alt}</a>`;
};

// Table cells carry `style="text-align:..."`; turn it into a class so no
// inline style reaches the page.
md.core.ruler.push('align_class', (state) => {
  for (const token of state.tokens) {
    if (token.type !== 'th_open' && token.type !== 'td_open') continue;
    const style = token.attrGet('style');
    if (!style) continue;
    const m = /text-align:\s*(left|center|right)/.exec(style);
    token.attrs = (token.attrs || []).filter(([name]) => name !== 'style');
    if (m) token.attrJoin('class', `align-${m[1]}`);
  }
});

const PURIFY = {
  ALLOWED_TAGS: [
    'a', 'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 's', 'del',
    'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tr', 'th',
    'td', 'span',
  ],
  ALLOWED_ATTR: ['href', 'title', 'class', 'start'],
  ALLOWED_URI_REGEXP,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.nodeName === 'A') {
    const href = node.getAttribute('href');
    if (href != null && !isSafeUrl(href)) node.removeAttribute('href');
    node.setAttribute('rel', 'noopener noreferrer');
    node.setAttribute('target', '_blank');
  }
});

/** Renders markdown `text` into a sanitised DocumentFragment. */
export function renderMarkdown(text) {
  let html;
  try {
    html = md.render(String(text));
  } catch {
    const frag = document.createDocumentFragment();
    frag.append(h('p', { text: String(text) }));
    return frag;
  }
  const frag = DOMPurify.sanitize(html, PURIFY);
  decorate(frag);
  return frag;
}

// Gives each code block a header (language + copy button) and lets wide
// tables scroll on their own instead of widening the page.
function decorate(frag) {
  for (const pre of frag.querySelectorAll('pre')) {
    const code = pre.querySelector('code');
    const m = code && /(?:^|\s)language-([\w+#.-]+)/.exec(code.className);
    const head = h('div', { class: 'code-head' },
      h('span', { class: 'code-lang', text: m ? m[1] : 'text' }),
      h('button', { type: 'button', class: 'copy', 'aria-label': 'Copy code' }, icon('copy'), h('span', { text: 'Copy' })));
    const block = h('div', { class: 'code-block' });
    pre.replaceWith(block);
    block.append(head, pre);
  }
  for (const table of frag.querySelectorAll('table')) {
    const wrap = h('div', { class: 'table-wrap' });
    table.replaceWith(wrap);
    wrap.append(table);
  }
}
