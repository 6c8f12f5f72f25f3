// extension.test.ts — the extension host's bundle (dist/extension.js) loaded
// in plain Node with a small stand-in for the `vscode` module (test code
// only: the real API exists only inside VS Code). It checks what VS Code
// would be given: the view provider and commands registered on activation,
// and the webview's options and HTML (the CSP with a nonce, nothing
// remote, resources only from dist/webview). axon is not started: no panel
// says `ready`.

import { test } from "node:test";
import assert from "node:assert/strict";
import Module, { createRequire } from "node:module";
import * as path from "node:path";

type Disposable = { dispose(): void };
const registered = { views: new Map<string, { resolveWebviewView(view: unknown): void }>(), commands: new Map<string, () => unknown>() };
const disposable: Disposable = { dispose() {} };

/** The parts of the vscode API the extension touches on activation and when a view opens. */
const vscode = {
  Uri: {
    joinPath: (base: { fsPath: string }, ...parts: string[]) => ({ fsPath: path.join(base.fsPath, ...parts), toString: () => `file://${path.join(base.fsPath, ...parts)}` }),
    file: (p: string) => ({ fsPath: p }),
  },
  ViewColumn: { Beside: -2 },
  window: {
    createOutputChannel: () => ({ append() {}, appendLine() {}, dispose() {} }),
    registerWebviewViewProvider: (id: string, provider: { resolveWebviewView(view: unknown): void }) => {
      registered.views.set(id, provider);
      return disposable;
    },
    showWarningMessage: () => undefined,
  },
  commands: {
    registerCommand: (id: string, run: () => unknown) => {
      registered.commands.set(id, run);
      return disposable;
    },
  },
  workspace: { getConfiguration: () => ({ get: (_key: string, fallback: unknown) => fallback }), workspaceFolders: undefined },
};

const load = (Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown })._load;
(Module as unknown as { _load: typeof load })._load = (request, ...rest) => (request === "vscode" ? vscode : load(request, ...rest));
const extension = createRequire(import.meta.url)(path.resolve("dist/extension.js")) as {
  activate(context: unknown): void;
  deactivate(): Promise<void>;
};

test("activation registers the chat view and the commands; the view gets a locked-down page", async () => {
  const subscriptions: Disposable[] = [];
  const extensionUri = { fsPath: "/ext" };
  extension.activate({ subscriptions, extensionUri });
  assert.deepEqual([...registered.views.keys()], ["axon.chat"]);
  assert.deepEqual([...registered.commands.keys()].sort(), ["axon.newChat", "axon.openInTab", "axon.stop"]);

  const webview = {
    options: {} as { enableScripts?: boolean; localResourceRoots?: { fsPath: string }[] },
    html: "",
    cspSource: "https://file+.vscode-resource.vscode-cdn.net",
    asWebviewUri: (uri: { fsPath: string }) => `https://file+.vscode-resource.vscode-cdn.net${uri.fsPath}`,
    onDidReceiveMessage: () => disposable,
    postMessage: async () => true,
  };
  registered.views.get("axon.chat")!.resolveWebviewView({ webview, onDidDispose: () => disposable });
  assert.equal(webview.options.enableScripts, true);
  assert.deepEqual(webview.options.localResourceRoots?.map((u) => u.fsPath), ["/ext/dist/webview"]);

  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(webview.html)?.[1];
  assert.ok(csp, webview.html);
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
  assert.ok(nonce && nonce.length >= 16, csp);
  assert.ok(csp.includes("default-src 'none'") && !csp.includes("unsafe-inline") && !csp.includes("unsafe-eval"), csp);
  const scripts = [...webview.html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
  assert.deepEqual(scripts, [` nonce="${nonce}" src="https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview/panel.js"`]);
  assert.ok(!/https?:\/\/(?!file\+\.vscode-resource)/.test(webview.html), "nothing remote in the page");

  // A second view gets a new nonce.
  const second = { ...webview, options: {}, html: "" };
  registered.views.get("axon.chat")!.resolveWebviewView({ webview: second, onDidDispose: () => disposable });
  assert.notEqual(/'nonce-([^']+)'/.exec(second.html)?.[1], nonce);

  await extension.deactivate();
});
