// cards.ts — a card per tool call: kind, title, status, folded output, the
// diff in red/green, the files it touches, and the approval buttons while
// the agent waits for the user; each diff has an "Open diff" button that
// asks the host to show the change in VS Code's diff editor, and each
// location is a link that asks the host to open the file at its line.
//
// Guarantees: everything on a card is text (textContent), never markup; a
// card is updated in place by `observation` events (fields not in an update
// keep their value); the approval buttons are exactly the options the agent
// offered and disappear once the question is settled, whoever settled it.

import type { AgentEvent, PermissionChoice, ToolContent, ToolLocation, ToolStatus } from "../src/messages";
import { h } from "./dom";

type Action = Extract<AgentEvent, { type: "action" }>;
type Observation = Extract<AgentEvent, { type: "observation" }>;

/** What a card's links ask of the host. */
export type CardLinks = {
  diff: (toolCallId: string, path: string) => void;
  location: (location: ToolLocation) => void;
};

const STATUS_LABEL: Record<ToolStatus, string> = {
  pending: "waiting",
  in_progress: "running",
  completed: "done",
  failed: "failed",
};
/** Output longer than this many lines starts folded. */
const FOLD_LINES = 12;

export class ToolCard {
  readonly element: HTMLElement;
  private readonly titleEl: HTMLElement;
  private readonly kindEl: HTMLElement;
  private readonly statusEl: HTMLElement;
  private readonly locationsEl: HTMLElement;
  private readonly bodyEl: HTMLElement;
  private readonly approvalEl: HTMLElement;

  /**
   * `open.diff` asks the host to show this call's change to `path` in the
   * diff editor; `open.location` to open a place it touches at its line.
   */
  constructor(
    action: Action,
    private readonly open: CardLinks,
  ) {
    this.kindEl = h("span", { class: "tool-kind" });
    this.titleEl = h("span", { class: "tool-title" });
    this.statusEl = h("span", { class: "tool-status" });
    this.locationsEl = h("div", { class: "tool-locations" });
    this.bodyEl = h("div", { class: "tool-body" });
    this.approvalEl = h("div", { class: "tool-approval" });
    this.element = h(
      "div",
      { class: "tool-card", "data-tool-call": action.id },
      h("div", { class: "tool-head" }, this.kindEl, this.titleEl, this.statusEl),
      this.locationsEl,
      this.approvalEl,
      this.bodyEl,
    );
    const params = action.params === null || action.params === undefined ? "" : JSON.stringify(action.params, null, 2);
    if (params && params !== "{}") {
      this.element.insertBefore(folded("Parameters", params, true), this.bodyEl);
    }
    this.update({ type: "observation", id: action.id, tool: action.tool, kind: action.kind, status: action.status, content: action.content, locations: action.locations });
  }

  update(update: Observation): void {
    if (update.kind) this.kindEl.textContent = update.kind.replace(/_/g, " ");
    if (update.tool) this.titleEl.textContent = update.tool;
    if (update.status) {
      this.statusEl.textContent = STATUS_LABEL[update.status] ?? update.status;
      this.element.dataset.status = update.status;
    }
    if (update.locations) this.locationsEl.replaceChildren(...update.locations.map((l) => this.locationLink(l)));
    if (update.content) this.bodyEl.replaceChildren(...update.content.map((c) => renderContent(c, (path) => this.open.diff(update.id, path))));
  }

  /** A location as a link: the file's name and line, the whole path in its tooltip. */
  private locationLink(location: ToolLocation): HTMLElement {
    const name = location.path.split(/[\\/]/).filter(Boolean).pop() ?? location.path;
    const where = location.line ? `${location.path}:${location.line}` : location.path;
    const link = h("button", {
      type: "button",
      class: "location",
      text: location.line ? `${name}:${location.line}` : name,
      title: `Open ${where}`,
      "data-path": location.path,
      "data-line": location.line ? String(location.line) : undefined,
    });
    link.addEventListener("click", () => this.open.location(location));
    return link;
  }

  /** Shows the agent's question on this card; `answer` sends the choice. */
  ask(requestId: string, options: PermissionChoice[], answer: (requestId: string, optionId: string) => void): void {
    this.element.classList.add("asking");
    this.approvalEl.replaceChildren(
      h("span", { class: "approval-question", text: "Allow this?" }),
      ...options.map((option) => {
        const button = h("button", { type: "button", class: `approval ${option.kind}`, text: option.name, "data-option": option.optionId });
        button.addEventListener("click", () => answer(requestId, option.optionId));
        return button;
      }),
    );
  }

  settled(optionId: string | null): void {
    this.element.classList.remove("asking");
    this.approvalEl.replaceChildren();
    if (optionId === null) this.approvalEl.append(h("span", { class: "approval-cancelled", text: "Question cancelled" }));
  }
}

function folded(summary: string, text: string, closed: boolean): HTMLElement {
  const details = h("details", { class: "tool-output", open: !closed }, h("summary", { text: summary }), h("pre", { text }));
  return details;
}

function renderContent(content: ToolContent, openDiff: (path: string) => void): HTMLElement {
  switch (content.type) {
    case "text": {
      const lines = content.text.split("\n").length;
      return folded(lines > FOLD_LINES ? `Output (${lines} lines)` : "Output", content.text, lines > FOLD_LINES);
    }
    case "diff": {
      const head = h(
        "div",
        { class: "diff-head" },
        h("code", { text: content.path }),
        h("span", { class: "diff-stat add", text: `+${content.added}` }),
        h("span", { class: "diff-stat del", text: `-${content.removed}` }),
        content.created ? h("span", { class: "diff-new", text: "new file" }) : null,
        h("button", { type: "button", class: "open-diff", text: "Open diff", title: "Show this change in VS Code's diff editor" }),
      );
      head.querySelector("button.open-diff")!.addEventListener("click", () => openDiff(content.path));
      const body = h(
        "pre",
        { class: "diff-lines" },
        ...content.lines.map((line) => h("div", { class: line.op === "+" ? "add" : line.op === "-" ? "del" : "ctx", text: `${line.op} ${line.text}` })),
      );
      return h("div", { class: "diff" }, head, body);
    }
    default:
      return h("div", { class: "tool-other", text: content.description });
  }
}
