// sanitize.test.ts — the panel's Markdown renderer (webview/markdown.ts)
// given hostile answers in a jsdom window: nothing executable or remote
// survives (no script, no event handler, no javascript:/data: URL, no
// element that loads anything), while ordinary Markdown still renders.

import { test } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { createMarkdownRenderer, isSafeUrl } from "../webview/markdown";
import { HOSTILE } from "./support/hostile";

const dom = new JSDOM("<!DOCTYPE html><div id=out></div>");
const render = createMarkdownRenderer(dom.window as unknown as Window);

/** Renders `text` into a fresh element and returns it. */
function rendered(text: string): Element {
  const out = dom.window.document.createElement("div");
  out.append(render(text));
  return out;
}

/** Everything in `root` that could run code or load something. */
function dangers(root: Element): string[] {
  const found: string[] = [];
  for (const el of root.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    if (["script", "img", "iframe", "object", "embed", "svg", "math", "style", "link", "meta", "form", "input", "video", "audio", "source", "base"].includes(tag)) found.push(`<${tag}>`);
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase();
      if (name.startsWith("on")) found.push(`${tag}[${name}]`);
      if (["src", "srcset", "style", "action", "formaction", "xlink:href", "background", "poster"].includes(name)) found.push(`${tag}[${name}]`);
      if (name === "href" && !/^(https?:|mailto:|#|[^:]*$)/i.test(attr.value.trim())) found.push(`${tag}[href=${attr.value}]`);
    }
  }
  return found;
}


test("the danger check itself catches unsanitised markup", () => {
  const raw = dom.window.document.createElement("div");
  raw.innerHTML = '<img src=x onerror="1"><a href="javascript:1">a</a><p style="x">p</p><script>1</script>';
  assert.deepEqual(dangers(raw).sort(), ["<img>", "<script>", "a[href=javascript:1]", "img[onerror]", "img[src]", "p[style]"]);
});

test("a hostile answer renders with nothing executable or remote in it", () => {
  const all = rendered(HOSTILE.join("\n\n"));
  assert.deepEqual(dangers(all), []);
  for (const text of HOSTILE) assert.deepEqual(dangers(rendered(text)), [], text);
});

test("raw HTML is shown as text, not parsed", () => {
  const out = rendered("<script>window.__pwned=2</script>");
  assert.equal(out.querySelector("script"), null);
  assert.ok(out.textContent!.includes("<script>window.__pwned=2</script>"), out.innerHTML);
});

test("images become links to their source; unsafe sources leave only the alt text", () => {
  const out = rendered("![tracker](https://evil.example/pixel.png) ![bad](javascript:alert(1))");
  assert.equal(out.querySelector("img"), null);
  const link = out.querySelector("a.image-link");
  assert.equal(link?.getAttribute("href"), "https://evil.example/pixel.png");
  assert.equal(link?.getAttribute("rel"), "noopener noreferrer");
  assert.ok(out.textContent!.includes("bad"));
});

test("ordinary Markdown still renders: emphasis, lists, links, tables, highlighted code", () => {
  const out = rendered("# T\n\n**bold** _it_ [ok](https://example.com)\n\n- a\n- b\n\n| x | y |\n|:-:|--:|\n| 1 | 2 |\n\n```rust\nfn main() {}\n```");
  assert.ok(out.querySelector("h1") && out.querySelector("strong") && out.querySelector("em"));
  assert.equal(out.querySelectorAll("li").length, 2);
  assert.equal(out.querySelector("a")?.getAttribute("href"), "https://example.com");
  assert.ok(out.querySelector("th.align-center") && out.querySelector("td.align-right"), out.innerHTML);
  const code = out.querySelector("pre code.language-rust");
  assert.ok(code && code.querySelector("span.hljs-keyword"), out.innerHTML);
});

test("isSafeUrl keeps http(s), mailto, anchors and relative paths only", () => {
  for (const ok of ["https://a.example", "http://a", "mailto:x@y", "#top", "docs/a.md", "./a"]) assert.equal(isSafeUrl(ok), true, ok);
  for (const bad of ["javascript:alert(1)", "JaVaScRiPt:x", "java\tscript:x", " javascript:x", "data:text/html,x", "vbscript:x", "file:///etc/passwd"]) assert.equal(isSafeUrl(bad), false, bad);
});
