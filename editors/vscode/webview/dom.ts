// dom.ts — building elements without markup strings.
//
// Guarantees: text goes in through textContent only; attributes are set one
// by one (never an on* handler: listeners are attached with
// addEventListener by the caller).

export type Child = Node | string | null | undefined | false;

/** `<tag attrs>children</tag>`; strings become text nodes. */
export function h(tag: string, attrs: Record<string, string | boolean | undefined> = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (name === "text") element.textContent = String(value);
    else element.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}
