// webview.test.ts — the panel's real bundle (dist/webview/panel.js, built
// by build.mjs) run in jsdom, with the extension host played by the test:
// what the page sends (seed 002's messages) and what it shows for the
// host's messages (streamed Markdown, a tool card with its approval
// buttons and diff, Stop, New chat, the mode switch).
//
// Guarantees: every wait is on a condition (the next animation frame, which
// is when streamed Markdown is drawn); the jsdom window is closed at the end.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { JSDOM } from "jsdom";
import type { HostMessage, WebviewMessage } from "../src/messages";

const bundle = fs.readFileSync("dist/webview/panel.js", "utf8");
const dom = new JSDOM('<!DOCTYPE html><div id="app"></div>', { runScripts: "outside-only", pretendToBeVisual: true });
const window = dom.window;
const document = window.document;
const sent: WebviewMessage[] = [];
(window as unknown as { acquireVsCodeApi: () => unknown }).acquireVsCodeApi = () => ({ postMessage: (m: WebviewMessage) => sent.push(structuredClone(m)) });
window.eval(bundle);
after(() => window.close());

function host(message: HostMessage): void {
  window.dispatchEvent(new window.MessageEvent("message", { data: message }));
}
function frame(): Promise<void> {
  return new Promise((resolve) => window.requestAnimationFrame(() => resolve()));
}
const $ = (selector: string) => document.querySelector(selector) as HTMLElement | null;

test("the panel asks for the transcript when it loads", () => {
  assert.deepEqual(sent[0], { type: "ready" });
});

test("the mode switch lists the session's modes and sends set_mode", () => {
  host({ type: "agent_event", event: { type: "modes", current: "ask", available: [{ id: "ask", name: "Ask" }, { id: "plan", name: "Plan" }] } });
  const select = $("select.mode") as HTMLSelectElement;
  assert.deepEqual([...select.options].map((o) => o.value), ["ask", "plan"]);
  assert.equal(select.value, "ask");
  select.value = "plan";
  select.dispatchEvent(new window.Event("change"));
  assert.deepEqual(sent.at(-1), { type: "set_mode", mode: "plan" });
  host({ type: "agent_event", event: { type: "mode", mode: "ask" } });
  assert.equal(select.value, "ask");
});

test("a prompt is sent with Enter; the echo and streamed Markdown are shown; Stop sends cancel", async () => {
  const input = $("textarea.prompt") as HTMLTextAreaElement;
  input.value = "Say hello";
  input.dispatchEvent(new window.KeyboardEvent("keydown", { key: "Enter" }));
  assert.deepEqual(sent.at(-1), { type: "user_message", content: "Say hello" });
  assert.equal(input.value, "");
  host({ type: "user_message", content: "Say hello" });
  assert.equal($(".message.user")?.textContent, "Say hello");

  host({ type: "agent_event", event: { type: "turn_start" } });
  assert.equal($("button.stop")?.hasAttribute("disabled"), false);
  for (const piece of ["Hello **wor", "ld** <img src=x onerror=alert(1)> [x](javascript:alert(1))"]) {
    host({ type: "agent_event", event: { type: "token", content: piece } });
  }
  await frame();
  const answer = $(".message.assistant")!;
  assert.equal(answer.querySelector("strong")?.textContent, "world");
  assert.equal(answer.querySelector("img"), null);
  assert.equal(answer.querySelector("a[href]"), null, "the javascript: link is not a link");
  assert.ok(answer.textContent!.includes("<img src=x onerror=alert(1)>"));

  $("button.stop")!.click();
  assert.deepEqual(sent.at(-1), { type: "cancel" });
  host({ type: "agent_event", event: { type: "turn_end", stopReason: "cancelled" } });
  assert.equal($("button.stop")?.hasAttribute("disabled"), true);
  assert.equal($(".message.assistant strong")?.textContent, "world", "the partial answer stays");
  assert.ok($(".line.notice")?.textContent?.includes("Stopped"));
});

