// chatSession.ts — one chat: the webview's messages in, axon's ACP session
// out, and the UI messages the panels show. Pure (no vscode): the extension
// and the end-to-end test drive this same class.
//
// Guarantees:
// - axon is started on first use (one process per ChatSession, i.e. per
//   window) and stopped by `dispose()`; if it dies otherwise, the user is
//   told (`notice` + `onAgentDied`) and a new process and session start —
//   at most MAX_RESTARTS times within RESTART_WINDOW_MS, so a binary that
//   crashes at once does not loop;
// - one prompt runs at a time; `cancel` settles open approvals as cancelled
//   and sends `session/cancel`, and what streamed so far stays shown;
// - every message posted since the last `clear_chat` is kept, so a panel
//   that (re)loads (`ready`) is replayed the same transcript;
// - nothing from the webview is trusted: messages are parsed
//   (messages.ts), approvals must name an offered option (permissions.ts).

import * as acp from "@agentclientprotocol/sdk";
import { AgentProcess, type AgentCommand } from "./agentProcess";
import { readTextFile, writeTextFile, type FileAccess } from "./fileAccess";
import { mapUpdate } from "./mapping";
import type { AgentEvent, HostMessage, WebviewMessage } from "./messages";
import { PermissionQuestions } from "./permissions";

const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;

export type ChatSessionOptions = {
  agent: AgentCommand;
  files: FileAccess;
  /** Sends a message to every panel showing this chat. */
  post: (message: HostMessage) => void;
  /** Tells the user outside the panel (a VS Code notification). */
  onAgentDied?: (message: string) => void;
  onStderr?: (text: string) => void;
  /** Told each time an axon process is up with a session (for the log). */
  onStarted?: (pid: number | undefined, sessionId: string) => void;
};

type Live = { process: AgentProcess; sessionId: string };

export class ChatSession {
  private live: Promise<Live> | null = null;
  private transcript: HostMessage[] = [];
  private readonly permissions: PermissionQuestions;
  private turnRunning = false;
  private disposed = false;
  private deaths: number[] = [];

  constructor(private readonly options: ChatSessionOptions) {
    this.permissions = new PermissionQuestions((event) => this.emit(event));
  }

  /** Handles one message from a webview (already parsed). */
  async handle(message: WebviewMessage, replay?: (message: HostMessage) => void): Promise<void> {
    switch (message.type) {
      case "ready":
        for (const m of this.transcript) (replay ?? this.options.post)(m);
        await this.ensureStarted().catch(() => {});
        return;
      case "user_message":
        return this.prompt(message.content);
      case "cancel":
        return this.cancel();
      case "set_mode":
        return this.setMode(message.mode);
      case "clear_chat":
        return this.clear();
      case "permission_response":
        this.permissions.answer(message.requestId, message.optionId);
        return;
    }
  }

  get busy(): boolean {
    return this.turnRunning;
  }

  /** Starts axon and a session if none is running; resolves with them. */
  ensureStarted(): Promise<Live> {
    if (this.disposed) return Promise.reject(new Error("the chat is closed"));
    this.live ??= this.start().catch((error: Error) => {
      this.live = null;
      this.emit({ type: "error", message: error.message });
      throw error;
    });
    return this.live;
  }

