// main.ts — the chat panel inside the webview: header (mode, model,
// Sessions, New chat, Stop), the sessions list, the plan with its controls, the transcript, the prompt box. Speaks only seed 002's messages
// (src/messages.ts) with the extension host; the MCP servers' states show
// in a foldable line under the header, through postMessage.
//
// Guarantees: model and tool text is either rendered by markdown.ts
// (sanitised) or set as textContent; the page holds no state the host does
// not also hold (on load it sends `ready` and is replayed the transcript),
// so a reloaded or second panel shows the same chat; Send and Stop follow
// the host's turn_start / turn_end only (never the page's own guess), so
// Send is enabled exactly when the host accepts a prompt; the composer's
// chips, `@` mention list and pasted or dropped images are composer.ts's
// (a refused file is said in the transcript); the user's message shows
// the images it sent; the plan's
// Approve / Edit / Reject answer the agent's question about running it (a
// question on a `switch_mode` card, axon's "Run this plan?") with the
// options it offered: Approve the allow option, Reject and Edit the reject
// one, Edit then putting the prompt box in the user's hands for the change;
// they go when the question is settled, whoever settled it; a user's message
// is shown when the host echoes it, so every panel shows it once; streamed
// Markdown is drawn at once for an answer's first piece, then re-rendered
// at most once per animation frame.

import type { AgentEvent, HostMessage, WebviewMessage } from "../src/messages";
import { ToolCard, type CardLinks } from "./cards";
import { Composer, imageElement } from "./composer";
import { h } from "./dom";
import { createMarkdownRenderer } from "./markdown";

declare function acquireVsCodeApi(): { postMessage(message: WebviewMessage): void };

const vscode = acquireVsCodeApi();
const send = (message: WebviewMessage) => vscode.postMessage(message);
const renderMarkdown = createMarkdownRenderer(window);

// The page.
const modeSelect = h("select", { class: "mode", title: "Mode", "aria-label": "Mode" }) as HTMLSelectElement;
const modelSelect = h("select", { class: "model", title: "Model", "aria-label": "Model", hidden: true }) as HTMLSelectElement;
let modelConfigId = "";
const sessionsButton = h("button", { type: "button", class: "sessions-button", text: "Sessions", title: "This workspace's earlier chats" });
const sessionsList = h("div", { class: "sessions", hidden: true, role: "dialog", "aria-label": "Sessions" });
const newChatButton = h("button", { type: "button", class: "new-chat", text: "New chat" });
const stopButton = h("button", { type: "button", class: "stop", text: "Stop", disabled: true });
const transcript = h("div", { class: "transcript", role: "log", "aria-live": "polite" });
const mcpSummary = h("summary");
const mcpList = h("ul");
const mcpPanel = h("details", { class: "mcp", hidden: true }, mcpSummary, mcpList) as HTMLDetailsElement;
const planList = h("ol");
const planControls = h("div", { class: "plan-controls", hidden: true });
const planPanel = h("div", { class: "plan", hidden: true }, h("div", { class: "plan-title", text: "Plan" }), planList, planControls);
const usageLine = h("div", { class: "usage" });
/** A session's cost as axon sends it: dollars to the cent's hundredth (a turn costs fractions of a cent), any other unit as named. */
function money(cost: { amount: number; currency: string }): string {
  return cost.currency === "USD" ? `$${cost.amount.toFixed(4)}` : `${cost.amount} ${cost.currency}`;
}
const input = h("textarea", { class: "prompt", rows: "3", placeholder: "Ask axon… (Enter to send, Shift+Enter for a new line)" }) as HTMLTextAreaElement;
const sendButton = h("button", { type: "button", class: "send", text: "Send" });
const composer = new Composer(input, send, (message) => line("notice warning", message));
const footer = h("footer", {}, composer.chips, composer.mentions, input, h("div", { class: "composer-row" }, usageLine, sendButton));
composer.acceptImages(footer);
document.getElementById("app")!.append(
  h("header", {}, modeSelect, modelSelect, sessionsButton, newChatButton, stopButton),
  sessionsList,
  mcpPanel,
  transcript,
  planPanel,
  footer,
);

