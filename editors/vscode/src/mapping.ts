// mapping.ts — ACP `session/update` notifications → seed 002's agent events
// for the webview. Pure: no vscode, no I/O, no state; unit-tested in plain
// Node (test/mapping.test.ts).
//
// Guarantees: every update becomes zero or more events (an update the panel
// does not show yet becomes none, never an error); text stays text (the
// webview renders it, sanitised); a diff becomes red/green lines computed
// here, with unchanged runs cut to a few lines of context, so the webview
// never diffs; a very large file is summarised instead of diffed, so one
// update cannot stall the extension host.

import type { SessionConfigOption, SessionUpdate, ToolCallContent, ContentBlock, ToolCallLocation } from "@agentclientprotocol/sdk";
import { diffLines } from "diff";
import type { AgentEvent, DiffLine, ToolContent, ToolLocation, ToolStatus } from "./messages";

/** Unchanged lines kept on each side of a change. */
const CONTEXT_LINES = 3;
/** Above this many characters (old + new) a diff is summarised, not computed. */
const MAX_DIFF_CHARS = 400_000;

/** The text of a content block, or a short description of what it is. */
export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "resource_link":
      return `[${block.name}](${block.uri})`;
    case "resource":
      return "text" in block.resource ? block.resource.text : `(binary resource ${block.resource.uri})`;
    case "image":
      return "(image)";
    case "audio":
      return "(audio)";
    default:
      return "";
  }
}

/** Splits text into lines without the final empty piece after a trailing newline. */
function lines(text: string): string[] {
  const all = text.split("\n");
  if (all.length > 0 && all[all.length - 1] === "") all.pop();
  return all;
}

/** Red/green lines between `oldText` and `newText`, long unchanged runs cut. */
export function diffToLines(oldText: string, newText: string): { lines: DiffLine[]; added: number; removed: number } {
  if (oldText.length + newText.length > MAX_DIFF_CHARS) {
    const removed = lines(oldText).length;
    const added = lines(newText).length;
    return { lines: [{ op: " ", text: `… ${removed} lines replaced by ${added} lines (too large to show)` }], added, removed };
  }
  const all: DiffLine[] = [];
  let added = 0;
  let removed = 0;
  for (const change of diffLines(oldText, newText)) {
    const op = change.added ? "+" : change.removed ? "-" : " ";
    for (const text of lines(change.value)) {
      all.push({ op, text });
      if (op === "+") added += 1;
      if (op === "-") removed += 1;
    }
  }
  // Keep CONTEXT_LINES unchanged lines around each change; a gap is "…".
  const keep = all.map(() => false);
  all.forEach((line, i) => {
    if (line.op === " ") return;
    for (let j = Math.max(0, i - CONTEXT_LINES); j <= Math.min(all.length - 1, i + CONTEXT_LINES); j++) keep[j] = true;
  });
  const shown: DiffLine[] = [];
  let skipping = false;
  all.forEach((line, i) => {
    if (keep[i]) {
      shown.push(line);
      skipping = false;
    } else if (!skipping) {
      shown.push({ op: " ", text: "…" });
      skipping = true;
    }
  });
  return { lines: shown, added, removed };
}

/** What a card shows for one piece of ACP tool call content. */
export function toolContent(content: ToolCallContent): ToolContent {
  switch (content.type) {
    case "content":
      return { type: "text", text: blockText(content.content) };
    case "diff": {
      const created = content.oldText === undefined || content.oldText === null;
      const diff = diffToLines(content.oldText ?? "", content.newText);
      return { type: "diff", path: content.path, created, ...diff };
    }
    case "terminal":
      return { type: "other", description: `terminal ${content.terminalId}` };
    default:
      return { type: "other", description: "unsupported content" };
  }
}

/** ACP's locations as the card's links (axon's lines are 1-based; a 0 or missing line is none). */
function places(locations: ToolCallLocation[] | null | undefined): ToolLocation[] {
  return (locations ?? []).map((l) => (l.line ? { path: l.path, line: l.line } : { path: l.path }));
}

/** The events one `session/update` becomes, in order. */
export function mapUpdate(update: SessionUpdate): AgentEvent[] {
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
      return [{ type: "token", content: blockText(update.content) }];
    case "agent_thought_chunk":
      return [{ type: "thought", content: blockText(update.content) }];
    case "user_message_chunk":
      // A resumed chat's image is shown as the image.
      if (update.content.type === "image") return [{ type: "user_image", mimeType: update.content.mimeType, data: update.content.data }];
      return [{ type: "user_text", content: blockText(update.content) }];
    case "tool_call":
      return [
        {
          type: "action",
          id: update.toolCallId,
          tool: update.title,
          kind: update.kind ?? "other",
          status: (update.status ?? "pending") as ToolStatus,
          params: update.rawInput ?? null,
          content: (update.content ?? []).map(toolContent),
          locations: places(update.locations),
        },
      ];
    case "tool_call_update": {
      const event: Extract<AgentEvent, { type: "observation" }> = { type: "observation", id: update.toolCallId };
      if (update.title) event.tool = update.title;
      if (update.kind) event.kind = update.kind;
      if (update.status) event.status = update.status as ToolStatus;
      if (update.content) event.content = update.content.map(toolContent);
      if (update.locations) event.locations = places(update.locations);
      return [event];
    }
    case "plan":
      return [
        {
          type: "plan",
          entries: update.entries.map((e) => ({ content: e.content, status: e.status, priority: e.priority })),
        },
      ];
    case "config_option_update":
      return modelEvents(update.configOptions);
    case "current_mode_update":
      return [{ type: "mode", mode: update.currentModeId }];
    case "usage_update": {
      const cost = update.cost ? { amount: update.cost.amount, currency: update.cost.currency } : undefined;
      return [cost ? { type: "usage", used: update.used, size: update.size, cost } : { type: "usage", used: update.used, size: update.size }];
    }
    case "notice": {
      const level = update.severity === "error" || update.severity === "warning" ? update.severity : "info";
      const message = update.description ? `${update.title}: ${update.description}` : update.title;
      return [{ type: "notice", level, message }];
    }
    default:
      // available_commands_update, config options, session info, compaction:
      // nothing on the panel yet.
      return [];
  }
}

/**
 * The model picker's event from a session's config options: the first
 * select option of category `model` (its groups flattened); none when
 * there is no such option.
 */
export function modelEvents(options: SessionConfigOption[] | null | undefined): AgentEvent[] {
  const option = (options ?? []).find((o) => o.category === "model" && o.type === "select");
  if (!option || option.type !== "select") return [];
  const flat = option.options.flatMap((o) => ("group" in o ? o.options : [o]));
  return [
    {
      type: "models",
      configId: option.id,
      current: option.currentValue,
      available: flat.map((o) => ({ id: o.value, name: o.name, description: o.description ?? undefined })),
    },
  ];
}
