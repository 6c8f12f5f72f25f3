// mapping.test.ts — unit tests of the pure ACP → seed 002 mapping
// (src/mapping.ts) and the approval questions (src/permissions.ts), in
// plain Node: no vscode, no axon.

import { test } from "node:test";
import assert from "node:assert/strict";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { diffToLines, mapUpdate } from "../src/mapping";
import { PermissionQuestions } from "../src/permissions";
import { parseWebviewMessage, type AgentEvent } from "../src/messages";

const text = (t: string) => ({ type: "text" as const, text: t });

test("message, thought and user chunks become token, thought and user_text", () => {
  assert.deepEqual(mapUpdate({ sessionUpdate: "agent_message_chunk", content: text("Hel") }), [{ type: "token", content: "Hel" }]);
  assert.deepEqual(mapUpdate({ sessionUpdate: "agent_thought_chunk", content: text("hmm") }), [{ type: "thought", content: "hmm" }]);
  assert.deepEqual(mapUpdate({ sessionUpdate: "user_message_chunk", content: text("hi") }), [{ type: "user_text", content: "hi" }]);
  // A resumed chat's image is shown as the image.
  assert.deepEqual(mapUpdate({ sessionUpdate: "user_message_chunk", content: { type: "image", data: "AAAA", mimeType: "image/png" } }), [{ type: "user_image", mimeType: "image/png", data: "AAAA" }]);
  // Non-text blocks are described, never passed on as markup.
  assert.deepEqual(mapUpdate({ sessionUpdate: "agent_message_chunk", content: { type: "image", data: "AAAA", mimeType: "image/png" } }), [{ type: "token", content: "(image)" }]);
});

test("a tool call opens a card with kind, title, status, params, content and locations", () => {
  const update: SessionUpdate = {
    sessionUpdate: "tool_call",
    toolCallId: "call_7",
    title: "Edit notes.txt",
    kind: "edit",
    status: "pending",
    rawInput: { path: "notes.txt" },
    content: [{ type: "diff", path: "/w/notes.txt", oldText: "one\nhello\nthree\n", newText: "one\ngoodbye\nthree\n" }],
    locations: [{ path: "/w/notes.txt", line: 2 }],
  };
  assert.deepEqual(mapUpdate(update), [
    {
      type: "action",
      id: "call_7",
      tool: "Edit notes.txt",
      kind: "edit",
      status: "pending",
      params: { path: "notes.txt" },
      content: [
        {
          type: "diff",
          path: "/w/notes.txt",
          created: false,
          lines: [
            { op: " ", text: "one" },
            { op: "-", text: "hello" },
            { op: "+", text: "goodbye" },
            { op: " ", text: "three" },
          ],
          added: 1,
          removed: 1,
        },
      ],
      locations: [{ path: "/w/notes.txt", line: 2 }],
    },
  ]);
});

test("a tool call update carries only what changed", () => {
  assert.deepEqual(mapUpdate({ sessionUpdate: "tool_call_update", toolCallId: "c", status: "in_progress" }), [{ type: "observation", id: "c", status: "in_progress" }]);
  assert.deepEqual(
    mapUpdate({ sessionUpdate: "tool_call_update", toolCallId: "c", status: "completed", content: [{ type: "content", content: text("out") }] }),
    [{ type: "observation", id: "c", status: "completed", content: [{ type: "text", text: "out" }] }],
  );
  assert.deepEqual(mapUpdate({ sessionUpdate: "tool_call_update", toolCallId: "c", content: [{ type: "terminal", terminalId: "t1" }] }), [
    { type: "observation", id: "c", content: [{ type: "other", description: "terminal t1" }] },
  ]);
});

test("a new file's diff is all additions and says it is new", () => {
  const [event] = mapUpdate({ sessionUpdate: "tool_call", toolCallId: "w", title: "Write a", content: [{ type: "diff", path: "/w/a", newText: "x\ny\n" }] });
  assert.equal(event.type, "action");
  const content = (event as Extract<AgentEvent, { type: "action" }>).content[0];
  assert.deepEqual(content, { type: "diff", path: "/w/a", created: true, lines: [{ op: "+", text: "x" }, { op: "+", text: "y" }], added: 2, removed: 0 });
});

