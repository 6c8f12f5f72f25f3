// chatSession.ts — one chat: the webview's messages in, axon's ACP session
// out, and the UI messages the panels show. Pure (no vscode): the extension
// and the end-to-end test drive this same class.
//
// Guarantees:
// - axon is started on first use (one process per ChatSession, i.e. per
//   window) and stopped by `dispose()`; start-up (`initialize` and
//   `session/new`, also a New chat's `session/new`) has a deadline
//   (`startupTimeoutMs`, 30 s): when it passes, or Stop / New chat /
//   dispose comes first, that process is stopped and the failure shown once;
//   so Stop, New chat and dispose never wait on a hung axon;
// - if axon dies otherwise, a new process and session start — at most
//   MAX_RESTARTS times within RESTART_WINDOW_MS, so a binary that crashes at
//   once does not loop — and the user is told (`notice` + `onAgentDied`)
//   once that is done: "restarted" only after the restart succeeded;
// - an error is shown once: a start-up failure where it happens, not again
//   by the prompt or mode switch that needed axon;
// - one prompt runs at a time; `cancel` settles open approvals as cancelled
//   and sends `session/cancel`, and what streamed so far stays shown;
// - only the live session is heard: session updates of any other session
//   (an old chat's) are dropped, its permission questions answered
//   `cancelled`, its fs requests refused (fileAccess.ts); New chat cancels
//   the running turn and waits for it to end (its `turn_end` goes to the old
//   chat, so the panels' Send comes back from the host) before `clear_chat`
//   and the new session; a prompt sent meanwhile runs in the new session;
// - every message posted since the last `clear_chat` is kept (consecutive
//   `token`s, and `thought`s, merged into one entry), so a panel that
//   (re)loads (`ready`) is replayed the same transcript;
// - the proposed changes (diffs) of the chat's tool calls are kept until
//   New chat, so `open_diff` shows exactly what axon proposed, before or
//   after it is allowed; an `open_diff` naming no known change does nothing;
// - `open_location` opens only a path inside a workspace folder (resolved
//   as for axon's fs requests, fileAccess.ts); anything else is refused
//   with a notice naming the path;
// - the first start resumes `resumeSessionId` (the window's last chat) with
//   `session/load` when axon offers it, so its history is replayed into the
//   panel; when it cannot be loaded a new session starts and the panel says
//   why; `onStarted` is told every session that becomes live (New chat
//   included), so the caller can remember it;
// - the composer's attachments (a selection, `@` mentioned files) are held
//   here, shown as chips in every panel, and taken by the next prompt,
//   which sends them as ACP content blocks (attachments.ts); a mentioned
//   file must lie inside a workspace folder and be a file; a pasted or
//   dropped image is attached only when axon advertised
//   `promptCapabilities.image` (else a notice says why), and the user's
//   message shows the images it sent;
// - axon's MCP servers' states (`_axon/mcp_servers`, mcp.ts) are shown for
//   the live session only, also when the list came just before the
//   session became live here;
// - nothing from the webview is trusted: messages are parsed
//   (messages.ts), approvals must name an offered option (permissions.ts).

import { permissionMessage, turnEndMessage } from "./attention";
import * as fs from "node:fs";
import * as path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { AgentProcess, type AgentCommand } from "./agentProcess";
import { insideRoots, readTextFile, writeTextFile, type FileAccess } from "./fileAccess";
import { mapUpdate, modelEvents } from "./mapping";
import { mcpEvent, type McpServersNotification } from "./mcp";
import { matchFiles, PendingAttachments, promptBlocks, attachmentLabel, type Image, type Selection } from "./attachments";
import type { AgentEvent, HostMessage, ProposedChange, WebviewMessage, WorkspaceFile } from "./messages";
import { PermissionQuestions } from "./permissions";

const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;
const STARTUP_TIMEOUT_MS = 30_000;

