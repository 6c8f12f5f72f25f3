// attachments.ts — what goes with the next prompt besides its text: an
// editor selection ("Add selection to chat"), a workspace file (an `@`
// mention) or an image pasted or dropped into the prompt box, held by the
// host as chips of the composer, and turned into ACP content blocks on
// send. Pure: no vscode, no I/O.
//
// Guarantees: a selection goes as an embedded `resource` (its text, and a
// `file://` URI with the line range as `#L<start>-<end>`, 1-based), which
// axon attaches as quoted text under that name; a file goes as a
// `resource_link` to its `file://` URI, which axon reads itself through its
// workspace jail (the saved file, at most 256 KiB) — a file outside axon's
// folder is only named to the model, never read. A file is attached once
// however often it is mentioned; a selection is refused above
// MAX_SELECTION_CHARS with a message saying what to do instead. The list
// of workspace files a mention offers is filtered here, bounded
// (MAX_MATCHES), best matches first. An image goes as an ACP `image` block
// (base64 data and its MIME type), as images.ts allows it, and all of one
// prompt's at most MAX_PROMPT_IMAGES_CHARS of base64 (under axon's longest
// ACP line); anything else is refused with a message saying why.

import { pathToFileURL } from "node:url";
import type * as acp from "@agentclientprotocol/sdk";
import type { AttachmentChip, WorkspaceFile } from "./messages";
import { imageRefusal, megabytes, MAX_PROMPT_IMAGES_CHARS } from "./images";

/** The largest selection attached as text (axon's own cap for an attached file: 256 KiB). */
export const MAX_SELECTION_CHARS = 256 * 1024;
/** The most files a mention's list shows. */
export const MAX_MATCHES = 30;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** An image pasted or dropped into a panel: its file name, MIME type and base64 data. */
export type Image = { name: string; mimeType: string; data: string };

export type Selection = { path: string; label: string; startLine: number; endLine: number; text: string };

export type Attachment =
  | ({ kind: "selection"; id: string } & Selection)
  | { kind: "file"; id: string; path: string; label: string }
  | ({ kind: "image"; id: string } & Image);

/** `a.ts:3-5`, or `a.ts:3` for one line. */
export function selectionLabel(label: string, startLine: number, endLine: number): string {
  return startLine === endLine ? `${label}:${startLine}` : `${label}:${startLine}-${endLine}`;
}

/** The composer's attachments until the next prompt takes them. */
export class PendingAttachments {
  private items: Attachment[] = [];
  private next = 1;

  /** Adds a selection; an error message (nothing added) when it is empty or too large. */
  addSelection(selection: Selection): string | null {
    if (!selection.text) return "The selection is empty: select some text first.";
    if (selection.text.length > MAX_SELECTION_CHARS) {
      return `The selection is too large to attach (${selection.text.length} characters, at most ${MAX_SELECTION_CHARS}): select less, or mention the file with @ so axon reads it.`;
    }
    this.items.push({ kind: "selection", id: `a${this.next++}`, ...selection });
    return null;
  }

  /** Adds a file unless it is attached already. */
  addFile(path: string, label: string): void {
    if (this.items.some((a) => a.kind === "file" && a.path === path)) return;
    this.items.push({ kind: "file", id: `a${this.next++}`, path, label });
  }

  /** Adds an image; an error message (nothing added) when it is not one axon takes or too large. */
  addImage(image: Image): string | null {
    if (!BASE64.test(image.data) || image.data.length % 4 !== 0) return `Cannot attach ${image.name}: its data is not base64.`;
    const refusal = imageRefusal(image.name, image.mimeType, (image.data.length / 4) * 3);
    if (refusal) return refusal;
    const used = this.items.reduce((n, a) => n + (a.kind === "image" ? a.data.length : 0), 0);
    if (used + image.data.length > MAX_PROMPT_IMAGES_CHARS) {
      return `Cannot attach ${image.name}: one prompt carries at most ${megabytes((MAX_PROMPT_IMAGES_CHARS / 4) * 3)} of images; send these first.`;
    }
    this.items.push({ kind: "image", id: `a${this.next++}`, ...image });
    return null;
  }

