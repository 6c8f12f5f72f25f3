// agentProcess.ts — one `axon acp` child process and the official ACP SDK's
// client connection over its stdio. Pure Node (no vscode), so the tests
// drive exactly this code against a real axon.
//
// Guarantees: stdout carries only ACP (the SDK reads it); stderr is kept
// (the last few KB) for error messages and passed to `onStderr`; `exited`
// resolves once with how the process ended, also when it could not start
// (ENOENT: no axon on PATH); `stop()` ends it (SIGTERM, then SIGKILL after
// a grace period) and resolves when it is gone. On POSIX axon leads its own
// process group (spawned detached) and `stop()` signals the whole group, so
// the commands axon started end with it; on Windows only axon is signalled.
// The handlers are the caller's: nothing here decides a permission or
// touches a file.

import { spawn, type ChildProcess } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { MCP_SERVERS_METHOD, McpServersParams, type McpServersNotification } from "./mcp";

export type ClientHandlers = {
  onUpdate(notification: acp.SessionNotification): void;
  askPermission(request: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse>;
  readTextFile(request: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse>;
  writeTextFile(request: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse>;
  /** axon's MCP servers' states (the extension notification `_axon/mcp_servers`, src/mcp.ts). */
  onMcpServers?(notification: McpServersNotification): void;
};

export type AgentCommand = {
  /** The axon binary: a path, or a name looked up on PATH. */
  command: string;
  /** Arguments before nothing else: `["acp"]` plus any the user adds. */
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Said with a start-up failure: where axon was looked for and how to fix it (no binary found). */
  hint?: string;
};

export type Exit = { code: number | null; signal: string | null; error?: string };

/** How long `stop()` waits after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 3000;
const STDERR_KEPT = 8000;
const GROUPS = process.platform !== "win32";

export class AgentProcess {
  readonly connection: acp.ClientConnection;
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;
  private stderrTail = "";
  private exit: Exit | null = null;

  constructor(command: AgentCommand, handlers: ClientHandlers, onStderr: (text: string) => void = () => {}) {
    this.child = spawn(command.command, command.args, {
      cwd: command.cwd,
      env: command.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group, so stop() can end what it started too.
      detached: GROUPS,
    });
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code, signal) => {
        this.exit ??= { code, signal };
        resolve(this.exit);
      });
      this.child.once("error", (error) => {
        // Could not start (or could not be signalled): no exit event follows a failed spawn.
        this.exit ??= { code: null, signal: null, error: error.message };
        if (this.child.pid === undefined) resolve(this.exit);
      });
    });
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_KEPT);
      onStderr(text);
    });
    // A write after the agent died fails the pending request, not the host.
    this.child.stdin?.on("error", () => {});

    const app = acp
      .client({ name: "axon-vscode" })
      .onNotification(acp.methods.client.session.update, ({ params }) => handlers.onUpdate(params))
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => handlers.askPermission(params, signal))
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => handlers.readTextFile(params))
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => handlers.writeTextFile(params))
      .onNotification(MCP_SERVERS_METHOD, McpServersParams, ({ params }) => handlers.onMcpServers?.(params));
    const toAgent = Writable.toWeb(this.child.stdin!) as WritableStream<Uint8Array>;
    const fromAgent = Readable.toWeb(this.child.stdout!) as ReadableStream<Uint8Array>;
    this.connection = app.connect(acp.ndJsonStream(toAgent, fromAgent));
    void this.exited.then(() => this.connection.close(new Error("axon acp exited")));
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  /** The end of what the agent wrote on stderr. */
  get stderr(): string {
    return this.stderrTail;
  }

  /** The process id, for the log (undefined when it could not start). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exit === null;
  }

  /** Ends the process (and on POSIX its process group); resolves once axon has exited. */
  async stop(): Promise<Exit> {
    if (this.exit && !GROUPS) return this.exit;
    this.signal("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)));
    await Promise.race([this.exited, graceOver]);
    clearTimeout(timer);
    // Whatever is left (axon past its grace, or a command that ignored SIGTERM).
    this.signal("SIGKILL");
    return this.exited;
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    if (GROUPS) {
      try {
        process.kill(-pid, signal);
      } catch {
        // ESRCH: the group is gone already.
      }
    } else if (!this.exit) {
      this.child.kill(signal);
    }
  }
}