test("a tool call's card shows kind, status, diff and the approval buttons; a click answers", () => {
  host({
    type: "agent_event",
    event: {
      type: "action",
      id: "call_1",
      tool: "Write new.txt",
      kind: "edit",
      status: "pending",
      params: { path: "new.txt" },
      content: [{ type: "diff", path: "/w/new.txt", created: true, lines: [{ op: "+", text: "fresh" }], added: 1, removed: 0 }],
      locations: [{ path: "/w/new.txt", line: 1 }, { path: "/w" }],
    },
  });
  const card = $('[data-tool-call="call_1"]')!;
  assert.equal(card.querySelector(".tool-kind")?.textContent, "edit");
  assert.equal(card.querySelector(".tool-title")?.textContent, "Write new.txt");
  assert.equal(card.querySelector(".tool-status")?.textContent, "waiting");
  assert.equal(card.querySelector(".diff-lines .add")?.textContent, "+ fresh");
  // Each location is a link that asks the host to open it (at its line, when it has one).
  const links = [...card.querySelectorAll(".tool-locations button.location")] as HTMLElement[];
  assert.deepEqual(links.map((l) => l.textContent), ["new.txt:1", "w"]);
  assert.equal(links[0].title, "Open /w/new.txt:1");
  links[0].click();
  assert.deepEqual(sent.at(-1), { type: "open_location", path: "/w/new.txt", line: 1 });
  links[1].click();
  assert.deepEqual(sent.at(-1), { type: "open_location", path: "/w" });

  host({
    type: "agent_event",
    event: {
      type: "permission_request",
      requestId: "perm-1",
      toolCallId: "call_1",
      title: "Write new.txt",
      options: [
        { optionId: "allow_once", name: "Allow", kind: "allow_once" },
        { optionId: "allow_always", name: "Always", kind: "allow_always" },
        { optionId: "reject_once", name: "Reject", kind: "reject_once" },
      ],
    },
  });
  const buttons = [...card.querySelectorAll("button.approval")] as HTMLElement[];
  assert.deepEqual(buttons.map((b) => b.textContent), ["Allow", "Always", "Reject"]);
  buttons[0].click();
  assert.deepEqual(sent.at(-1), { type: "permission_response", requestId: "perm-1", optionId: "allow_once" });
  host({ type: "agent_event", event: { type: "permission_resolved", requestId: "perm-1", optionId: "allow_once" } });
  assert.equal(card.querySelectorAll("button.approval").length, 0);
  host({ type: "agent_event", event: { type: "observation", id: "call_1", status: "completed" } });
  assert.equal(card.querySelector(".tool-status")?.textContent, "done");
  assert.equal(card.dataset.status, "completed");
});

test("the usage line shows the tokens in context, and the session's cost when axon knows it", () => {
  host({ type: "agent_event", event: { type: "usage", used: 1200, size: 8000 } });
  const line = $(".usage")?.textContent ?? "";
  assert.match(line, /1.?200 \/ 8.?000 tokens$/);
  host({ type: "agent_event", event: { type: "usage", used: 1500, size: 8000, cost: { amount: 0.01234, currency: "USD" } } });
  assert.match($(".usage")?.textContent ?? "", /1.?500 \/ 8.?000 tokens · \$0\.0123$/);
  host({ type: "agent_event", event: { type: "usage", used: 1500, size: 8000, cost: { amount: 3, currency: "credits" } } });
  assert.match($(".usage")?.textContent ?? "", /· 3 credits$/);
});

test("New chat sends clear_chat; the host's clear_chat empties the transcript", () => {
  $("button.new-chat")!.click();
  assert.deepEqual(sent.at(-1), { type: "clear_chat" });
  host({ type: "clear_chat" });
  assert.equal($(".transcript")?.children.length, 0);
});

test("Send follows the host: a clear_chat during a turn does not re-enable it, turn_end does", () => {
  const send = $("button.send")!;
  host({ type: "agent_event", event: { type: "turn_start" } });
  assert.equal(send.hasAttribute("disabled"), true);
  host({ type: "clear_chat" });
  assert.equal(send.hasAttribute("disabled"), true, "the host has not said the turn ended");
  host({ type: "agent_event", event: { type: "turn_end", stopReason: "cancelled" } });
  assert.equal(send.hasAttribute("disabled"), false);
});

