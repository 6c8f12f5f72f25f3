// markdown.ts — THE one place model text becomes markup in the panel. The
// rules are axon web's (crates/web/assets/markdown.js), with the same
// libraries, bundled from npm instead of vendored.
//
// Guarantees (test/sanitize.test.ts attacks them with hostile answers):
// - markdown-it runs with `html: false`: raw HTML in the text is shown as
//   text, never parsed;
// - a link keeps its href only when it is http(s), mailto, an anchor or a
//   scheme-less relative path (javascript:, data:, vbscript:, file:... lose
//   it);
// - images are never loaded: `![alt](src)` becomes a link to src;
// - markdown-it's HTML is sanitised AGAIN by DOMPurify with a short
//   allow-list of tags and attributes (no style, no on*, no src) and comes
//   back as a DocumentFragment; nothing here assigns innerHTML;
// - highlight.js escapes the code it marks up, and its spans go through
//   the same sanitiser.

import MarkdownIt from "markdown-it";

type Md = ReturnType<typeof MarkdownIt>;
import createDOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";
import diff from "highlight.js/lib/languages/diff";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGUAGES = { bash, sh: bash, shell: bash, javascript, js: javascript, json, python, py: python, rust, rs: rust, typescript, ts: typescript, diff, xml, html: xml, yaml, yml: yaml };
for (const [name, grammar] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, grammar);

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const ALLOWED_SCHEMES = new Set(["http", "https", "mailto"]);

/** True for http(s)/mailto URLs, anchors and scheme-less relative paths. */
export function isSafeUrl(url: string): boolean {
  // Browsers ignore these characters inside a scheme ("java\tscript:").
  const s = String(url).replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  const m = SCHEME.exec(s);
  return m ? ALLOWED_SCHEMES.has(m[1].toLowerCase()) : true;
}

// What DOMPurify accepts in href: an allowed scheme, or no scheme at all.
const ALLOWED_URI_REGEXP = /^(?:(?:https?|mailto):|[^a-z]|[a-z0-9+.-]*(?:[^a-z0-9+.\-:]|$))/i;

const ALLOWED_TAGS = [
  "a", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "s", "del",
  "code", "pre", "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "span",
];

function languageOf(info: string): string | null {
  const word = String(info || "").trim().split(/[\s{]/)[0].toLowerCase();
  return word && hljs.getLanguage(word) ? word : null;
}

function markdownIt(): Md {
  const md: Md = MarkdownIt({
    html: false,
    linkify: true,
    typographer: false,
    highlight(code, info) {
      const lang = languageOf(info);
      let inner = md.utils.escapeHtml(code);
      if (lang) {
        try {
          inner = hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
        } catch {
          // Plain, escaped text.
        }
      }
      const cls = lang ? `hljs language-${md.utils.escapeHtml(lang)}` : "hljs";
      return `<pre><code class="${cls}">${inner}</code></pre>`;
    },
  });
  md.validateLink = isSafeUrl;
  // An image becomes a link to it (nothing is fetched); an unsafe or empty
  // source leaves only the alt text.
  md.renderer.rules.image = (tokens, idx) => {
    const token = tokens[idx];
    const src = String(token.attrGet("src") ?? "");
    const alt = md.utils.escapeHtml(token.content || src || "image");
    if (!src || !isSafeUrl(src)) return `<span class="image-alt">${alt}</span>`;
    return `<a class="image-link" href="${md.utils.escapeHtml(src)}">${alt}</a>`;
  };
  // Table alignment arrives as an inline style; it becomes a class so no
  // style attribute reaches the page (the CSP forbids inline style).
  md.core.ruler.push("align_class", (state) => {
    for (const token of state.tokens) {
      if (token.type !== "th_open" && token.type !== "td_open") continue;
      const style = String(token.attrGet("style") ?? "");
      if (!style) continue;
      const m = /text-align:\s*(left|center|right)/.exec(style);
      token.attrs = (token.attrs || []).filter(([name]) => name !== "style");
      if (m) token.attrJoin("class", `align-${m[1]}`);
    }
    return true;
  });
  return md;
}

/** A renderer bound to `window` (the webview's, or jsdom's in tests). */
export function createMarkdownRenderer(window: Window): (text: string) => DocumentFragment {
  const md = markdownIt();
  const purify = createDOMPurify(window as unknown as Parameters<typeof createDOMPurify>[0]);
  purify.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName === "A") {
      const href = (node as Element).getAttribute("href");
      if (href !== null && !isSafeUrl(href)) (node as Element).removeAttribute("href");
      (node as Element).setAttribute("rel", "noopener noreferrer");
    }
  });
  return (text: string) => {
    let html: string;
    try {
      html = md.render(String(text));
    } catch {
      const fragment = window.document.createDocumentFragment();
      const p = window.document.createElement("p");
      p.textContent = String(text);
      fragment.append(p);
      return fragment;
    }
    return purify.sanitize(html, {
      ALLOWED_TAGS,
      ALLOWED_ATTR: ["href", "title", "class", "start"],
      ALLOWED_URI_REGEXP,
      ALLOW_DATA_ATTR: false,
      ALLOW_ARIA_ATTR: false,
      RETURN_DOM_FRAGMENT: true,
    }) as unknown as DocumentFragment;
  };
}