export type ChatSessionOptions = {
  agent: AgentCommand;
  files: FileAccess;
  /** Sends a message to every panel showing this chat. */
  post: (message: HostMessage) => void;
  /** Tells the user outside the panel (a VS Code notification). */
  onAgentDied?: (message: string) => void;
  /** axon waits on the user (a permission question) or finished a turn: the host notifies if they look elsewhere. */
  onAttention?: (message: string) => void;
  onStderr?: (text: string) => void;
  /** A session to resume on the first start (session/load), e.g. the window's last chat. */
  resumeSessionId?: string;
  /** Told each time a session becomes live: axon up, or a New chat (for the log and to resume it later). */
  onStarted?: (pid: number | undefined, sessionId: string) => void;
  /** Shows a proposed change in the editor's diff view (the panel's "Open diff"). */
  openDiff?: (change: ProposedChange) => void | Promise<void>;
  /** Opens a place a tool call touched (a checked, resolved path inside a root) at a 1-based line. */
  openLocation?: (path: string, line: number | undefined) => void | Promise<void>;
  /** The workspace's files an `@` mention may pick (bounded, excludes applied; fetched when a mention starts). */
  listFiles?: () => Promise<WorkspaceFile[]>;
  /** How long `initialize` + `session/new` may take (default 30 s). */
  startupTimeoutMs?: number;
};

type Live = { process: AgentProcess; sessionId: string };

/** A failure already shown in the panel (not to be shown again by the caller). */
class ReportedError extends Error {}

/** Start-up given up: its deadline passed, or Stop / New chat / dispose. */
class StartAborted extends Error {}

export class ChatSession {
  private live: Promise<Live> | null = null;
  /** The session whose updates and requests are heard (null: none yet, or a New chat is under way). */
  private sessionId: string | null = null;
  /** Ends a pending start-up now (Stop, New chat, dispose). */
  private abortStart: ((why: Error) => void) | null = null;
  private transcript: HostMessage[] = [];
  /** The chat's proposed changes by tool call id and path. */
  private changes = new Map<string, ProposedChange>();
  private readonly permissions: PermissionQuestions;
  private turnRunning = false;
  /** Settles when the running prompt has ended (turn_end posted). */
  private turn: Promise<void> = Promise.resolve();
  /** Settles when the last New chat is done (never rejects). */
  private clearing: Promise<void> = Promise.resolve();
  private disposed = false;
  private deaths: number[] = [];
  /** Tried once, on the first start. */
  private resumeId: string | undefined;
  /** The composer's chips, taken by the next prompt. */
  private readonly pending = new PendingAttachments();
  /** The last MCP servers' states axon reported, by session (the newest few). */
  private readonly mcpServers = new Map<string, McpServersNotification>();
  /** The workspace files as listed when the last mention started. */
  private workspaceFiles: WorkspaceFile[] = [];
  /** Whether the running axon said its prompts take images (`promptCapabilities.image`). */
  private takesImages = false;

  constructor(private readonly options: ChatSessionOptions) {
    this.permissions = new PermissionQuestions((event) => this.emit(event));
    this.resumeId = options.resumeSessionId;
  }

  /** Handles one message from a webview (already parsed); `reply` reaches only the panel that sent it. */
  async handle(message: WebviewMessage, reply?: (message: HostMessage) => void): Promise<void> {
    const answer = reply ?? this.options.post;
    switch (message.type) {
      case "ready":
        for (const m of this.transcript) answer(m);
        if (this.pending.size) answer({ type: "attachments", items: this.pending.chips() });
        await this.ensureStarted().catch(() => {});
        return;
      case "find_files":
        return this.findFiles(message.query, answer);
      case "attach_file": {
        const error = await this.attachFile(message.path);
        if (error) this.emit({ type: "notice", level: "warning", message: error });
        return;
      }
      case "attach_image": {
        const error = await this.attachImage(message);
        if (error) this.emit({ type: "notice", level: "warning", message: error });
        return;
      }
      case "remove_attachment":
        if (this.pending.remove(message.id)) this.postAttachments();
        return;
      case "user_message":
        return this.prompt(message.content);
      case "cancel":
        return this.cancel();
      case "set_mode":
        return this.setMode(message.mode);
      case "set_model":
        return this.setModel(message.configId, message.model);
      case "clear_chat":
        return this.clear();
      case "list_sessions":
        return this.listSessions();
      case "resume_session":
        return this.clear(message.sessionId);
      case "permission_response":
        this.permissions.answer(message.requestId, message.optionId);
        return;
      case "open_location":
        return this.openLocation(message.path, message.line);
      case "open_diff": {
        const change = this.changes.get(changeKey(message.toolCallId, message.path));
        if (change) await this.options.openDiff?.(change);
        return;
      }
    }
  }