// What is being streamed, and the cards by tool call id.
let answer: { element: HTMLElement; text: string; scheduled: boolean } | null = null;
let thought: { pre: HTMLElement } | null = null;
/** A resumed chat's user message being replayed (its chunks join one box). */
let replayedUser: HTMLElement | null = null;
const cards = new Map<string, ToolCard>();
/** Each card's kind (a plan question is asked on a `switch_mode` card). */
const cardKinds = new Map<string, string>();
let planEntries = 0;
/** The plan question's request id while its controls show. */
let planQuestion: string | null = null;
const cardByRequest = new Map<string, ToolCard>();

function scrollToEnd(): void {
  transcript.scrollTop = transcript.scrollHeight;
}

function endBlocks(): void {
  answer = null;
  thought = null;
  replayedUser = null;
}

function appendAnswer(text: string): void {
  thought = null;
  replayedUser = null;
  if (!answer) {
    // The first piece is drawn at once (no frame's wait before the answer starts).
    answer = { element: h("div", { class: "message assistant" }), text, scheduled: false };
    answer.element.append(renderMarkdown(text));
    transcript.append(answer.element);
    return scrollToEnd();
  }
  answer.text += text;
  // Re-render at most once a frame while tokens stream in.
  if (!answer.scheduled) {
    const current = answer;
    current.scheduled = true;
    requestAnimationFrame(() => {
      current.scheduled = false;
      current.element.replaceChildren(renderMarkdown(current.text));
      scrollToEnd();
    });
  }
}

function appendThought(text: string): void {
  replayedUser = null;
  if (!thought) {
    const pre = h("pre");
    transcript.append(h("details", { class: "thought" }, h("summary", { text: "Thinking" }), pre));
    thought = { pre };
    answer = null;
  }
  thought.pre.textContent += text;
}

function line(kind: string, text: string): void {
  endBlocks();
  transcript.append(h("div", { class: `line ${kind}`, text }));
  scrollToEnd();
}

function setRunning(running: boolean): void {
  stopButton.toggleAttribute("disabled", !running);
  sendButton.toggleAttribute("disabled", running);
}

function answerPermission(requestId: string, optionId: string): void {
  send({ type: "permission_response", requestId, optionId });
}

/** The sessions list: one button per session (the current one marked), newest first; choosing one resumes it. */
function showSessions(event: Extract<AgentEvent, { type: "sessions" }>): void {
  const close = h("button", { type: "button", class: "sessions-close", text: "Close" });
  close.addEventListener("click", () => (sessionsList.hidden = true));
  const items = event.sessions.map((s) => {
    const label = s.title || s.id;
    const when = s.updatedAt ? new Date(s.updatedAt).toLocaleString() : "";
    const item = h(
      "button",
      { type: "button", class: `session${s.id === event.current ? " current" : ""}`, "data-session": s.id, title: s.id },
      h("span", { class: "session-title", text: label }),
      h("span", { class: "session-when", text: s.id === event.current ? `${when} · current` : when }),
    );
    item.addEventListener("click", () => {
      sessionsList.hidden = true;
      if (s.id !== event.current) send({ type: "resume_session", sessionId: s.id });
    });
    return item;
  });
  sessionsList.replaceChildren(
    h("div", { class: "sessions-head" }, h("span", { text: "Sessions" }), close),
    ...(items.length ? items : [h("div", { class: "sessions-empty", text: "No earlier sessions in this workspace." })]),
  );
  sessionsList.hidden = false;
}

