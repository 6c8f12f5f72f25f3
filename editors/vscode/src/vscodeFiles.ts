// vscodeFiles.ts — FileAccess through VS Code: the agent sees what the user
// sees, and its writes to open files are ordinary, undoable edits.
//
// Guarantees: paths arrive checked by fileAccess.ts (absolute, resolved,
// inside `roots()`: the workspace folders, or axon's folder when none is
// open); a non-absolute one is refused here too. A read of a file open in
// the editor (in `workspace.textDocuments`) returns its buffer, unsaved
// changes included; any other file is read from disk (`workspace.fs`), so
// no document is opened and no language server sees it. A write of a file
// that is not open goes straight to disk (`workspace.fs.writeFile`, parent
// folders created; no format-on-save runs). A write of an open file
// replaces its whole text with one WorkspaceEdit — a single step in the
// editor's undo history — and then saves it so the disk agrees with what
// the agent was told; that save runs the user's save participants
// (format-on-save, code actions on save), as any save in the editor does.
// A refused edit or save is an error, never silent.

import * as path from "node:path";
import * as vscode from "vscode";
import type { FileAccess } from "./fileAccess";

export class VscodeFiles implements FileAccess {
  constructor(private readonly fallbackRoot: string) {}

  roots(): readonly string[] {
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
    return folders.length ? folders : [this.fallbackRoot];
  }

  async read(file: string): Promise<string> {
    const uri = this.uri(file);
    const open = this.openDocument(uri);
    if (open) return open.getText();
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  }

  async write(file: string, content: string): Promise<void> {
    const uri = this.uri(file);
    const open = this.openDocument(uri);
    if (!open) {
      await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(content));
      return;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, new vscode.Range(open.positionAt(0), open.positionAt(open.getText().length)), content);
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error("VS Code refused the edit");
    if (open.isDirty && !(await open.save())) throw new Error("VS Code could not save the file");
  }

  private uri(file: string): vscode.Uri {
    if (!path.isAbsolute(file)) throw new Error(`${file} is not an absolute path`);
    return vscode.Uri.file(file);
  }

  private openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((d) => !d.isClosed && d.uri.scheme === "file" && d.uri.fsPath === uri.fsPath);
  }
}
