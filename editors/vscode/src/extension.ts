// extension.ts — activation: one ChatSession (one `axon acp`) per window,
// the chat view, and the commands.
//
// Guarantees: axon is not started until a panel opens (or a command needs
// it); the window's last chat is resumed (its id in workspaceState); it
// runs in the first workspace folder (the user's home when no
// folder is open); the binary is the setting `axon.path`, else `axon` from
// PATH; axon's environment is the extension host's minus
// ELECTRON_RUN_AS_NODE and VSCODE_* (VS Code's internals, as its own
// terminal drops them); axon's stderr goes to the "axon" output channel;
// `deactivate` stops the process (a pending start-up included) and waits
// for it.

import * as os from "node:os";
import * as vscode from "vscode";
import { ChatPanelProvider } from "./chatPanel";
import { ChatSession } from "./chatSession";
import { DiffView } from "./diffView";
import { openLocation } from "./openLocation";
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
      agent: agentCommand(),
      files: new VscodeFiles(workspaceFolder()),
      post: (message) => provider.postMessage(message),
      openDiff: (change) => diffs.show(change),
      openLocation,
      onAgentDied: (message) => void vscode.window.showWarningMessage(message),
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
  );
}

export async function deactivate(): Promise<void> {
  const closing = chat;
  chat = null;
  await closing?.dispose();
}

/** `axon acp` as the settings say, in the window's folder. */
function agentCommand() {
  const config = vscode.workspace.getConfiguration("axon");
  const configured = config.get<string>("path", "").trim();
  const extraArgs = config.get<string[]>("args", []);
  return { command: configured || "axon", args: ["acp", ...extraArgs], cwd: workspaceFolder(), env: agentEnvironment(process.env) };
}

/** The first workspace folder, else the user's home. */
function workspaceFolder(): string {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
}

/** The extension host's environment without what belongs to VS Code itself. */
function agentEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => key !== "ELECTRON_RUN_AS_NODE" && !key.startsWith("VSCODE_")));
}