/** The plan's Approve / Edit / Reject for the question `requestId`. */
function showPlanControls(requestId: string, options: { optionId: string; kind: string }[]): void {
  const allow = options.find((o) => o.kind === "allow_once") ?? options.find((o) => o.kind === "allow_always");
  const reject = options.find((o) => o.kind === "reject_once") ?? options.find((o) => o.kind === "reject_always");
  if (!allow || !reject) return;
  planQuestion = requestId;
  const button = (cls: string, text: string, title: string, run: () => void) => {
    const b = h("button", { type: "button", class: `plan-${cls}`, text, title });
    b.addEventListener("click", run);
    return b;
  };
  planControls.replaceChildren(
    button("approve", "Approve", "Run this plan", () => answerPermission(requestId, allow.optionId)),
    button("edit", "Edit…", "Keep planning: say what to change in the prompt box", () => {
      answerPermission(requestId, reject.optionId);
      if (!input.value.trim()) input.value = "Change the plan: ";
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
    }),
    button("reject", "Reject", "Do not run this plan", () => answerPermission(requestId, reject.optionId)),
  );
  planControls.hidden = false;
  planPanel.hidden = false;
}

function hidePlanControls(): void {
  planQuestion = null;
  planControls.hidden = true;
  planControls.replaceChildren();
  planPanel.hidden = planEntries === 0;
}

/** The MCP servers' line: a count per state, unfolding to each server's state, tools and message. */
function showMcpServers(event: Extract<AgentEvent, { type: "mcp_servers" }>): void {
  const counts = new Map<string, number>();
  for (const s of event.servers) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
  mcpSummary.textContent = `MCP: ${[...counts].map(([state, n]) => `${n} ${state.replace(/_/g, " ")}`).join(" · ")}`;
  mcpList.replaceChildren(
    ...event.servers.map((s) =>
      h(
        "li",
        { class: "mcp-server", "data-state": s.state, "data-server": s.name },
        h("span", { class: "mcp-name", text: s.name }),
        h("span", { class: "mcp-state", text: s.state.replace(/_/g, " ") }),
        typeof s.tools === "number" ? h("span", { class: "mcp-tools", text: `${s.tools} tool${s.tools === 1 ? "" : "s"}` }) : null,
        s.message ? h("div", { class: "mcp-message", text: s.message }) : null,
      ),
    ),
  );
  mcpPanel.hidden = event.servers.length === 0;
  // A server that needs the user (an error, a login) unfolds the list.
  if (event.servers.some((s) => s.state === "error" || s.state === "needs_login")) mcpPanel.open = true;
}

const cardLinks: CardLinks = {
  diff: (toolCallId, path) => send({ type: "open_diff", toolCallId, path }),
  location: (location) => send({ type: "open_location", ...location }),
};

function onEvent(event: AgentEvent): void {
  switch (event.type) {
    case "token":
      return appendAnswer(event.content);
    case "thought":
      return appendThought(event.content);
    case "user_text":
      if (!replayedUser) {
        endBlocks();
        replayedUser = h("div", { class: "message user replayed" });
        transcript.append(replayedUser);
      }
      replayedUser.append(event.content);
      return scrollToEnd();
    case "user_image": {
      if (!replayedUser) {
        endBlocks();
        replayedUser = h("div", { class: "message user replayed" });
        transcript.append(replayedUser);
      }
      const image = imageElement(event.mimeType, event.data, "attached image", "sent-image");
      if (image) replayedUser.append(image);
      return scrollToEnd();
    }
    case "action": {
      endBlocks();
      const card = new ToolCard(event, cardLinks);
      cards.set(event.id, card);
      cardKinds.set(event.id, event.kind);
      transcript.append(card.element);
      return scrollToEnd();
    }
    case "observation":
      return cards.get(event.id)?.update(event);
    case "permission_request": {
      let card = cards.get(event.toolCallId);
      if (!card) {
        card = new ToolCard({ type: "action", id: event.toolCallId, tool: event.title, kind: "other", status: "pending", params: null, content: [], locations: [] }, cardLinks);
        cards.set(event.toolCallId, card);
        transcript.append(card.element);
      }
      card.ask(event.requestId, event.options, answerPermission);
      cardByRequest.set(event.requestId, card);
      if (cardKinds.get(event.toolCallId) === "switch_mode") showPlanControls(event.requestId, event.options);
      return scrollToEnd();
    }
    case "permission_resolved":
      cardByRequest.get(event.requestId)?.settled(event.optionId);
      cardByRequest.delete(event.requestId);
      if (event.requestId === planQuestion) hidePlanControls();
      return;
    case "plan":
      planEntries = event.entries.length;
      planList.replaceChildren(...event.entries.map((e) => h("li", { class: `plan-${e.status}`, text: e.content })));
      planPanel.hidden = planEntries === 0 && planQuestion === null;
      return;
    case "modes":
      modeSelect.replaceChildren(...event.available.map((m) => h("option", { value: m.id, text: m.name, title: m.description })));
      modeSelect.value = event.current;
      return;
    case "mode":
      modeSelect.value = event.mode;
      return;
    case "models":
      modelConfigId = event.configId;
      modelSelect.replaceChildren(...event.available.map((m) => h("option", { value: m.id, text: m.name, title: m.description })));
      modelSelect.value = event.current;
      modelSelect.hidden = event.available.length === 0;
      return;
    case "usage": {
      const tokens = `${event.used.toLocaleString()} / ${event.size.toLocaleString()} tokens`;
      usageLine.textContent = event.cost ? `${tokens} · ${money(event.cost)}` : tokens;
      return;
    }
    case "sessions":
      return showSessions(event);
    case "mcp_servers":
      return showMcpServers(event);
    case "turn_start":
      return setRunning(true);
    case "turn_end":
      endBlocks();
      setRunning(false);
      if (event.stopReason === "cancelled") line("notice", "Stopped.");
      else if (event.stopReason !== "end_turn" && event.stopReason !== "error") line("notice", `Turn ended: ${event.stopReason}`);
      return;
    case "notice":
      return line(`notice ${event.level}`, event.message);
    case "error":
      return line("error", event.message);
  }
}

