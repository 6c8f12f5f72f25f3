// extension.test.ts — the extension host's bundle (dist/extension.js) loaded
// in plain Node with a small stand-in for the `vscode` module (test code
// only: the real API exists only inside VS Code). It checks what VS Code
// would be given: the view provider and commands registered on activation,
// and the webview's options and HTML (the CSP with a nonce, nothing
// remote, resources only from dist/webview); that malformed webview
// messages are dropped and `ready` replays the transcript to the panel that
// asked; what environment axon is given (no VS Code internals); and the
// manifest's workspace-trust declaration. The "axon" here is a script that
// records its environment and exits, so the chat's transcript holds the
// start-up error.

import { test } from "node:test";
import assert from "node:assert/strict";
import Module, { createRequire } from "node:module";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { waitFor } from "./support/recorder";

type Disposable = { dispose(): void };
const registered = { views: new Map<string, { resolveWebviewView(view: unknown): void }>(), commands: new Map<string, () => unknown>(), schemes: [] as string[] };
const disposable: Disposable = { dispose() {} };
const settings: Record<string, unknown> = {};
/** The workspace's memento (ExtensionContext.workspaceState). */
const workspaceState = {
  values: new Map<string, unknown>(),
  get(key: string): unknown {
    return this.values.get(key);
  },
  async update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
  },
};

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
    showWarningMessage: (message: string) => void told.push(message),
    showInformationMessage: (message: string) => void told.push(message),
    activeTextEditor: undefined as unknown,
  },
  commands: {
    registerCommand: (id: string, run: () => unknown) => {
      registered.commands.set(id, run);
      return disposable;
    },
    executeCommand: async (id: string) => void executed.push(id),
  },
  workspace: {
    getConfiguration: () => ({ get: (key: string, fallback: unknown) => settings[key] ?? fallback }),
    registerTextDocumentContentProvider: (scheme: string) => {
      registered.schemes.push(scheme);
      return disposable;
    },
    workspaceFolders: undefined as { uri: { scheme: string; fsPath: string } }[] | undefined,
    textDocuments: [],
    asRelativePath: (uri: { fsPath: string }) => path.basename(uri.fsPath),
    findFiles: async (include: string, exclude: string, maxResults: number) => {
      found.push({ include, exclude, maxResults });
      return listed;
    },
  },
};
/** What workspace.findFiles was asked, and what it answers. */
const found: { include: string; exclude: string; maxResults: number }[] = [];
let listed: { scheme: string; fsPath: string }[] = [];
/** What the user was told (notifications) and the commands the extension ran. */
const told: string[] = [];
const executed: string[] = [];

const load = (Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown })._load;
(Module as unknown as { _load: typeof load })._load = (request, ...rest) => (request === "vscode" ? vscode : load(request, ...rest));
const extension = createRequire(import.meta.url)(path.resolve("dist/extension.js")) as {
  activate(context: unknown): void;
  deactivate(): Promise<void>;
};

