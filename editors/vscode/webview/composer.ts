// composer.ts — the prompt box's attachments: the chips of what goes with
// the next prompt (held by the host, shown as it says), and the `@` mention
// list of workspace files.
//
// Guarantees: chips and file names are text (textContent), never markup;
// the chips shown are exactly the host's last `attachments` message; typing
// `@` (at the start or after a space) asks the host for the workspace's
// files matching what follows it, and only the answer for the mention being
// typed now is shown; choosing a file (click, Enter or Tab) writes
// `@path ` in its place and asks the host to attach it; Escape, or the
// caret leaving the mention, closes the list.

import type { AttachmentChip, WebviewMessage, WorkspaceFile } from "../src/messages";
import { h } from "./dom";

/** A mention being typed: where its `@` is, and what follows it. */
type Mention = { start: number; query: string };

export class Composer {
  readonly chips = h("div", { class: "attachments", hidden: true, "aria-label": "Attached to the next prompt" });
  readonly mentions = h("div", { class: "mentions", hidden: true, role: "listbox", "aria-label": "Workspace files" });
  private mention: Mention | null = null;
  private matches: WorkspaceFile[] = [];
  private active = 0;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly send: (message: WebviewMessage) => void,
  ) {
    input.addEventListener("input", () => this.onInput());
    input.addEventListener("click", () => this.onInput());
    input.addEventListener("blur", () => {
      // A click on the list lands after the blur: close only if focus left both.
      setTimeout(() => {
        if (!this.mentions.contains(document.activeElement) && document.activeElement !== input) this.close();
      }, 0);
    });
  }

  /** The host's chips. */
  showChips(items: AttachmentChip[]): void {
    this.chips.replaceChildren(
      ...items.map((item) => {
        const remove = h("button", { type: "button", class: "chip-remove", text: "×", title: `Remove ${item.label}`, "aria-label": `Remove ${item.label}` });
        remove.addEventListener("click", () => this.send({ type: "remove_attachment", id: item.id }));
        return h("span", { class: `chip ${item.kind}`, title: item.title, "data-attachment": item.id }, h("span", { class: "chip-label", text: item.label }), remove);
      }),
    );
    this.chips.hidden = items.length === 0;
  }

  /** The host's files for the mention `@query` (ignored if another mention is being typed now). */
  showMatches(query: string, files: WorkspaceFile[]): void {
    if (!this.mention || this.mention.query !== query) return;
    this.matches = files;
    this.active = 0;
    this.render();
  }

  /** Handles a key in the prompt box while the list is open; true when it was the list's. */
  onKeydown(e: KeyboardEvent): boolean {
    if (this.mentions.hidden || !this.mention) return false;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      if (this.matches.length) this.active = (this.active + (e.key === "ArrowDown" ? 1 : this.matches.length - 1)) % this.matches.length;
      this.render();
    } else if ((e.key === "Enter" || e.key === "Tab") && !e.shiftKey && this.matches.length) {
      this.choose(this.matches[this.active]);
    } else if (e.key === "Escape") {
      this.close();
    } else {
      return false;
    }
    e.preventDefault();
    return true;
  }

  private onInput(): void {
    const caret = this.input.selectionStart ?? this.input.value.length;
    const before = this.input.value.slice(0, caret);
    const found = /(?:^|\s)@([^\s@]*)$/.exec(before);
    if (!found) return this.close();
    const query = found[1];
    if (this.mention?.query === query) return;
    this.mention = { start: caret - query.length - 1, query };
    this.send({ type: "find_files", query });
  }

  private choose(file: WorkspaceFile): void {
    const mention = this.mention;
    if (!mention) return;
    const end = mention.start + 1 + mention.query.length;
    const text = `@${file.label} `;
    this.input.value = this.input.value.slice(0, mention.start) + text + this.input.value.slice(end);
    const caret = mention.start + text.length;
    this.input.setSelectionRange(caret, caret);
    this.input.focus();
    this.close();
    this.send({ type: "attach_file", path: file.path });
  }

  private close(): void {
    this.mention = null;
    this.matches = [];
    this.mentions.hidden = true;
    this.mentions.replaceChildren();
  }

  private render(): void {
    if (!this.matches.length) {
      this.mentions.replaceChildren(h("div", { class: "mentions-empty", text: `No workspace file matches “${this.mention?.query ?? ""}”` }));
    } else {
      this.mentions.replaceChildren(
        h("div", { class: "mentions-head", text: "Files: ↑↓ choose · Enter attach · Esc close" }),
        ...this.matches.map((file, i) => {
          const item = h("button", { type: "button", class: `mention${i === this.active ? " active" : ""}`, role: "option", "aria-selected": i === this.active ? "true" : "false", title: file.path, text: file.label });
          // mousedown, not click: the prompt box keeps its focus and caret.
          item.addEventListener("mousedown", (e) => {
            e.preventDefault();
            this.choose(file);
          });
          return item;
        }),
      );
      this.mentions.querySelector(".mention.active")?.scrollIntoView?.({ block: "nearest" });
    }
    this.mentions.hidden = false;
  }
}