  private async start(): Promise<Live> {
    const files = this.options.files;
    const process = new AgentProcess(
      this.options.agent,
      {
        onUpdate: (n) => {
          for (const event of mapUpdate(n.update)) this.emit(event);
        },
        askPermission: (request, signal) => this.permissions.ask(request, signal),
        readTextFile: (request) => readTextFile(files, request),
        writeTextFile: (request) => writeTextFile(files, request),
      },
      this.options.onStderr,
    );
    void process.exited.then((exit) => this.onExit(process, exit));
    try {
      await process.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
        clientInfo: { name: "axon-vscode", title: "axon for VS Code", version: "0.1.0" },
      });
      const session = await process.agent.request(acp.methods.agent.session.new, {
        cwd: this.options.agent.cwd,
        mcpServers: [],
      });
      this.emitModes(session);
      this.options.onStarted?.(process.pid, session.sessionId);
      return { process, sessionId: session.sessionId };
    } catch (error) {
      await process.stop();
      const exit = await process.exited;
      const why = exit.error ?? (process.stderr.trim() || (error as Error).message);
      throw new Error(`axon could not start (${this.options.agent.command} ${this.options.agent.args.join(" ")}): ${why}`);
    }
  }

  private async onExit(process: AgentProcess, exit: { code: number | null; signal: string | null; error?: string }) {
    const current = await this.live?.catch(() => null);
    if (this.disposed || !current || current.process !== process) return;
    this.live = null;
    this.permissions.cancelAll();
    const now = Date.now();
    this.deaths = [...this.deaths.filter((t) => now - t < RESTART_WINDOW_MS), now];
    const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    const restart = this.deaths.length <= MAX_RESTARTS;
    const message = restart
      ? `axon stopped unexpectedly (${how}); it was restarted with a new session.`
      : `axon stopped unexpectedly (${how}) ${this.deaths.length} times in a minute; it is not restarted until you send a message or start a new chat.`;
    this.emit({ type: "notice", level: "warning", message });
    this.options.onAgentDied?.(message);
    if (restart) await this.ensureStarted().catch(() => {});
    else this.deaths = [];
  }

  private async prompt(text: string): Promise<void> {
    if (this.turnRunning) {
      this.emit({ type: "error", message: "A turn is already running: stop it first." });
      return;
    }
    this.turnRunning = true;
    this.record({ type: "user_message", content: text });
    this.emit({ type: "turn_start" });
    let stopReason = "error";
    try {
      const { process, sessionId } = await this.ensureStarted();
      const result = await process.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text }],
      });
      stopReason = result.stopReason;
    } catch (error) {
      this.emit({ type: "error", message: (error as Error).message });
    } finally {
      this.turnRunning = false;
      this.permissions.cancelAll();
      this.emit({ type: "turn_end", stopReason });
    }
  }

  private async cancel(): Promise<void> {
    this.permissions.cancelAll();
    const live = this.turnRunning && this.live ? await this.live.catch(() => null) : null;
    if (!live) return;
    // If axon is gone the turn ends by itself (its request fails).
    await live.process.agent.notify(acp.methods.agent.session.cancel, { sessionId: live.sessionId }).catch(() => {});
  }

  private async setMode(mode: string): Promise<void> {
    try {
      const { process, sessionId } = await this.ensureStarted();
      await process.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: mode });
    } catch (error) {
      this.emit({ type: "error", message: `cannot switch to ${mode}: ${(error as Error).message}` });
    }
  }

  /** A new chat: the running turn is cancelled and a new session starts in the same process. */
  private async clear(): Promise<void> {
    await this.cancel();
    this.transcript = [];
    this.options.post({ type: "clear_chat" });
    const live = this.live ? await this.live.catch(() => null) : null;
    if (!live) {
      await this.ensureStarted().catch(() => {});
      return;
    }
    try {
      const session = await live.process.agent.request(acp.methods.agent.session.new, { cwd: this.options.agent.cwd, mcpServers: [] });
      this.live = Promise.resolve({ process: live.process, sessionId: session.sessionId });
      this.emitModes(session);
    } catch (error) {
      this.emit({ type: "error", message: `cannot start a new chat: ${(error as Error).message}` });
    }
  }

  /** The mode switch's choices, from session/new. */
  private emitModes(session: acp.NewSessionResponse): void {
    if (!session.modes) return;
    this.emit({
      type: "modes",
      current: session.modes.currentModeId,
      available: session.modes.availableModes.map((m) => ({ id: m.id, name: m.name, description: m.description ?? undefined })),
    });
  }

  private emit(event: AgentEvent): void {
    this.record({ type: "agent_event", event });
  }

  private record(message: HostMessage): void {
    this.transcript.push(message);
    this.options.post(message);
  }

  /** Stops axon; the chat cannot be used afterwards. */
  async dispose(): Promise<void> {
    this.disposed = true;
    this.permissions.cancelAll();
    const live = this.live ? await this.live.catch(() => null) : null;
    this.live = null;
    if (live) await live.process.stop();
  }
}