window.addEventListener("message", (e: MessageEvent<HostMessage>) => {
  const message = e.data;
  switch (message?.type) {
    case "agent_event":
      return onEvent(message.event);
    case "user_message": {
      endBlocks();
      const images = (message.images ?? []).map((image) => imageElement(image.mimeType, image.data, "attached image", "sent-image"));
      const sent = message.attachments?.length
        ? h(
            "div",
            { class: "message user" },
            h("div", { class: "user-text", text: message.content }),
            images.some(Boolean) ? h("div", { class: "sent-images" }, ...images) : null,
            h("div", { class: "sent-attachments" }, ...message.attachments.map((label) => h("span", { class: "chip", text: label }))),
          )
        : h("div", { class: "message user", text: message.content });
      transcript.append(sent);
      return scrollToEnd();
    }
    case "attachments":
      return composer.showChips(message.items);
    case "file_matches":
      return composer.showMatches(message.query, message.files);
    case "clear_chat":
      endBlocks();
      cards.clear();
      cardKinds.clear();
      cardByRequest.clear();
      planEntries = 0;
      planList.replaceChildren();
      hidePlanControls();
      transcript.replaceChildren();
      planPanel.hidden = true;
      usageLine.textContent = "";
      // The new session's servers are reported by axon for it.
      mcpPanel.hidden = true;
      mcpList.replaceChildren();
      // Send/Stop are left as they are: the host posts clear_chat only after
      // the running turn's turn_end, which is what re-enables Send.
      return;
  }
});

function submit(): void {
  const content = input.value.trim();
  if ((!content && !composer.attached) || sendButton.hasAttribute("disabled")) return;
  input.value = "";
  send({ type: "user_message", content });
}

sendButton.addEventListener("click", submit);
input.addEventListener("keydown", (e) => {
  if (composer.onKeydown(e)) return;
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    submit();
  }
});
stopButton.addEventListener("click", () => send({ type: "cancel" }));
newChatButton.addEventListener("click", () => send({ type: "clear_chat" }));
sessionsButton.addEventListener("click", () => send({ type: "list_sessions" }));
modeSelect.addEventListener("change", () => send({ type: "set_mode", mode: modeSelect.value }));
modelSelect.addEventListener("change", () => send({ type: "set_model", configId: modelConfigId, model: modelSelect.value }));

send({ type: "ready" });