test("long unchanged runs in a diff are cut to three lines of context", () => {
  const before = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n") + "\n";
  const after = before.replace("line 10\n", "LINE TEN\n");
  const { lines, added, removed } = diffToLines(before, after);
  assert.equal(added, 1);
  assert.equal(removed, 1);
  assert.deepEqual(lines.map((l) => `${l.op}${l.text}`), [" …", " line 7", " line 8", " line 9", "-line 10", "+LINE TEN", " line 11", " line 12", " line 13", " …"]);
});

test("a huge diff is summarised, not computed", () => {
  const big = "x\n".repeat(300_000);
  const { lines, added, removed } = diffToLines(big, big + "y\n");
  assert.equal(lines.length, 1);
  assert.equal(added, 300_001);
  assert.equal(removed, 300_000);
});

test("plan, mode, usage and notice updates; unknown ones become nothing", () => {
  assert.deepEqual(mapUpdate({ sessionUpdate: "plan", entries: [{ content: "inspect", priority: "medium", status: "pending" }] }), [
    { type: "plan", entries: [{ content: "inspect", status: "pending", priority: "medium" }] },
  ]);
  assert.deepEqual(mapUpdate({ sessionUpdate: "current_mode_update", currentModeId: "auto" }), [{ type: "mode", mode: "auto" }]);
  assert.deepEqual(mapUpdate({ sessionUpdate: "usage_update", used: 100, size: 8000 }), [{ type: "usage", used: 100, size: 8000 }]);
  assert.deepEqual(mapUpdate({ sessionUpdate: "usage_update", used: 100, size: 8000, cost: { amount: 0.0123, currency: "USD" } }), [
    { type: "usage", used: 100, size: 8000, cost: { amount: 0.0123, currency: "USD" } },
  ]);
  assert.deepEqual(mapUpdate({ sessionUpdate: "notice", severity: "warning", title: "Compacted", description: "older turns summarised" }), [
    { type: "notice", level: "warning", message: "Compacted: older turns summarised" },
  ]);
  assert.deepEqual(mapUpdate({ sessionUpdate: "available_commands_update", availableCommands: [] }), []);
});

test("a permission question is settled once: by the user's offered option, or cancelled", async () => {
  const events: AgentEvent[] = [];
  const questions = new PermissionQuestions((e) => events.push(e));
  const request = {
    sessionId: "s",
    toolCall: { toolCallId: "call_1", title: "Write a" },
    options: [
      { optionId: "yes", name: "Allow", kind: "allow_once" as const },
      { optionId: "no", name: "Reject", kind: "reject_once" as const },
    ],
  };
  const first = questions.ask(request);
  const asked = events[0] as Extract<AgentEvent, { type: "permission_request" }>;
  assert.equal(asked.type, "permission_request");
  assert.equal(asked.toolCallId, "call_1");
  questions.answer(asked.requestId, "invented"); // not offered: ignored
  assert.equal(questions.openCount, 1);
  questions.answer(asked.requestId, "yes");
  questions.answer(asked.requestId, "no"); // already settled: ignored
  assert.deepEqual(await first, { outcome: { outcome: "selected", optionId: "yes" } });

  const second = questions.ask(request);
  questions.cancelAll();
  assert.deepEqual(await second, { outcome: { outcome: "cancelled" } });

  const controller = new AbortController();
  const third = questions.ask(request, controller.signal);
  controller.abort();
  assert.deepEqual(await third, { outcome: { outcome: "cancelled" } });
  assert.deepEqual(
    events.filter((e) => e.type === "permission_resolved").map((e) => (e as { optionId: string | null }).optionId),
    ["yes", null, null],
  );
  assert.equal(questions.openCount, 0);
});

