// vscode.ts — a minimal stand-in for the `vscode` module, for unit tests of
// src/vscodeFiles.ts (build.mjs aliases `vscode` to this file in test
// bundles only). It records what the code asks of the editor: documents
// opened, edits applied, saves, and workspace.fs reads and writes (which go
// to the real disk).

import * as fs from "node:fs";
import * as path from "node:path";

export class Uri {
  private constructor(readonly scheme: string, readonly fsPath: string) {}
  static file(p: string): Uri {
    return new Uri("file", path.normalize(p));
  }
}
export class Position {
  constructor(readonly line: number, readonly character: number) {}
}
export class Range {
  constructor(readonly start: Position, readonly end: Position) {}
}
export class WorkspaceEdit {
  readonly replaced: { uri: Uri; text: string }[] = [];
  replace(uri: Uri, _range: Range, text: string): void {
    this.replaced.push({ uri, text });
  }
}

/** An open editor buffer. */
export class FakeDocument {
  isClosed = false;
  isDirty = false;
  saves = 0;
  constructor(readonly uri: Uri, public text: string) {}
  getText(): string {
    return this.text;
  }
  positionAt(offset: number): Position {
    return new Position(0, offset);
  }
  async save(): Promise<boolean> {
    this.saves++;
    this.isDirty = false;
    fs.writeFileSync(this.uri.fsPath, this.text);
    return true;
  }
}

export const calls = { openTextDocument: 0, applyEdit: 0, fsRead: 0, fsWrite: 0 };

export const workspace = {
  workspaceFolders: undefined as { uri: Uri }[] | undefined,
  textDocuments: [] as FakeDocument[],
  async openTextDocument(): Promise<never> {
    calls.openTextDocument++;
    throw new Error("the code under test must not open documents");
  },
  async applyEdit(edit: WorkspaceEdit): Promise<boolean> {
    calls.applyEdit++;
    for (const { uri, text } of edit.replaced) {
      const doc = workspace.textDocuments.find((d) => d.uri.fsPath === uri.fsPath);
      if (!doc) return false;
      doc.text = text;
      doc.isDirty = true;
    }
    return true;
  },
  fs: {
    async readFile(uri: Uri): Promise<Uint8Array> {
      calls.fsRead++;
      return fs.promises.readFile(uri.fsPath);
    },
    async writeFile(uri: Uri, bytes: Uint8Array): Promise<void> {
      calls.fsWrite++;
      await fs.promises.mkdir(path.dirname(uri.fsPath), { recursive: true });
      await fs.promises.writeFile(uri.fsPath, bytes);
    },
  },
};