test("the plan's Approve / Edit / Reject answer the plan question with the offered options, and go when it is settled", () => {
  host({ type: "clear_chat" });
  host({ type: "agent_event", event: { type: "plan", entries: [{ content: "write the file", status: "pending", priority: "medium" }] } });
  assert.equal($(".plan")?.hidden, false);
  assert.equal($(".plan-controls")?.hidden, true, "no controls before a question");
  host({ type: "agent_event", event: { type: "action", id: "plan-1", tool: "Run this plan?", kind: "switch_mode", status: "pending", params: null, content: [], locations: [] } });
  const options = [
    { optionId: "run", name: "Run the plan", kind: "allow_once" as const },
    { optionId: "keep", name: "Keep planning", kind: "reject_once" as const },
  ];
  host({ type: "agent_event", event: { type: "permission_request", requestId: "perm-p", toolCallId: "plan-1", title: "Run this plan?", options } });
  const controls = [...document.querySelectorAll(".plan-controls button")] as HTMLElement[];
  assert.deepEqual(controls.map((b) => b.textContent), ["Approve", "Edit…", "Reject"]);

  const input = $("textarea.prompt") as HTMLTextAreaElement;
  input.value = "";
  controls[1].click();
  assert.deepEqual(sent.at(-1), { type: "permission_response", requestId: "perm-p", optionId: "keep" });
  assert.equal(input.value, "Change the plan: ", "Edit hands the change to the prompt box");
  assert.equal(document.activeElement, input);
  host({ type: "agent_event", event: { type: "permission_resolved", requestId: "perm-p", optionId: "keep" } });
  assert.equal($(".plan-controls")?.hidden, true);
  assert.equal($(".plan")?.hidden, false, "the plan stays shown");

  // A second question: Approve sends the allow option; an ordinary tool's question gets no plan controls.
  host({ type: "agent_event", event: { type: "permission_request", requestId: "perm-q", toolCallId: "plan-1", title: "Run this plan?", options } });
  (document.querySelector(".plan-controls button.plan-approve") as HTMLElement).click();
  assert.deepEqual(sent.at(-1), { type: "permission_response", requestId: "perm-q", optionId: "run" });
  host({ type: "agent_event", event: { type: "permission_resolved", requestId: "perm-q", optionId: "run" } });
  host({ type: "agent_event", event: { type: "action", id: "call_9", tool: "Write a.txt", kind: "edit", status: "pending", params: null, content: [], locations: [] } });
  host({ type: "agent_event", event: { type: "permission_request", requestId: "perm-r", toolCallId: "call_9", title: "Write a.txt", options } });
  assert.equal($(".plan-controls")?.hidden, true);
  input.value = "";
});

test("the composer shows the host's chips; × asks to remove one; a sent message shows what went with it", () => {
  host({ type: "clear_chat" });
  host({
    type: "attachments",
    items: [
      { id: "a1", kind: "selection", label: "src/a.ts:3-5", title: "/w/src/a.ts, lines 3-5" },
      { id: "a2", kind: "file", label: "<b>README.md</b>", title: "/w/README.md" },
    ],
  });
  const chips = [...document.querySelectorAll(".attachments .chip")] as HTMLElement[];
  assert.equal($(".attachments")?.hidden, false);
  assert.deepEqual(chips.map((c) => c.querySelector(".chip-label")?.textContent), ["src/a.ts:3-5", "<b>README.md</b>"]);
  assert.equal(document.querySelector(".attachments b"), null, "a label is text, never markup");
  (chips[1].querySelector("button.chip-remove") as HTMLElement).click();
  assert.deepEqual(sent.at(-1), { type: "remove_attachment", id: "a2" });
  host({ type: "attachments", items: [] });
  assert.equal($(".attachments")?.hidden, true);

  host({ type: "user_message", content: "Explain", attachments: ["src/a.ts:3-5"] });
  const message = [...document.querySelectorAll(".message.user")].at(-1) as HTMLElement;
  assert.equal(message.querySelector(".user-text")?.textContent, "Explain");
  assert.deepEqual([...message.querySelectorAll(".sent-attachments .chip")].map((c) => c.textContent), ["src/a.ts:3-5"]);
});