test("only well-formed webview messages are accepted", () => {
  assert.deepEqual(parseWebviewMessage({ type: "user_message", content: "hi" }), { type: "user_message", content: "hi" });
  assert.deepEqual(parseWebviewMessage({ type: "set_mode", mode: "plan" }), { type: "set_mode", mode: "plan" });
  assert.deepEqual(parseWebviewMessage({ type: "cancel", extra: 1 }), { type: "cancel" });
  assert.equal(parseWebviewMessage({ type: "user_message", content: 3 }), null);
  assert.deepEqual(parseWebviewMessage({ type: "attach_image", name: "a.png", mimeType: "image/png", data: "AAAA", extra: 1 }), { type: "attach_image", name: "a.png", mimeType: "image/png", data: "AAAA" });
  assert.equal(parseWebviewMessage({ type: "attach_image", name: "a.png", mimeType: "image/png" }), null);
  assert.equal(parseWebviewMessage({ type: "agent_event", event: {} }), null);
  assert.equal(parseWebviewMessage({ type: "permission_response", requestId: "p", optionId: 5 }), null);
  assert.equal(parseWebviewMessage("cancel"), null);
  assert.deepEqual(parseWebviewMessage({ type: "open_location", path: "/w/a.ts", line: 3 }), { type: "open_location", path: "/w/a.ts", line: 3 });
  assert.deepEqual(parseWebviewMessage({ type: "open_location", path: "/w" }), { type: "open_location", path: "/w" });
  assert.deepEqual(parseWebviewMessage({ type: "find_files", query: "ma" }), { type: "find_files", query: "ma" });
  assert.deepEqual(parseWebviewMessage({ type: "attach_file", path: "/w/a" }), { type: "attach_file", path: "/w/a" });
  assert.deepEqual(parseWebviewMessage({ type: "remove_attachment", id: "a1" }), { type: "remove_attachment", id: "a1" });
  for (const bad of [{ type: "find_files" }, { type: "find_files", query: "x".repeat(1001) }, { type: "attach_file", path: 3 }, { type: "remove_attachment" }]) {
    assert.equal(parseWebviewMessage(bad), null, JSON.stringify(bad).slice(0, 80));
  }
  for (const bad of [{ path: 1 }, { path: "/w", line: 0 }, { path: "/w", line: 1.5 }, { path: "/w", line: "3" }]) {
    assert.equal(parseWebviewMessage({ type: "open_location", ...bad }), null, JSON.stringify(bad));
  }
});

test("the model picker comes from the config option of category model (groups flattened); other options give none", () => {
  const update: SessionUpdate = {
    sessionUpdate: "config_option_update",
    configOptions: [
      { id: "effort", name: "Effort", type: "select", category: "thought_level", currentValue: "low", options: [{ value: "low", name: "Low" }] },
      {
        id: "model",
        name: "Model",
        type: "select",
        category: "model",
        currentValue: "b",
        options: [
          { group: "g1", name: "One", options: [{ value: "a", name: "A", description: "first" }] },
          { group: "g2", name: "Two", options: [{ value: "b", name: "B" }] },
        ],
      },
    ],
  };
  assert.deepEqual(mapUpdate(update), [
    { type: "models", configId: "model", current: "b", available: [{ id: "a", name: "A", description: "first" }, { id: "b", name: "B", description: undefined }] },
  ]);
  assert.deepEqual(mapUpdate({ sessionUpdate: "config_option_update", configOptions: [] }), []);
  assert.deepEqual(parseWebviewMessage({ type: "set_model", configId: "model", model: "b" }), { type: "set_model", configId: "model", model: "b" });
  assert.equal(parseWebviewMessage({ type: "set_model", model: "b" }), null);
  assert.deepEqual(parseWebviewMessage({ type: "open_diff", toolCallId: "t", path: "/w/a" }), { type: "open_diff", toolCallId: "t", path: "/w/a" });
  assert.equal(parseWebviewMessage({ type: "open_diff", toolCallId: "t" }), null);
});
