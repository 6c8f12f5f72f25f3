// diffView.ts — "Open diff": a tool call's proposed change in VS Code's own
// diff editor, before or after it is allowed.
//
// Guarantees: the left side is the file itself as the editor has it (its
// unsaved buffer included), or an empty document for a file axon would
// create; the right side is a read-only virtual document (scheme
// `axon-proposed`) holding exactly the text axon proposed, so nothing is
// written by looking; a proposed text stays available while its diff tab
// may be open (the newest 50 are kept).

import * as path from "node:path";
import * as vscode from "vscode";
import type { ProposedChange } from "./messages";

const SCHEME = "axon-proposed";
const KEPT = 50;

export class DiffView implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private next = 0;

  /** Registers the virtual documents' provider; dispose with the extension. */
  register(): vscode.Disposable {
    return vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? "";
  }

  async show(change: ProposedChange): Promise<void> {
    const name = path.basename(change.path);
    const proposed = this.virtual(change.newText, name);
    const current = change.oldText === null ? this.virtual("", name) : vscode.Uri.file(change.path);
    const title = change.oldText === null ? `${name} (new file proposed by axon)` : `${name} ↔ axon's proposed change`;
    await vscode.commands.executeCommand("vscode.diff", current, proposed, title, { preview: true });
  }

  private virtual(text: string, name: string): vscode.Uri {
    const id = String(this.next++);
    this.texts.set(id, text);
    // Oldest first in a Map: drop beyond KEPT.
    for (const key of this.texts.keys()) {
      if (this.texts.size <= KEPT) break;
      this.texts.delete(key);
    }
    return vscode.Uri.from({ scheme: SCHEME, path: `/${name}`, query: id });
  }
}
