// messages.ts — the contract between the webview and the extension host
// (seed 002's UIMessage), with no dependency on vscode or on ACP.
//
// Guarantees: these types are the only shapes that cross `postMessage` in
// either direction. Seed 002's five message types keep their names and
// fields (`user_message`, `agent_event`, `clear_chat`, `cancel`,
// `set_mode`); an approval needs an answer from the panel, which seed 002
// has no message for, so `permission_response` is added, and `ready` lets a
// panel that (re)loads ask for the transcript so far, and `open_diff` asks
// the host to show a tool call's proposed change in VS Code's diff editor. `set_mode`'s mode is
// an ACP mode id of the session (axon: ask, auto, read-only, plan), not
// seed 002's 'react' | 'plan'; `set_model` (the model picker) sets the
// session's config option of category `model`; `list_sessions` asks for
// the workspace's sessions (answered by a `sessions` event) and
// `resume_session` opens one (session/load) in place of the current chat;
// `open_location` opens a place a tool call touched (a path inside a
// workspace folder, checked by the host) at its line. The composer's
// attachments (chips: an editor selection added with "Add selection to
// chat", files mentioned with `@`) are held by the host: `find_files` asks
// for the workspace files matching a mention (answered by `file_matches`),
// `attach_file` and `remove_attachment` change the chips, and every panel
// is sent the chips (`attachments`) after each change. `attach_image` is
// an image pasted or dropped into the prompt box (base64, checked by the
// host again), attached only if axon said it takes images; a sent
// `user_message` carries its images so the user's message shows them, and
// `user_image` is one of a resumed chat's user messages' images.

/** One line of a rendered diff: added, removed or unchanged context. */
export type DiffLine = { op: "+" | "-" | " "; text: string };

/** What a tool call shows on its card, in order. */
export type ToolContent =
  | { type: "text"; text: string }
  | { type: "diff"; path: string; created: boolean; lines: DiffLine[]; added: number; removed: number }
  | { type: "other"; description: string };

export type ToolStatus = "pending" | "in_progress" | "completed" | "failed";

export type PermissionChoice = {
  optionId: string;
  name: string;
  kind: "allow_once" | "allow_always" | "reject_once" | "reject_always";
};

/** A place a tool call touches: an absolute path, and a 1-based line when it is about one. */
export type ToolLocation = { path: string; line?: number };

export type ModeInfo = { id: string; name: string; description?: string };

/**
 * Seed 002's AgentEvent, in the shape ACP gives it: `token` and `thought`
 * are streamed pieces, `action` opens a tool call's card and `observation`
 * updates it (status, result, diff), `plan` replaces the plan.
 */
export type AgentEvent =
  | { type: "token"; content: string }
  | { type: "thought"; content: string }
  | { type: "user_text"; content: string }
  | { type: "user_image"; mimeType: string; data: string }
  | {
      type: "action";
      id: string;
      tool: string;
      kind: string;
      status: ToolStatus;
      params: unknown;
      content: ToolContent[];
      locations: ToolLocation[];
    }
  | {
      type: "observation";
      id: string;
      tool?: string;
      kind?: string;
      status?: ToolStatus;
      content?: ToolContent[];
      locations?: ToolLocation[];
    }
  | { type: "plan"; entries: { content: string; status: string; priority: string }[] }
  | { type: "modes"; current: string; available: ModeInfo[] }
  /** The model picker: axon's session config option of category `model` (absent: no picker). */
  | { type: "models"; configId: string; current: string; available: ModeInfo[] }
  | { type: "mode"; mode: string }
  /** Tokens in context of the window; `cost`, the session's spending so far, when every call was priced. */
  | { type: "usage"; used: number; size: number; cost?: { amount: number; currency: string } }
  /** The session's MCP servers and their states (axon's `_axon/mcp_servers`, src/mcp.ts); the whole list each time. */
  | { type: "mcp_servers"; servers: { name: string; state: string; message?: string; tools?: number }[] }
  /** The workspace's sessions (answer to `list_sessions`; never replayed). */
  | { type: "sessions"; current: string | null; sessions: { id: string; title: string; updatedAt: string }[] }
  | { type: "permission_request"; requestId: string; toolCallId: string; title: string; options: PermissionChoice[] }
  | { type: "permission_resolved"; requestId: string; optionId: string | null }
  | { type: "turn_start" }
  | { type: "turn_end"; stopReason: string }
  | { type: "notice"; level: "info" | "warning" | "error"; message: string }
  | { type: "error"; message: string };

