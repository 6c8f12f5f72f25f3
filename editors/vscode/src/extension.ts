// extension.ts — activation: one ChatSession (one `axon acp`) per window,
// the chat view, and the commands.
//
// Guarantees: axon is not started until a panel opens (or a command needs
// it); the window's last chat is resumed (its id in workspaceState); it
// runs in the first workspace folder (the user's home when no
// folder is open); the binary is the setting `axon.path`, else `axon` from
// PATH, else the one bundled in a platform-specific .vsix (axonBinary.ts); axon's environment is the extension host's minus
// ELECTRON_RUN_AS_NODE and VSCODE_* (VS Code's internals, as its own
// terminal drops them); axon's stderr goes to the "axon" output channel;
// `deactivate` stops the process (a pending start-up included) and waits
// for it. "Add selection to chat" (editor context menu, command palette)
// attaches the selection to the next prompt; `@` mentions list the
// workspace's files with files.exclude and search.exclude applied.

import { shouldNotify } from "./attention";
import * as os from "node:os";
import * as vscode from "vscode";
import { ChatPanelProvider } from "./chatPanel";
import { ChatSession } from "./chatSession";
import { DiffView } from "./diffView";
import { openLocation } from "./openLocation";
import { excludeGlob } from "./attachments";
import { resolveAxon } from "./axonBinary";
import type { WorkspaceFile } from "./messages";
import { VscodeFiles } from "./vscodeFiles";

let chat: ChatSession | null = null;
/** The workspace's last chat, resumed when the window opens again. */
const LAST_SESSION = "axon.lastSessionId";

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("axon");
  const diffs = new DiffView();
  context.subscriptions.push(output, diffs.register());

  const session = (): ChatSession => {
    chat ??= new ChatSession({
      agent: agentCommand(context.extensionPath, output),
      files: new VscodeFiles(workspaceFolder()),
      post: (message) => provider.postMessage(message),
      openDiff: (change) => diffs.show(change),
      openLocation,
      listFiles: workspaceFiles,
      onAgentDied: (message) => void vscode.window.showWarningMessage(message),
      onAttention: (message) => {
        const enabled = vscode.workspace.getConfiguration("axon").get<boolean>("notifications", true);
        if (!shouldNotify(enabled, vscode.window.state.focused, provider.visible)) return;
        void vscode.window.showInformationMessage(message, "Show").then((choice) => {
          if (choice === "Show") void vscode.commands.executeCommand(`${ChatPanelProvider.viewType}.focus`);
        });
      },
      onStderr: (text) => output.append(text),
      resumeSessionId: context.workspaceState.get<string>(LAST_SESSION),
      onStarted: (pid, sessionId) => {
        output.appendLine(`[axon-vscode] axon acp running (pid ${pid}), session ${sessionId}`);
        void context.workspaceState.update(LAST_SESSION, sessionId);
      },
    });
    return chat;
  };
  const provider = new ChatPanelProvider(context.extensionUri, session);

  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider(ChatPanelProvider.viewType, provider, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    vscode.commands.registerCommand("axon.openInTab", () => provider.openInTab()),
    vscode.commands.registerCommand("axon.newChat", () => void session().handle({ type: "clear_chat" })),
    vscode.commands.registerCommand("axon.stop", () => void session().handle({ type: "cancel" })),
    vscode.commands.registerCommand("axon.addSelection", () => addSelection(session())),
  );
}

export async function deactivate(): Promise<void> {
  const closing = chat;
  chat = null;
  await closing?.dispose();
}

/**
 * "Add selection to chat": the active editor's selection (its file, 1-based
 * line range and text) becomes a chip for the next prompt; with nothing
 * selected, the whole file is attached as a mention. Then the chat view
 * is shown.
 */
async function addSelection(chat: ChatSession): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage("axon: open a file and select some text to add it to the chat.");
    return;
  }
  const document = editor.document;
  if (document.uri.scheme !== "file") {
    void vscode.window.showWarningMessage(`axon: only a saved file's text can be added to the chat (this is ${document.uri.scheme}:); save it first.`);
    return;
  }
  const selection = editor.selection;
  let error: string | null;
  if (selection.isEmpty) {
    error = await chat.attachFile(document.uri.fsPath);
  } else {
    const startLine = selection.start.line + 1;
    // A selection that ends at the start of a line does not take that line.
    const endLine = selection.end.character === 0 && selection.end.line > selection.start.line ? selection.end.line : selection.end.line + 1;
    error = chat.addSelection({ path: document.uri.fsPath, label: vscode.workspace.asRelativePath(document.uri, false), startLine, endLine, text: document.getText(selection) });
  }
  if (error) {
    void vscode.window.showWarningMessage(`axon: ${error}`);
    return;
  }
  await vscode.commands.executeCommand(`${ChatPanelProvider.viewType}.focus`);
}

/** The most files an `@` mention looks through. */
const MAX_LISTED_FILES = 5000;

/** The workspace's files for `@` mentions: files.exclude and search.exclude applied, at most MAX_LISTED_FILES. */
async function workspaceFiles(): Promise<WorkspaceFile[]> {
  const config = vscode.workspace.getConfiguration();
  const exclude = excludeGlob(config.get<Record<string, unknown>>("files.exclude"), config.get<Record<string, unknown>>("search.exclude"));
  const uris = await vscode.workspace.findFiles("**/*", exclude, MAX_LISTED_FILES);
  return uris.filter((u) => u.scheme === "file").map((u) => ({ path: u.fsPath, label: vscode.workspace.asRelativePath(u, false) }));
}

/** `axon acp` as the settings say, in the window's folder: the binary from axon.path, else PATH, else the bundled one. */
function agentCommand(extensionPath: string, output: vscode.OutputChannel) {
  const config = vscode.workspace.getConfiguration("axon");
  const extraArgs = config.get<string[]>("args", []);
  const env = agentEnvironment(process.env);
  const binary = resolveAxon({ configured: config.get<string>("path", "").trim(), pathEnv: env.PATH, extensionPath, platform: process.platform });
  output.appendLine(`[axon-vscode] axon: ${binary.command} (${binary.source === "none" ? "not found" : `from ${binary.source}`})`);
  return { command: binary.command, args: ["acp", ...extraArgs], cwd: workspaceFolder(), env, hint: binary.hint };
}

/** The first workspace folder, else the user's home. */
function workspaceFolder(): string {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
}

/** The extension host's environment without what belongs to VS Code itself. */
function agentEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => key !== "ELECTRON_RUN_AS_NODE" && !key.startsWith("VSCODE_")));
}
