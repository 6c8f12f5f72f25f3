// openLocation.ts — a tool call's location opened in VS Code: a file in an
// editor with the cursor at the line axon named, a folder revealed in the
// Explorer.
//
// Guarantees: the path arrives checked and resolved by chatSession.ts
// (inside a workspace folder); `line` is 1-based (ACP's, as axon sends it)
// and is clamped to the document, so a stale line still opens the file; the
// file is opened as a preview editor in the first editor group, so a panel
// open in an editor tab is not replaced by it.

import * as vscode from "vscode";

export async function openLocation(file: string, line: number | undefined): Promise<void> {
  const uri = vscode.Uri.file(file);
  const stat = await vscode.workspace.fs.stat(uri);
  if (stat.type & vscode.FileType.Directory) {
    await vscode.commands.executeCommand("revealInExplorer", uri);
    return;
  }
  const document = await vscode.workspace.openTextDocument(uri);
  const at = Math.min(Math.max((line ?? 1) - 1, 0), Math.max(document.lineCount - 1, 0));
  const position = new vscode.Position(at, 0);
  const editor = await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.One, preview: true, selection: new vscode.Range(position, position) });
  editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}