test("typing @ asks for matching files; the list shows only the current mention's answer; Enter picks, writing @path and attaching it", () => {
  const input = $("textarea.prompt") as HTMLTextAreaElement;
  const type = (value: string) => {
    input.value = value;
    input.setSelectionRange(value.length, value.length);
    input.dispatchEvent(new window.Event("input"));
  };
  type("Look at @");
  assert.deepEqual(sent.at(-1), { type: "find_files", query: "" });
  type("Look at @ma");
  assert.deepEqual(sent.at(-1), { type: "find_files", query: "ma" });
  // A late answer for an earlier query is not shown.
  host({ type: "file_matches", query: "", files: [{ path: "/w/zzz.ts", label: "zzz.ts" }] });
  assert.equal($(".mentions")?.hidden, true);
  host({
    type: "file_matches",
    query: "ma",
    files: [
      { path: "/w/src/main.ts", label: "src/main.ts" },
      { path: "/w/lib/maintenance.py", label: "lib/maintenance.py" },
    ],
  });
  assert.equal($(".mentions")?.hidden, false);
  assert.deepEqual([...document.querySelectorAll(".mentions .mention")].map((m) => m.textContent), ["src/main.ts", "lib/maintenance.py"]);
  const before = sent.length;
  input.dispatchEvent(new window.KeyboardEvent("keydown", { key: "ArrowDown", cancelable: true }));
  assert.equal($(".mentions .mention.active")?.textContent, "lib/maintenance.py");
  input.dispatchEvent(new window.KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
  assert.deepEqual(sent.slice(before), [{ type: "attach_file", path: "/w/lib/maintenance.py" }], "Enter picked the file; nothing was sent as a prompt");
  assert.equal(input.value, "Look at @lib/maintenance.py ");
  assert.equal($(".mentions")?.hidden, true);

  // A word with @ inside (an address) is no mention; Escape closes an open list.
  type("mail me@example");
  assert.equal(sent.length, before + 1, "no find_files for an address");
  type("@x");
  host({ type: "file_matches", query: "x", files: [] });
  assert.equal($(".mentions")?.textContent, "No workspace file matches “x”");
  input.dispatchEvent(new window.KeyboardEvent("keydown", { key: "Escape", cancelable: true }));
  assert.equal($(".mentions")?.hidden, true);
  input.value = "";
});

test("the MCP servers' line counts the states and lists each server; one needing the user unfolds it; New chat hides it", () => {
  const panel = $("details.mcp") as HTMLDetailsElement;
  assert.equal(panel.hidden, true, "no servers: no line");
  host({ type: "agent_event", event: { type: "mcp_servers", servers: [{ name: "github", state: "ready", tools: 12 }, { name: "docs", state: "connecting" }] } });
  assert.equal(panel.hidden, false);
  assert.equal(panel.querySelector("summary")?.textContent, "MCP: 1 ready · 1 connecting");
  assert.equal(panel.open, false);
  host({
    type: "agent_event",
    event: { type: "mcp_servers", servers: [{ name: "github", state: "ready", tools: 1 }, { name: "<i>docs</i>", state: "needs_login", message: "run `axon mcp login docs`" }] },
  });
  assert.equal(panel.querySelector("summary")?.textContent, "MCP: 1 ready · 1 needs login");
  const items = [...panel.querySelectorAll("li.mcp-server")] as HTMLElement[];
  assert.deepEqual(items.map((i) => i.dataset.state), ["ready", "needs_login"]);
  assert.equal(items[0].querySelector(".mcp-tools")?.textContent, "1 tool");
  assert.equal(items[1].querySelector(".mcp-name")?.textContent, "<i>docs</i>");
  assert.equal(panel.querySelector("i"), null, "names are text");
  assert.equal(items[1].querySelector(".mcp-message")?.textContent, "run `axon mcp login docs`");
  assert.equal(panel.open, true, "a server needing the user unfolds the list");
  host({ type: "clear_chat" });
  assert.equal(panel.hidden, true);
});

/** A paste on the prompt box, or a drop on the composer, of `files`, as the browser dispatches them. */
function give(kind: "paste" | "drop", files: File[], types = ["Files"]): Event {
  const event = new window.Event(kind, { bubbles: true, cancelable: true });
  const transfer = { files, types, dropEffect: "none" };
  Object.defineProperty(event, kind === "paste" ? "clipboardData" : "dataTransfer", { value: transfer });
  (kind === "paste" ? $("textarea.prompt") : $("footer"))!.dispatchEvent(event);
  return event;
}
/** Waits (a turn of the event loop at a time) until `check` holds. */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  assert.ok(check(), what);
}
const PNG_BYTES = Buffer.from("\x89PNG\r\n\x1a\n0000", "latin1");

