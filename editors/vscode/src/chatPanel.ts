// chatPanel.ts — the chat's webviews: the view in the activity bar
// (ChatPanelProvider.resolveWebviewView, seed 002) and the same panel in an
// editor tab. Every webview shows the one ChatSession of the window.
//
// Guarantees: the page's Content-Security-Policy allows only the
// extension's own script (by nonce) and stylesheet, no inline script or
// style, no remote load of any kind (default-src 'none'; images only from
// the extension or data:); `localResourceRoots` is only dist/webview (the
// bundled panel); messages from a webview are parsed before use and
// anything malformed is dropped.

import * as crypto from "node:crypto";
import * as vscode from "vscode";
import type { ChatSession } from "./chatSession";
import { parseWebviewMessage, type HostMessage } from "./messages";

export class ChatPanelProvider implements vscode.WebviewViewProvider {
  static readonly viewType = "axon.chat";
  private readonly webviews = new Set<vscode.Webview>();
  /** The views and tabs showing the chat (for `visible`). */
  private readonly owners = new Set<{ readonly visible: boolean }>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly session: () => ChatSession,
  ) {}

  resolveWebviewView(webviewView: vscode.WebviewView): void {
    this.attach(webviewView.webview, webviewView);
  }

  /** The panel in an editor tab (command axon.openInTab). */
  openInTab(): void {
    const panel = vscode.window.createWebviewPanel(ChatPanelProvider.viewType, "axon", vscode.ViewColumn.Beside, {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [this.assets()],
    });
    this.attach(panel.webview, panel);
  }

  /** Whether some view or tab of the chat is on screen. */
  get visible(): boolean {
    return [...this.owners].some((owner) => owner.visible);
  }

  /** Sends `message` to every open panel. */
  postMessage(message: HostMessage): void {
    for (const webview of this.webviews) void webview.postMessage(message);
  }

  private assets(): vscode.Uri {
    return vscode.Uri.joinPath(this.extensionUri, "dist", "webview");
  }

  private attach(webview: vscode.Webview, owner: { onDidDispose: vscode.Event<void>; readonly visible: boolean }): void {
    this.owners.add(owner);
    webview.options = { enableScripts: true, localResourceRoots: [this.assets()] };
    webview.html = this.html(webview);
    const received = webview.onDidReceiveMessage((raw: unknown) => {
      const message = parseWebviewMessage(raw);
      if (!message) return;
      // Answers (a replay, a mention's files) go only to the panel that asked.
      void this.session().handle(message, (m) => void webview.postMessage(m));
      // After `ready` the panel joins the live stream (its replay came first).
      if (message.type === "ready") this.webviews.add(webview);
    });
    owner.onDidDispose(() => {
      this.owners.delete(owner);
      this.webviews.delete(webview);
      received.dispose();
    });
  }

  private html(webview: vscode.Webview): string {
    const nonce = crypto.randomBytes(18).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.assets(), "panel.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.assets(), "panel.css"));
    const csp = [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
      "connect-src 'none'",
      "frame-src 'none'",
      "form-action 'none'",
      "base-uri 'none'",
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>axon</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }
}
