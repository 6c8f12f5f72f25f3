// mcp.test.ts — the MCP servers' states the panel expects from axon
// (`_axon/mcp_servers`, src/mcp.ts): the strict parse, the panel event, and
// the wiring through AgentProcess and ChatSession for what a real axon
// does not do on cue (axon.test.ts has the real one): the agent here is a
// small ACP agent written by the test (a Node script speaking
// newline-delimited JSON-RPC on stdio) that answers initialize and
// session/new and then reports servers for another session, a malformed
// list, and the live session's list.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ChatSession } from "../src/chatSession";
import { mcpEvent, McpServersParams } from "../src/mcp";
import { Recorder } from "./support/recorder";

test("the notification is parsed strictly and becomes the panel's mcp_servers event", () => {
  const good = {
    sessionId: "s",
    servers: [
      { name: "github", state: "ready", message: null, tools: 12 },
      { name: "notes", state: "needs_login", message: "run `axon mcp login notes`" },
    ],
  };
  assert.deepEqual(mcpEvent(McpServersParams.parse(good)), {
    type: "mcp_servers",
    servers: [
      { name: "github", state: "ready", tools: 12 },
      { name: "notes", state: "needs_login", message: "run `axon mcp login notes`" },
    ],
  });
  for (const bad of [{ servers: [] }, { sessionId: "s" }, { sessionId: "s", servers: [{ name: "x" }] }, { sessionId: "s", servers: [{ name: "x", state: "ready", tools: -1 }] }]) {
    assert.equal(McpServersParams.safeParse(bad).success, false, JSON.stringify(bad));
  }
});

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-mcp-")));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** An ACP agent that reports MCP servers right after session/new answers (before the client may have taken the session as live). */
const AGENT = `
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
const servers = (sessionId, list) => send({ method: "_axon/mcp_servers", params: { sessionId, servers: list } });
let buffer = "";
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  let at;
  while ((at = buffer.indexOf("\\n")) >= 0) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.method === "initialize") send({ id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
    else if (m.method === "session/new") {
      send({ id: m.id, result: { sessionId: "sess-live" } });
      servers("sess-other", [{ name: "elsewhere", state: "ready" }]);
      servers("sess-live", [{ name: "broken" }]);
      servers("sess-live", [{ name: "github", state: "connecting" }]);
    } else if (m.method === "session/set_mode") {
      servers("sess-live", [{ name: "github", state: "error", message: "exited with code 1" }]);
      send({ id: m.id, result: {} });
    } else if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: "not here" } });
  }
});
`;

test("only the live session's servers reach the panel, also a list sent as its session/new answered", { skip: process.platform === "win32" }, async () => {
  const script = path.join(dir, "agent.cjs");
  fs.writeFileSync(script, AGENT);
  const ui = new Recorder();
  const chat = new ChatSession({
    agent: { command: process.execPath, args: [script], cwd: dir, env: { PATH: process.env.PATH ?? "" } },
    files: { roots: () => [dir], read: async () => "", write: async () => {} },
    post: ui.post,
  });
  try {
    await chat.handle({ type: "ready" });
    const first = await ui.until("the live session's servers", (e) => e.type === "mcp_servers");
    assert.deepEqual(first, { type: "mcp_servers", servers: [{ name: "github", state: "connecting" }] });
    // A change comes as the whole list again.
    const from = ui.messages.length;
    await chat.handle({ type: "set_mode", mode: "auto" });
    const changed = await ui.until("the changed list", (e) => e.type === "mcp_servers", from);
    assert.deepEqual(changed, { type: "mcp_servers", servers: [{ name: "github", state: "error", message: "exited with code 1" }] });
    const shown = ui.events.filter((e) => e.type === "mcp_servers");
    assert.ok(!JSON.stringify(shown).includes("elsewhere"), "another session's servers are not shown");
    assert.ok(!JSON.stringify(shown).includes("broken"), "a malformed list is dropped");
  } finally {
    await chat.dispose();
  }
});