test("a pasted or dropped image is read and sent to the host; its chip shows the thumbnail; other files are refused in the transcript", async () => {
  host({ type: "clear_chat" });
  const before = sent.length;
  const pasted = give("paste", [new window.File([PNG_BYTES], "shot.png", { type: "image/png" })]);
  assert.equal(pasted.defaultPrevented, true, "an image paste is the panel's");
  await until("the pasted image was sent", () => sent.length > before);
  assert.deepEqual(sent.slice(before), [{ type: "attach_image", name: "shot.png", mimeType: "image/png", data: PNG_BYTES.toString("base64") }]);
  // Text that comes with a picture of itself (a spreadsheet's cells) is a text paste.
  const text = give("paste", [new window.File([PNG_BYTES], "cells.png", { type: "image/png" })], ["text/plain", "text/html", "Files"]);
  assert.equal(text.defaultPrevented, false, "the text is pasted");
  // (Nor is its picture sent: the next message sent is the dropped image's, checked below.)

  // Dropped: a text file refused (said, not sent), the image sent.
  const dropped = give("drop", [new window.File(["hello"], "notes.txt", { type: "text/plain" }), new window.File([PNG_BYTES], "b.gif", { type: "image/gif" })]);
  assert.equal(dropped.defaultPrevented, true, "the browser does not open the file");
  await until("the dropped image was sent", () => sent.length > before + 1);
  assert.deepEqual(sent.slice(before + 1), [{ type: "attach_image", name: "b.gif", mimeType: "image/gif", data: PNG_BYTES.toString("base64") }]);
  const refusal = [...document.querySelectorAll(".line.notice")].at(-1)?.textContent ?? "";
  assert.match(refusal, /Cannot attach notes\.txt: only PNG, JPEG, GIF and WebP images can be attached \(this is text\/plain\)/);

  // The host's chip shows the image; a prompt of the image alone may go.
  const data = PNG_BYTES.toString("base64");
  host({ type: "attachments", items: [{ id: "a1", kind: "image", label: "shot.png", title: "shot.png (image/png)", image: { mimeType: "image/png", data } }] });
  assert.equal($(".attachments .chip.image img.chip-image")?.getAttribute("src"), `data:image/png;base64,${data}`);
  host({ type: "agent_event", event: { type: "turn_end", stopReason: "end_turn" } });
  const input = $("textarea.prompt") as HTMLTextAreaElement;
  input.value = "";
  input.dispatchEvent(new window.KeyboardEvent("keydown", { key: "Enter" }));
  assert.deepEqual(sent.at(-1), { type: "user_message", content: "" });

  // The user's message shows the images it sent; one that is not an image type is not drawn.
  host({ type: "user_message", content: "what is this?", attachments: ["shot.png", "x"], images: [{ mimeType: "image/png", data }, { mimeType: "text/html", data }] });
  const message = [...document.querySelectorAll(".message.user")].at(-1) as HTMLElement;
  assert.deepEqual([...message.querySelectorAll("img.sent-image")].map((i) => i.getAttribute("src")), [`data:image/png;base64,${data}`]);
  // A resumed chat's user message shows its image with its text.
  host({ type: "agent_event", event: { type: "user_text", content: "and this?" } });
  host({ type: "agent_event", event: { type: "user_image", mimeType: "image/jpeg", data } });
  const replayed = [...document.querySelectorAll(".message.user.replayed")].at(-1) as HTMLElement;
  assert.equal(replayed.textContent, "and this?");
  assert.equal(replayed.querySelector("img.sent-image")?.getAttribute("src"), `data:image/jpeg;base64,${data}`);
});