test("activation registers the chat view and the commands; the view gets a locked-down page", async () => {
  const subscriptions: Disposable[] = [];
  const extensionUri = { fsPath: "/ext" };
  extension.activate({ subscriptions, extensionUri, extensionPath: "/ext", workspaceState });
  assert.deepEqual([...registered.views.keys()], ["axon.chat"]);
  assert.deepEqual([...registered.commands.keys()].sort(), ["axon.addSelection", "axon.newChat", "axon.openInTab", "axon.stop"]);
  assert.deepEqual(registered.schemes, ["axon-proposed"], "the proposed changes' documents (Open diff)");

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


type Posted = { type: string; event?: { type: string; message?: string } };

/** A webview as the extension sees it, keeping the message handler it registers and what it is sent. */
function fakeWebview() {
  const view = {
    handler: null as ((raw: unknown) => void) | null,
    posted: [] as Posted[],
    webview: {
      options: {},
      html: "",
      cspSource: "https://file+.vscode-resource.vscode-cdn.net",
      asWebviewUri: (uri: { fsPath: string }) => `https://file+.vscode-resource.vscode-cdn.net${uri.fsPath}`,
      onDidReceiveMessage: (handler: (raw: unknown) => void) => {
        view.handler = handler;
        return disposable;
      },
      postMessage: async (m: Posted) => {
        view.posted.push(m);
        return true;
      },
    },
  };
  return view;
}

test("webview messages: malformed ones are dropped, ready replays the transcript; axon gets no VS Code internals in its environment", { skip: process.platform === "win32" }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-ext-"));
  const envFile = path.join(dir, "env");
  const script = path.join(dir, "axon");
  fs.writeFileSync(script, `#!/bin/sh\nenv > "${envFile}.tmp" && mv "${envFile}.tmp" "${envFile}"\necho "no model configured" >&2\nexit 3\n`, { mode: 0o755 });
  settings.path = script;
  const saved = { ...process.env };
  Object.assign(process.env, { ELECTRON_RUN_AS_NODE: "1", VSCODE_PID: "4242", VSCODE_IPC_HOOK_CLI: "/tmp/vscode-ipc.sock", AXON_TEST_KEPT: "yes" });
  try {
    extension.activate({ subscriptions: [], extensionUri: { fsPath: "/ext" }, extensionPath: "/ext", workspaceState });
    const first = fakeWebview();
    registered.views.get("axon.chat")!.resolveWebviewView({ webview: first.webview, onDidDispose: () => disposable });
    assert.ok(first.handler, "the page's messages are listened to");

    for (const raw of [null, 42, "ready", {}, { type: "bogus" }, { type: "user_message", content: 5 }, { type: "set_mode" }, { type: "permission_response", requestId: 1, optionId: "x" }, { type: "permission_response", requestId: "p", optionId: 3 }]) {
      first.handler!(raw);
    }
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(first.posted.length, 0, `nothing answered a malformed message: ${JSON.stringify(first.posted)}`);
    assert.equal(fs.existsSync(envFile), false, "and axon was not started by one");

    first.handler!({ type: "ready" });
    const error = await waitFor("the start-up error", () => first.posted.find((m) => m.event?.type === "error"));
    assert.ok(error.event?.message?.includes("no model configured"), JSON.stringify(error));
    assert.equal(first.posted.filter((m) => m.event?.type === "error").length, 1, JSON.stringify(first.posted));

    const env = fs.readFileSync(envFile, "utf8").split("\n");
    assert.ok(env.includes("AXON_TEST_KEPT=yes"), "the rest of the environment is passed on");
    assert.deepEqual(env.filter((l) => l.startsWith("VSCODE_") || l.startsWith("ELECTRON_RUN_AS_NODE=")), []);

    // A second panel that loads is replayed the transcript (the error), and only it.
    const firstCount = first.posted.length;
    const second = fakeWebview();
    registered.views.get("axon.chat")!.resolveWebviewView({ webview: second.webview, onDidDispose: () => disposable });
    second.handler!({ type: "ready" });
    assert.deepEqual(second.posted[0], error, "replayed at once");
    assert.equal(first.posted.slice(0, firstCount).length, firstCount);
    assert.ok(!first.posted.slice(firstCount).some((m) => m === error), "the replay went only to the panel that asked");
    await waitFor("the second start-up error", () => (second.posted.filter((m) => m.event?.type === "error").length >= 2 ? true : undefined));
  } finally {
    await extension.deactivate();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    delete settings.path;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the manifest declares that the extension does not run in untrusted workspaces", () => {
  const manifest = JSON.parse(fs.readFileSync("package.json", "utf8"));
  const untrusted = manifest.capabilities?.untrustedWorkspaces;
  assert.equal(untrusted?.supported, false);
  assert.ok(typeof untrusted?.description === "string" && untrusted.description.length > 20, JSON.stringify(untrusted));
});

test("Add Selection to Chat: the selection's file, lines and text become a chip in the panel, and the chat view is shown", { skip: process.platform === "win32" }, async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-sel-")));
  const script = path.join(dir, "axon");
  fs.writeFileSync(script, "#!/bin/sh\nexit 3\n", { mode: 0o755 });
  const file = path.join(dir, "a.ts");
  fs.writeFileSync(file, "one\ntwo\nthree\n");
  settings.path = script;
  vscode.workspace.workspaceFolders = [{ uri: { scheme: "file", fsPath: dir } }];
  const position = (line: number, character: number) => ({ line, character });
  const editor = (start: { line: number; character: number }, end: { line: number; character: number }) => ({
    document: { uri: { scheme: "file", fsPath: file }, getText: () => "two\n" },
    selection: { start, end, isEmpty: start.line === end.line && start.character === end.character },
  });
  try {
    extension.activate({ subscriptions: [], extensionUri: { fsPath: "/ext" }, extensionPath: "/ext", workspaceState });
    const view = fakeWebview();
    registered.views.get("axon.chat")!.resolveWebviewView({ webview: view.webview, onDidDispose: () => disposable });
    view.handler!({ type: "ready" });
    await waitFor("the (failed) start-up", () => view.posted.find((m) => m.event?.type === "error"));

    told.length = 0;
    vscode.window.activeTextEditor = undefined;
    await registered.commands.get("axon.addSelection")!();
    assert.match(told.join(), /open a file and select some text/);
    told.length = 0;

    // Line 2 selected whole (ending at the start of line 3): lines 2-2.
    vscode.window.activeTextEditor = editor(position(1, 0), position(2, 0));
    await registered.commands.get("axon.addSelection")!();
    // Nothing selected: the whole file is attached.
    vscode.window.activeTextEditor = editor(position(0, 1), position(0, 1));
    await registered.commands.get("axon.addSelection")!();
    const chips = view.posted.filter((m) => m.type === "attachments").at(-1) as unknown as { items: { kind: string; label: string; title: string }[] };
    assert.deepEqual(
      chips.items.map((c) => [c.kind, c.label]),
      [
        ["selection", "a.ts:2"],
        ["file", "a.ts"],
      ],
    );
    assert.deepEqual(executed.filter((c) => c === "axon.chat.focus").length, 2, "the chat view is shown after each");
    assert.deepEqual(told, [], "nothing to warn about");
  } finally {
    await extension.deactivate();
    vscode.window.activeTextEditor = undefined;
    vscode.workspace.workspaceFolders = undefined;
    delete settings.path;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("an @ mention's files come from workspace.findFiles, bounded, with the settings' excludes; the answer goes to the asking panel", { skip: process.platform === "win32" }, async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-find-")));
  const script = path.join(dir, "axon");
  fs.writeFileSync(script, "#!/bin/sh\nexit 3\n", { mode: 0o755 });
  settings.path = script;
  settings["files.exclude"] = { "**/.svn": true, "**/shown": false };
  settings["search.exclude"] = { "**/target": true };
  listed = [
    { scheme: "file", fsPath: path.join(dir, "main.ts") },
    { scheme: "vscode-remote", fsPath: "/elsewhere/main.ts" },
    { scheme: "file", fsPath: path.join(dir, "notes.md") },
  ];
  try {
    extension.activate({ subscriptions: [], extensionUri: { fsPath: "/ext" }, extensionPath: "/ext", workspaceState });
    const asking = fakeWebview();
    const other = fakeWebview();
    for (const view of [asking, other]) {
      registered.views.get("axon.chat")!.resolveWebviewView({ webview: view.webview, onDidDispose: () => disposable });
      view.handler!({ type: "ready" });
    }
    asking.handler!({ type: "find_files", query: "ma" });
    const answer = (await waitFor("the mention's files", () => asking.posted.find((m) => m.type === "file_matches"))) as unknown as { query: string; files: { path: string; label: string }[] };
    assert.deepEqual(answer, { type: "file_matches", query: "ma", files: [{ path: path.join(dir, "main.ts"), label: "main.ts" }] });
    assert.deepEqual(found.at(-1), { include: "**/*", exclude: "{**/.git,**/node_modules,**/.svn,**/target}", maxResults: 5000 });
    assert.ok(!other.posted.some((m) => m.type === "file_matches"), "only the asking panel is answered");
  } finally {
    await extension.deactivate();
    delete settings.path;
    delete settings["files.exclude"];
    delete settings["search.exclude"];
    listed = [];
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