  remove(id: string): boolean {
    const before = this.items.length;
    this.items = this.items.filter((a) => a.id !== id);
    return this.items.length !== before;
  }

  /** The attachments, now gone from the composer (a prompt takes them). */
  take(): Attachment[] {
    const taken = this.items;
    this.items = [];
    return taken;
  }

  get size(): number {
    return this.items.length;
  }

  chips(): AttachmentChip[] {
    return this.items.map((a) => {
      switch (a.kind) {
        case "selection":
          return { id: a.id, kind: a.kind, label: selectionLabel(a.label, a.startLine, a.endLine), title: `${a.path}, lines ${a.startLine}-${a.endLine}` };
        case "file":
          return { id: a.id, kind: a.kind, label: a.label, title: a.path };
        case "image":
          return { id: a.id, kind: a.kind, label: a.name, title: `${a.name} (${a.mimeType})`, image: { mimeType: a.mimeType, data: a.data } };
      }
    });
  }
}

/** The chip label of an attachment, as the sent message shows it. */
export function attachmentLabel(a: Attachment): string {
  return a.kind === "selection" ? selectionLabel(a.label, a.startLine, a.endLine) : a.kind === "image" ? a.name : a.label;
}

/** A prompt's content blocks: its text, then each attachment. */
export function promptBlocks(text: string, attachments: readonly Attachment[]): acp.ContentBlock[] {
  const blocks: acp.ContentBlock[] = [{ type: "text", text }];
  for (const a of attachments) {
    if (a.kind === "image") {
      blocks.push({ type: "image", mimeType: a.mimeType, data: a.data });
      continue;
    }
    const uri = pathToFileURL(a.path).href;
    if (a.kind === "selection") {
      blocks.push({ type: "resource", resource: { uri: `${uri}#L${a.startLine}-${a.endLine}`, mimeType: "text/plain", text: a.text } });
    } else {
      blocks.push({ type: "resource_link", name: a.label, uri });
    }
  }
  return blocks;
}

/**
 * The files a mention `@query` offers, best first: case-insensitively, a
 * file whose name starts with the query, then whose name contains it, then
 * whose path contains it; ties by shorter path, then alphabetically. An
 * empty query offers the first files by path.
 */
export function matchFiles(files: readonly WorkspaceFile[], query: string, limit = MAX_MATCHES): WorkspaceFile[] {
  const q = query.toLowerCase();
  const rank = (f: WorkspaceFile): number => {
    const label = f.label.toLowerCase();
    const name = label.slice(label.lastIndexOf("/") + 1);
    if (name.startsWith(q)) return 0;
    if (name.includes(q)) return 1;
    if (label.includes(q)) return 2;
    return -1;
  };
  return files
    .map((f) => ({ f, r: rank(f) }))
    .filter((x) => x.r >= 0)
    .sort((a, b) => a.r - b.r || a.f.label.length - b.f.label.length || a.f.label.localeCompare(b.f.label))
    .slice(0, limit)
    .map((x) => x.f);
}

/**
 * One glob of the folders and files a mention never offers: `.git` and
 * `node_modules`, and every pattern switched on in the given settings
 * (files.exclude, search.exclude); a pattern with its own `{`/`,` is left
 * out, since VS Code's globs do not nest braces.
 */
export function excludeGlob(...settings: (Record<string, unknown> | undefined)[]): string {
  const patterns = new Set(["**/.git", "**/node_modules"]);
  for (const setting of settings) {
    for (const [glob, on] of Object.entries(setting ?? {})) if (on === true && !/[{},]/.test(glob)) patterns.add(glob);
  }
  return `{${[...patterns].join(",")}}`;
}