  get busy(): boolean {
    return this.turnRunning;
  }

  /** Starts axon and a session if none is running; resolves with them. A failure is shown here, once. */
  ensureStarted(): Promise<Live> {
    if (this.disposed) return Promise.reject(new ReportedError("the chat is closed"));
    this.live ??= this.start().catch((error: Error) => {
      this.live = null;
      if (!this.disposed) this.emit({ type: "error", message: error.message });
      throw new ReportedError(error.message);
    });
    return this.live;
  }

  private get startupTimeoutMs(): number {
    return this.options.startupTimeoutMs ?? STARTUP_TIMEOUT_MS;
  }

  /** `work`, unless the start-up deadline passes or `abortStart` is called first. */
  private async bounded<T>(work: Promise<T>): Promise<T> {
    const ms = this.startupTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const abort = new Promise<never>((_, reject) => {
      this.abortStart = (why) => reject(new StartAborted(why.message));
      timer = setTimeout(() => reject(new StartAborted(`axon did not answer within ${ms / 1000} s`)), ms);
    });
    try {
      return await Promise.race([work, abort]);
    } finally {
      clearTimeout(timer);
      this.abortStart = null;
    }
  }

  private async start(): Promise<Live> {
    const files = this.options.files;
    const process = new AgentProcess(
      this.options.agent,
      {
        onUpdate: (n) => this.onUpdate(n),
        askPermission: (request, signal) => this.askPermission(request, signal),
        readTextFile: (request) => readTextFile(files, request, this.sessionId),
        writeTextFile: (request) => writeTextFile(files, request, this.sessionId),
        onMcpServers: (n) => this.onMcpServers(n),
      },
      this.options.onStderr,
    );
    void process.exited.then((exit) => this.onExit(process, exit));
    try {
      const resume = this.resumeId;
      this.resumeId = undefined;
      const session = await this.bounded(
        (async () => {
          const init = await process.agent.request(acp.methods.agent.initialize, {
            protocolVersion: acp.PROTOCOL_VERSION,
            // `_meta.axon.mcpServers`: axon sends its MCP servers' states (`_axon/mcp_servers`, mcp.ts) to a client that asks.
            clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false, _meta: { axon: { mcpServers: true } } },
            clientInfo: { name: "axon-vscode", title: "axon for VS Code", version: "0.1.0" },
          });
          this.takesImages = init.agentCapabilities?.promptCapabilities?.image === true;
          if (resume && init.agentCapabilities?.loadSession) {
            const loaded = await this.load(process, resume);
            if (loaded) return loaded;
          }
          return process.agent.request(acp.methods.agent.session.new, { cwd: this.options.agent.cwd, mcpServers: [] });
        })(),
      );
      this.sessionId = session.sessionId;
      this.emitModes(session);
      this.emitMcpServers();
      this.options.onStarted?.(process.pid, session.sessionId);
      return { process, sessionId: session.sessionId };
    } catch (error) {
      const exit = await process.stop();
      const stderr = process.stderr.trim();
      const why =
        error instanceof StartAborted ? error.message + (stderr ? `; its stderr: ${stderr}` : "") : (exit.error ?? (stderr || (error as Error).message));
      const hint = this.options.agent.hint ? `; ${this.options.agent.hint}` : "";
      throw new Error(`axon could not start (${this.options.agent.command} ${this.options.agent.args.join(" ")}): ${why}${hint}`);
    }
  }

  /**
   * Loads session `id` (its history is replayed as updates, heard because it
   * is made the live session first); null, with a notice, if axon refuses.
   */
  private async load(process: AgentProcess, id: string): Promise<(acp.LoadSessionResponse & { sessionId: string }) | null> {
    this.sessionId = id;
    try {
      const loaded = await process.agent.request(acp.methods.agent.session.load, { sessionId: id, cwd: this.options.agent.cwd, mcpServers: [] });
      return { ...loaded, sessionId: id };
    } catch (error) {
      this.sessionId = null;
      this.emit({ type: "notice", level: "warning", message: `The last chat (${id}) could not be resumed, so a new one starts: ${(error as Error).message}` });
      return null;
    }
  }

  /** A session/update from axon: shown only if it is the live session's. */
  private onUpdate(notification: acp.SessionNotification): void {
    if (notification.sessionId !== this.sessionId) return;
    const update = notification.update;
    if (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") this.keepChanges(update.toolCallId, update.content);
    for (const event of mapUpdate(notification.update)) this.emit(event);
  }

  /**
   * axon's MCP servers of a session: shown if it is the live session's;
   * kept (the last few sessions') so a list sent just before its session
   * became live here (right after session/new answered) is shown then.
   */
  private onMcpServers(notification: McpServersNotification): void {
    this.mcpServers.delete(notification.sessionId);
    this.mcpServers.set(notification.sessionId, notification);
    for (const key of this.mcpServers.keys()) {
      if (this.mcpServers.size <= 8) break;
      this.mcpServers.delete(key);
    }
    if (notification.sessionId === this.sessionId) this.emit(mcpEvent(notification));
  }

  /** The MCP servers' last known states for a session that just became live. */
  private emitMcpServers(): void {
    const known = this.sessionId === null ? undefined : this.mcpServers.get(this.sessionId);
    if (known) this.emit(mcpEvent(known));
  }

  /** A permission question from axon: asked only if it is the live session's, else cancelled. */
  private async askPermission(request: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse> {
    if (request.sessionId !== this.sessionId) return { outcome: { outcome: "cancelled" } };
    this.keepChanges(request.toolCall.toolCallId, request.toolCall.content);
    this.options.onAttention?.(permissionMessage(request.toolCall.title));
    return this.permissions.ask(request, signal);
  }

  private async onExit(process: AgentProcess, exit: { code: number | null; signal: string | null; error?: string }) {
    const current = await this.live?.catch(() => null);
    if (this.disposed || !current || current.process !== process) return;
    this.live = null;
    this.sessionId = null;
    this.permissions.cancelAll();
    const now = Date.now();
    this.deaths = [...this.deaths.filter((t) => now - t < RESTART_WINDOW_MS), now];
    const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    let message: string;
    if (this.deaths.length > MAX_RESTARTS) {
      message = `axon stopped unexpectedly (${how}) ${this.deaths.length} times in a minute; it is not restarted until you send a message or start a new chat.`;
      this.deaths = [];
    } else {
      const restarted = await this.ensureStarted().then(
        () => true,
        () => false,
      );
      if (this.disposed) return;
      message = restarted
        ? `axon stopped unexpectedly (${how}); it was restarted with a new session.`
        : `axon stopped unexpectedly (${how}) and could not be restarted; it is tried again when you send a message or start a new chat.`;
    }
    this.emit({ type: "notice", level: "warning", message });
    this.options.onAgentDied?.(message);
  }

  private async prompt(text: string): Promise<void> {
    if (this.turnRunning) {
      this.emit({ type: "error", message: "A turn is already running: stop it first." });
      return;
    }
    this.turnRunning = true;
    let ended!: () => void;
    this.turn = new Promise((resolve) => (ended = resolve));
    let stopReason = "error";
    try {
      // A New chat under way finishes first: this prompt belongs to the new chat.
      await this.clearing;
      const attachments = this.pending.take();
      if (attachments.length) this.postAttachments();
      const sent: Extract<HostMessage, { type: "user_message" }> = { type: "user_message", content: text };
      if (attachments.length) sent.attachments = attachments.map(attachmentLabel);
      const images = attachments.flatMap((a) => (a.kind === "image" ? [{ mimeType: a.mimeType, data: a.data }] : []));
      if (images.length) sent.images = images;
      this.record(sent);
      this.emit({ type: "turn_start" });
      try {
        const { process, sessionId } = await this.ensureStarted();
        const result = await process.agent.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: promptBlocks(text, attachments),
        });
        stopReason = result.stopReason;
      } catch (error) {
        if (!(error instanceof ReportedError)) this.emit({ type: "error", message: (error as Error).message });
      }
    } finally {
      this.turnRunning = false;
      this.permissions.cancelAll();
      this.emit({ type: "turn_end", stopReason });
      const done = turnEndMessage(stopReason);
      if (done) this.options.onAttention?.(done);
      ended();
    }
  }

  private async cancel(): Promise<void> {
    this.permissions.cancelAll();
    // A start-up still under way is given up: its process is stopped.
    this.abortStart?.(new Error("stopped while it was starting"));
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
      if (!(error instanceof ReportedError)) this.emit({ type: "error", message: `cannot switch to ${mode}: ${(error as Error).message}` });
    }
  }

  private async setModel(configId: string, model: string): Promise<void> {
    try {
      const { process, sessionId } = await this.ensureStarted();
      const answer = await process.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value: model });
      for (const event of modelEvents(answer.configOptions)) this.emit(event);
    } catch (error) {
      if (!(error instanceof ReportedError)) this.emit({ type: "error", message: `cannot switch to model ${model}: ${(error as Error).message}` });
    }
  }

  /** Adds an editor selection to the next prompt; an error message (nothing added) when it cannot go. */
  addSelection(selection: Selection): string | null {
    const error = this.pending.addSelection(selection);
    if (!error) this.postAttachments();
    return error;
  }

  /**
   * Adds a workspace file (an `@` mention) to the next prompt: only a file
   * inside a workspace folder (checked as axon's fs requests are); an error
   * message (nothing added) otherwise.
   */
  async attachFile(file: string): Promise<string | null> {
    let real: string;
    try {
      real = await insideRoots(this.options.files, file);
      if (!(await fs.promises.stat(real)).isFile()) return `Not attached: ${file} is not a file.`;
    } catch (error) {
      return `Not attached: ${(error as Error).message}`;
    }
    this.pending.addFile(real, await this.relativeLabel(real));
    this.postAttachments();
    return null;
  }

  /**
   * Adds an image pasted or dropped into a panel to the next prompt: only
   * when axon takes images, and as attachments.ts allows; an error message
   * (nothing added) otherwise.
   */
  async attachImage(image: Image): Promise<string | null> {
    // axon says whether it takes images when it starts (a failure to start is shown already).
    const started = await this.ensureStarted().then(
      () => true,
      () => false,
    );
    if (!started) return null;
    if (!this.takesImages) {
      return `Not attached: ${image.name} is an image, and axon's model does not take images (axon did not offer image prompts); switch to a model that does.`;
    }
    const error = this.pending.addImage(image);
    if (!error) this.postAttachments();
    return error;
  }

  /** `file` relative to the workspace folder that holds it (`/` separators), else the path itself. */
  private async relativeLabel(file: string): Promise<string> {
    for (const root of this.options.files.roots()) {
      const realRoot = await fs.promises.realpath(root).catch(() => root);
      const relative = path.relative(realRoot, file);
      if (relative && !relative.startsWith("..") && !path.isAbsolute(relative)) return relative.split(path.sep).join("/");
    }
    return file;
  }

  /** The files matching a mention, to the panel that asked; the list is fetched again when a mention starts (`@` alone). */
  private async findFiles(query: string, answer: (message: HostMessage) => void): Promise<void> {
    if (!this.options.listFiles) return;
    if (query === "" || this.workspaceFiles.length === 0) {
      try {
        this.workspaceFiles = await this.options.listFiles();
      } catch (error) {
        this.emit({ type: "notice", level: "warning", message: `cannot list the workspace's files: ${(error as Error).message}` });
        return;
      }
    }
    answer({ type: "file_matches", query, files: matchFiles(this.workspaceFiles, query) });
  }

  private postAttachments(): void {
    this.options.post({ type: "attachments", items: this.pending.chips() });
  }

  /** A tool call's location from a panel: opened only if it lies inside a workspace folder (as for axon's fs requests). */
  private async openLocation(file: string, line: number | undefined): Promise<void> {
    let real: string;
    try {
      real = await insideRoots(this.options.files, file);
    } catch (error) {
      this.emit({ type: "notice", level: "warning", message: `Not opened: ${(error as Error).message}` });
      return;
    }
    try {
      await this.options.openLocation?.(real, line);
    } catch (error) {
      this.emit({ type: "notice", level: "warning", message: `cannot open ${file}: ${(error as Error).message}` });
    }
  }

  /** The workspace's sessions (session/list), newest first, to the panels only (not kept in the transcript). */
  private async listSessions(): Promise<void> {
    try {
      const { process } = await this.ensureStarted();
      const answer = await process.agent.request(acp.methods.agent.session.list, { cwd: this.options.agent.cwd });
      const sessions = answer.sessions
        .map((s) => ({ id: s.sessionId, title: s.title ?? "", updatedAt: s.updatedAt ?? "" }))
        .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
      this.options.post({ type: "agent_event", event: { type: "sessions", current: this.sessionId, sessions } });
    } catch (error) {
      if (!(error instanceof ReportedError)) this.emit({ type: "error", message: `cannot list the sessions: ${(error as Error).message}` });
    }
  }

  /**
   * A new chat (or, with `resume`, an earlier session: session/load, its
   * history replayed): the running turn is cancelled and waited for, then
   * the panels are cleared and the session starts in the same process.
   */
  private clear(resume?: string): Promise<void> {
    const running = this.turnRunning ? this.turn : Promise.resolve();
    const previous = this.clearing;
    const done = (async () => {
      await previous;
      await this.cancel();
      await running;
      this.sessionId = null;
      this.transcript = [];
      this.changes = new Map();
      this.options.post({ type: "clear_chat" });
      const live = this.live ? await this.live.catch(() => null) : null;
      if (!live) {
        this.resumeId = resume;
        await this.ensureStarted().catch(() => {});
        return;
      }
      try {
        const loaded = resume ? await this.bounded(this.load(live.process, resume)) : null;
        const session = loaded ?? (await this.bounded(live.process.agent.request(acp.methods.agent.session.new, { cwd: this.options.agent.cwd, mcpServers: [] })));
        this.sessionId = session.sessionId;
        this.live = Promise.resolve({ process: live.process, sessionId: session.sessionId });
        this.emitModes(session);
        this.emitMcpServers();
        this.options.onStarted?.(live.process.pid, session.sessionId);
      } catch (error) {
        this.emit({ type: "error", message: `cannot start a new chat: ${(error as Error).message}` });
        // A hung or broken axon is replaced on next use; the old one is stopped (not a "crash").
        this.live = null;
        await live.process.stop();
      }
    })().catch(() => {});
    this.clearing = done;
    return done;
  }

  /** Keeps the diffs among a tool call's content (for `open_diff`). */
  private keepChanges(toolCallId: string, content: acp.ToolCallContent[] | null | undefined): void {
    for (const item of content ?? []) {
      if (item.type !== "diff") continue;
      this.changes.set(changeKey(toolCallId, item.path), { toolCallId, path: item.path, oldText: item.oldText ?? null, newText: item.newText });
    }
  }

  /** The mode switch's and model picker's choices, from session/new or session/load. */
  private emitModes(session: { modes?: acp.SessionModeState | null; configOptions?: acp.SessionConfigOption[] | null }): void {
    for (const event of modelEvents(session.configOptions)) this.emit(event);
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
    const last = this.transcript.at(-1);
    if (
      message.type === "agent_event" &&
      (message.event.type === "token" || message.event.type === "thought") &&
      last?.type === "agent_event" &&
      last.event.type === message.event.type
    ) {
      // One entry for a streamed run (a new object: the posted ones are not changed).
      const content = (last.event as { content: string }).content + message.event.content;
      this.transcript[this.transcript.length - 1] = { type: "agent_event", event: { type: message.event.type, content } };
    } else {
      this.transcript.push(message);
    }
    this.options.post(message);
  }

  /** Stops axon (a pending start-up too); the chat cannot be used afterwards. */
  async dispose(): Promise<void> {
    this.disposed = true;
    this.permissions.cancelAll();
    this.abortStart?.(new Error("the chat was closed"));
    const live = this.live ? await this.live.catch(() => null) : null;
    this.live = null;
    if (live) await live.process.stop();
  }
}

function changeKey(toolCallId: string, path: string): string {
  return `${toolCallId}\u0000${path}`;
}
