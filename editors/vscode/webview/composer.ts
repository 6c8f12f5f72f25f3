// composer.ts — the prompt box's attachments: the chips of what goes with
// the next prompt (held by the host, shown as it says), the `@` mention
// list of workspace files, and images pasted or dropped into the prompt box.
//
// Guarantees: chips and file names are text (textContent), never markup;
// the chips shown are exactly the host's last `attachments` message; typing
// `@` (at the start or after a space) asks the host for the workspace's
// files matching what follows it, and only the answer for the mention being
// typed now is shown; choosing a file (click, Enter or Tab) writes
// `@path ` in its place and asks the host to attach it; Escape, or the
// caret leaving the mention, closes the list. A pasted or dropped file is
// checked before it is read (images.ts: PNG, JPEG, GIF or WebP, not too
// large) and refused with `refuse`'s message otherwise, never silently;
// an image is read as base64 and sent to the host (`attach_image`), whose
// chip shows its thumbnail (a `data:` URL, the only images the page's CSP
// allows besides its own).

import { imageRefusal } from "../src/images";
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

  private chipCount = 0;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly send: (message: WebviewMessage) => void,
    private readonly refuse: (message: string) => void = () => {},
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
        const thumbnail = item.image ? imageElement(item.image.mimeType, item.image.data, item.label, "chip-image") : null;
        return h("span", { class: `chip ${item.kind}`, title: item.title, "data-attachment": item.id }, thumbnail, h("span", { class: "chip-label", text: item.label }), remove);
      }),
    );
    this.chipCount = items.length;
    this.chips.hidden = items.length === 0;
  }

  /** Whether something is attached to the next prompt (a prompt of attachments alone may go). */
  get attached(): boolean {
    return this.chipCount > 0;
  }

  /** Takes images pasted into the prompt box and dropped on `zone`. */
  acceptImages(zone: HTMLElement): void {
    this.input.addEventListener("paste", (e) => {
      const files = [...(e.clipboardData?.files ?? [])];
      // Text that comes with a picture of itself (a spreadsheet's cells, a
      // document's lines) is a text paste: only a paste of files alone (a
      // screenshot, a copied image) attaches.
      if (!files.length || e.clipboardData?.types.includes("text/plain")) return;
      e.preventDefault();
      void this.addFiles(files);
    });
    const carriesFiles = (e: DragEvent) => [...(e.dataTransfer?.types ?? [])].includes("Files");
    zone.addEventListener("dragover", (e) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
      zone.classList.add("dropping");
    });
    zone.addEventListener("dragleave", (e) => {
      if (!zone.contains(e.relatedTarget as Node | null)) zone.classList.remove("dropping");
    });
    zone.addEventListener("drop", (e) => {
      zone.classList.remove("dropping");
      if (!carriesFiles(e)) return;
      e.preventDefault();
      void this.addFiles([...(e.dataTransfer?.files ?? [])]);
      this.input.focus();
    });
  }

  /** Checks each file, reads the images and sends them to the host, in order. */
  async addFiles(files: File[]): Promise<void> {
    for (const file of files) {
      const name = file.name || "pasted image";
      const refusal = imageRefusal(name, file.type, file.size);
      if (refusal) {
        this.refuse(refusal);
        continue;
      }
      const data = await readBase64(file).catch(() => null);
      if (data === null) {
        this.refuse(`Cannot attach ${name}: the file could not be read.`);
        continue;
      }
      this.send({ type: "attach_image", name, mimeType: file.type, data });
    }
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

/** A file's bytes as base64 (a `data:` URL's payload). */
function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.addEventListener("load", () => {
      const url = String(reader.result);
      const at = url.indexOf(";base64,");
      if (at < 0) reject(new Error("no data"));
      else resolve(url.slice(at + ";base64,".length));
    });
    reader.addEventListener("error", () => reject(reader.error ?? new Error("unreadable")));
    reader.readAsDataURL(file);
  });
}

const IMAGE_TYPE = /^image\/(png|jpeg|gif|webp)$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** An `<img>` of base64 `data`, or null when it is not an image type the panel shows or not base64. */
export function imageElement(mimeType: string, data: string, alt: string, cls: string): HTMLElement | null {
  if (!IMAGE_TYPE.test(mimeType) || !BASE64.test(data)) return null;
  return h("img", { class: cls, alt, src: `data:${mimeType};base64,${data}` });
}
