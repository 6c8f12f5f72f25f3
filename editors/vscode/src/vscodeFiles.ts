// vscodeFiles.ts — FileAccess through VS Code: the agent sees what the user
// sees and its writes are ordinary, undoable edits.
//
// Guarantees: a read returns the open document's text, unsaved changes
// included (openTextDocument gives the open buffer when there is one); a
// write of an existing file replaces its whole text with one WorkspaceEdit,
// so it is a single step in the editor's undo history, and then saves it so
// the disk agrees with what the agent was told; a new file is created
// through the same WorkspaceEdit. A refused edit is an error, never silent.

import * as vscode from "vscode";
import type { FileAccess } from "./fileAccess";

export class VscodeFiles implements FileAccess {
  async read(path: string): Promise<string> {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
    return document.getText();
  }

  async write(path: string, content: string): Promise<void> {
    const uri = vscode.Uri.file(path);
    const edit = new vscode.WorkspaceEdit();
    let exists = true;
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      exists = false;
    }
    if (exists) {
      const document = await vscode.workspace.openTextDocument(uri);
      const whole = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
      edit.replace(uri, whole, content);
    } else {
      edit.createFile(uri, { ignoreIfExists: true });
      edit.insert(uri, new vscode.Position(0, 0), content);
    }
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error("VS Code refused the edit");
    const document = await vscode.workspace.openTextDocument(uri);
    if (document.isDirty && !(await document.save())) throw new Error("VS Code could not save the file");
  }
}