/** An image as it travels: base64 data and its MIME type. */
export type ImageData = { mimeType: string; data: string };

/** A chip in the composer: something attached to the next prompt (a selection, a mentioned file, an image with its thumbnail). */
export type AttachmentChip = { id: string; kind: "selection" | "file" | "image"; label: string; title: string; image?: ImageData };

/** A workspace file an `@` mention may pick: its absolute path and its path relative to its folder. */
export type WorkspaceFile = { path: string; label: string };

/** Host → webview. */
export type HostMessage =
  | { type: "agent_event"; event: AgentEvent }
  /** The user's prompt as sent, with the labels of what went with it. */
  | { type: "user_message"; content: string; attachments?: string[]; images?: ImageData[] }
  | { type: "clear_chat" }
  /** The composer's chips now (after each change; none once a prompt took them). */
  | { type: "attachments"; items: AttachmentChip[] }
  /** The workspace files for the mention `@query` (answer to `find_files`, to the panel that asked). */
  | { type: "file_matches"; query: string; files: WorkspaceFile[] };

/** Webview → host. */
export type WebviewMessage =
  | { type: "user_message"; content: string }
  | { type: "clear_chat" }
  | { type: "cancel" }
  | { type: "set_mode"; mode: string }
  | { type: "set_model"; configId: string; model: string }
  | { type: "permission_response"; requestId: string; optionId: string | null }
  | { type: "open_diff"; toolCallId: string; path: string }
  | { type: "open_location"; path: string; line?: number }
  | { type: "list_sessions" }
  | { type: "resume_session"; sessionId: string }
  | { type: "find_files"; query: string }
  | { type: "attach_file"; path: string }
  | { type: "attach_image"; name: string; mimeType: string; data: string }
  | { type: "remove_attachment"; id: string }
  | { type: "ready" };

/** The message types a webview may send, to reject anything else. */
const WEBVIEW_TYPES = new Set(["user_message", "clear_chat", "cancel", "set_mode", "set_model", "permission_response", "open_diff", "open_location", "list_sessions", "resume_session", "find_files", "attach_file", "attach_image", "remove_attachment", "ready"]);

/** `value` as a WebviewMessage when it is one, else null (a webview is not trusted blindly). */
export function parseWebviewMessage(value: unknown): WebviewMessage | null {
  if (value === null || typeof value !== "object") return null;
  const m = value as Record<string, unknown>;
  if (typeof m.type !== "string" || !WEBVIEW_TYPES.has(m.type)) return null;
  switch (m.type) {
    case "user_message":
      return typeof m.content === "string" ? { type: "user_message", content: m.content } : null;
    case "set_mode":
      return typeof m.mode === "string" ? { type: "set_mode", mode: m.mode } : null;
    case "permission_response":
      if (typeof m.requestId !== "string") return null;
      if (m.optionId !== null && typeof m.optionId !== "string") return null;
      return { type: "permission_response", requestId: m.requestId, optionId: m.optionId as string | null };
    case "set_model":
      return typeof m.configId === "string" && typeof m.model === "string" ? { type: "set_model", configId: m.configId, model: m.model } : null;
    case "resume_session":
      return typeof m.sessionId === "string" ? { type: "resume_session", sessionId: m.sessionId } : null;
    case "open_diff":
      return typeof m.toolCallId === "string" && typeof m.path === "string" ? { type: "open_diff", toolCallId: m.toolCallId, path: m.path } : null;
    case "find_files":
      return typeof m.query === "string" && m.query.length <= 1000 ? { type: "find_files", query: m.query } : null;
    case "attach_file":
      return typeof m.path === "string" ? { type: "attach_file", path: m.path } : null;
    case "attach_image":
      return typeof m.name === "string" && typeof m.mimeType === "string" && typeof m.data === "string"
        ? { type: "attach_image", name: m.name.slice(0, 200), mimeType: m.mimeType, data: m.data }
        : null;
    case "remove_attachment":
      return typeof m.id === "string" ? { type: "remove_attachment", id: m.id } : null;
    case "open_location": {
      if (typeof m.path !== "string") return null;
      if (m.line === undefined) return { type: "open_location", path: m.path };
      return Number.isSafeInteger(m.line) && (m.line as number) >= 1 ? { type: "open_location", path: m.path, line: m.line as number } : null;
    }
    default:
      return { type: m.type } as WebviewMessage;
  }
}

/** A tool call's proposed change to one file, as axon sent it (for VS Code's diff editor). */
export type ProposedChange = { toolCallId: string; path: string; oldText: string | null; newText: string };
