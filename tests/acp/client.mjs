// An Agent Client Protocol client built on the official TypeScript SDK
// (@agentclientprotocol/sdk, pinned in tests/peers), driving `$AXON_BIN acp`
// through one scenario:
//
//   node tests/acp/client.mjs <scenario>
//
// Environment: AXON_BIN (the axon binary), ACP_WORKSPACE (the session's cwd;
// the agent runs there), plus whatever axon itself needs (AXON_HOME,
// AXON_PROVIDER, AXON_BASE_URL, OPENAI_API_KEY), inherited by the agent.
// The model is scripted by the Rust test that runs this file
// (crates/cli/tests/it/acp_sdk.rs); each scenario below says which script and
// which workspace files it expects.
//
// What it guarantees: every message the agent writes is a JSON-RPC 2.0
// object on one line; every session/update, agent request and response is
// checked against the SDK's own zod schemas, and anything the SDK would
// reject, drop or rewrite while parsing (the SDK silently skips invalid list
// items and replaces invalid optional fields) fails the scenario, naming the
// path. Then the scenario's assertions run (node:assert/strict). On success
// it prints one JSON line summarising what it saw and exits 0; otherwise it
// prints the failure, the message log and the agent's stderr to stderr and
// exits 1. Every agent process it spawns is killed at the end, and the whole
// run is bounded (ACP_TIMEOUT_MS, default 60 s), so it cannot hang.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";

// The SDK lives in tests/peers/node_modules, which is not on this file's
// resolution path; its schemas are not in the package's public exports, so
// they are loaded from the same installed files the SDK itself uses.
const here = path.dirname(fileURLToPath(import.meta.url));
const sdkDist = path.join(here, "../peers/node_modules/@agentclientprotocol/sdk/dist/v1");
const acp = await import(pathToFileURL(path.join(sdkDist, "stable/acp.js")).href);
const schema = await import(pathToFileURL(path.join(sdkDist, "schema/zod.gen.js")).href);
// The draft schema, for what axon sends beyond the stable one: a prompt's
// answer carries the turn's token usage (`unstable_end_turn_token_usage`).
const draft = await import(pathToFileURL(path.join(sdkDist, "unstable/schema/zod.gen.js")).href);

const AXON_BIN = process.env.AXON_BIN;
const WORKSPACE = process.env.ACP_WORKSPACE;
const TIMEOUT_MS = Number(process.env.ACP_TIMEOUT_MS ?? 60_000);

/** The schema each response is checked against, by the request's method. */
const RESPONSE_SCHEMAS = {
  initialize: schema.zInitializeResponse,
  authenticate: schema.zAuthenticateResponse,
  "session/new": schema.zNewSessionResponse,
  "session/load": schema.zLoadSessionResponse,
  "session/resume": schema.zResumeSessionResponse,
  "session/list": schema.zListSessionsResponse,
  "session/close": schema.zCloseSessionResponse,
  "session/set_mode": schema.zSetSessionModeResponse,
  "session/prompt": draft.zPromptResponse,
  "session/set_config_option": schema.zSetSessionConfigOptionResponse,
};

/** The schema each request from the agent is checked against. */
const AGENT_REQUEST_SCHEMAS = {
  "session/request_permission": schema.zRequestPermissionRequest,
  "fs/read_text_file": schema.zReadTextFileRequest,
  "fs/write_text_file": schema.zWriteTextFileRequest,
};

const PERMISSION_OPTIONS = ["allow_once", "allow_always", "reject_once", "reject_always"];

/**
 * Where `parsed` (what the SDK hands an application) lost or changed
 * something `raw` (what was on the wire) said. Unknown keys count: zod
 * strips them, and ACP puts extensions in `_meta`, never beside the fields.
 */
function losses(raw, parsed, at, out) {
  if (raw === null) {
    if (parsed !== null && parsed !== undefined) out.push(`${at}: null became ${JSON.stringify(parsed)}`);
  } else if (Array.isArray(raw)) {
    if (!Array.isArray(parsed) || parsed.length !== raw.length) {
      out.push(`${at}: ${raw.length} items became ${JSON.stringify(parsed)} (invalid items are skipped)`);
      return;
    }
    raw.forEach((item, i) => losses(item, parsed[i], `${at}[${i}]`, out));
  } else if (typeof raw === "object") {
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      out.push(`${at}: became ${JSON.stringify(parsed)}`);
      return;
    }
    for (const [key, value] of Object.entries(raw)) {
      if (value === null) {
        if (parsed[key] !== null && parsed[key] !== undefined) {
          out.push(`${at}.${key}: null became ${JSON.stringify(parsed[key])}`);
        }
      } else if (!Object.hasOwn(parsed, key) || parsed[key] === undefined) {
        out.push(`${at}.${key}: ${JSON.stringify(value)} is dropped by the schema (unknown or invalid)`);
      } else {
        losses(value, parsed[key], `${at}.${key}`, out);
      }
    }
  } else if (raw !== parsed) {
    out.push(`${at}: ${JSON.stringify(raw)} became ${JSON.stringify(parsed)}`);
  }
}

/** Problems with `value` under `zodSchema`: invalid, or not kept whole. */
function check(zodSchema, value, what) {
  const result = zodSchema.safeParse(value);
  if (!result.success) {
    return [`${what} fails the ACP schema: ${result.error.message}`];
  }
  const out = [];
  losses(value, result.data, what, out);
  return out;
}

/** Splits a byte stream into lines, calling `onLine` for each. */
function lineSplitter(onLine) {
  const decoder = new TextDecoder();
  let pending = "";
  return new TransformStream({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      let newline;
      while ((newline = pending.indexOf("\n")) >= 0) {
        onLine(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
      }
      controller.enqueue(chunk);
    },
    flush() {
      pending += decoder.decode();
      if (pending.trim()) onLine(pending);
    },
  });
}

const agents = [];
const problems = [];

/** One `axon acp` process and the SDK connection to it. */
class Agent {
  constructor(label, { clientFs = false, notices = false, args = [], obsidian = false } = {}) {
    this.label = label;
    this.clientFs = clientFs;
    this.notices = notices;
    this.obsidian = obsidian;
    /** Everything received, in wire order: {seq, msg}. */
    this.log = [];
    /** Request ids sent, by id: the method. */
    this.sent = new Map();
    this.waiters = [];
    this.stderr = "";
    this.exited = null;
    this.handledUpdates = 0;
    /** Answers to the agent's requests; a scenario replaces the ones it expects. */
    this.onPermission = (params) => {
      problems.push(`${label}: unexpected permission request ${JSON.stringify(params)}`);
      return { outcome: { outcome: "cancelled" } };
    };
    this.onRead = (params) => {
      problems.push(`${label}: unexpected fs/read_text_file ${JSON.stringify(params)}`);
      throw acp.RequestError.resourceNotFound(params.path);
    };
    this.onWrite = (params) => {
      problems.push(`${label}: unexpected fs/write_text_file ${JSON.stringify(params)}`);
      throw acp.RequestError.internalError(undefined, "not expected");
    };

    assert.ok(AXON_BIN, "set AXON_BIN to the axon binary");
    assert.ok(WORKSPACE, "set ACP_WORKSPACE to the session's directory");
    this.child = spawn(AXON_BIN, ["acp", ...args], { cwd: WORKSPACE, stdio: ["pipe", "pipe", "pipe"] });
    agents.push(this);
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (text) => {
      this.stderr = (this.stderr + text).slice(-20_000);
    });
    this.child.on("exit", (code, signal) => {
      this.exited = { code, signal };
      this.wake();
    });
    this.child.on("error", (error) => problems.push(`${label}: cannot run ${AXON_BIN}: ${error.message}`));
    // stdin errors (EPIPE after the agent exits) surface as failed requests.
    this.child.stdin.on("error", () => {});

    const incoming = Readable.toWeb(this.child.stdout).pipeThrough(lineSplitter((line) => this.received(line)));
    const outgoing = lineSplitter((line) => this.sending(line));
    outgoing.readable.pipeTo(Writable.toWeb(this.child.stdin)).catch(() => {});
    const app = acp
      .client({ name: "axon-acp-test" })
      .onNotification(acp.methods.client.session.update, () => {
        this.handledUpdates += 1;
      })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => this.onPermission(params))
      .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => this.onRead(params))
      .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => this.onWrite(params));
    this.connection = app.connect(acp.ndJsonStream(outgoing.writable, incoming));
  }

  /** A line the agent wrote on stdout: recorded and checked, then the SDK reads it. */
  received(line) {
    if (!line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      problems.push(`${this.label}: stdout line is not JSON: ${line.slice(0, 300)}`);
      return;
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg) || msg.jsonrpc !== "2.0") {
      problems.push(`${this.label}: stdout line is not a JSON-RPC 2.0 message: ${line.slice(0, 300)}`);
      return;
    }
    const seq = this.log.length;
    this.log.push({ seq, msg });
    if (msg.method === "session/update" && !("id" in msg)) {
      problems.push(...check(schema.zSessionNotification, msg.params, `${this.label} #${seq} session/update`));
    } else if (msg.method !== undefined && "id" in msg) {
      const requestSchema = AGENT_REQUEST_SCHEMAS[msg.method];
      if (!requestSchema) {
        problems.push(`${this.label} #${seq}: agent sent unexpected request ${msg.method}`);
      } else {
        problems.push(...check(requestSchema, msg.params, `${this.label} #${seq} ${msg.method}`));
      }
      if (msg.method.startsWith("fs/") && !this.clientFs) {
        problems.push(`${this.label} #${seq}: ${msg.method} although the client did not offer fs`);
      }
    } else if (msg.method !== undefined) {
      problems.push(`${this.label} #${seq}: agent sent unexpected notification ${msg.method}`);
    } else if ("result" in msg) {
      const method = this.sent.get(msg.id);
      const responseSchema = RESPONSE_SCHEMAS[method];
      if (responseSchema) {
        problems.push(...check(responseSchema, msg.result, `${this.label} #${seq} ${method} result`));
      } else {
        problems.push(`${this.label} #${seq}: response to an unknown request id ${JSON.stringify(msg.id)}`);
      }
    } else if (msg.error) {
      if (msg.id === null) problems.push(`${this.label} #${seq}: the agent could not read a message the SDK sent: ${line.slice(0, 300)}`);
      const { code, message } = msg.error;
      if (!Number.isInteger(code) || typeof message !== "string") {
        problems.push(`${this.label} #${seq}: malformed error ${JSON.stringify(msg.error)}`);
      }
    } else {
      problems.push(`${this.label} #${seq}: neither request, notification nor response: ${line.slice(0, 300)}`);
    }
    this.wake();
  }

  /** A line the SDK writes to the agent: its id is remembered to check the response. */
  sending(line) {
    if (!line.trim()) return;
    const msg = JSON.parse(line);
    if (msg.method !== undefined && "id" in msg) this.sent.set(msg.id, msg.method);
  }

  wake() {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves with the first logged message (from seq `from` on) that `pred` accepts. */
  waitFor(what, pred, from = 0) {
    return new Promise((resolve, reject) => {
      const look = () => {
        const found = this.log.slice(from).find((entry) => pred(entry.msg));
        if (found) {
          this.waiters = this.waiters.filter((w) => w !== look);
          resolve(found);
        } else if (this.exited) {
          this.waiters = this.waiters.filter((w) => w !== look);
          reject(new Error(`${this.label} exited (${JSON.stringify(this.exited)}) while waiting for ${what}`));
        }
      };
      this.waiters.push(look);
      look();
    });
  }

  /**
   * Calls `method` and waits for its result; also returns the wire
   * positions bracketing the exchange (`from` before sending, `at` = the
   * response), so a scenario can pick the updates that came in between.
   */
  async call(method, params) {
    const from = this.log.length;
    const result = await this.connection.agent.request(method, params);
    const response = this.log.findLast((e) => e.seq >= from && "id" in e.msg && !e.msg.method && this.sent.get(e.msg.id) === method);
    assert.ok(response, `${method}: the SDK resolved a response the wire log does not hold`);
    return { result, from, at: response.seq };
  }

  /** The `session/update`s of `sessionId` with from <= seq < to. */
  updates(sessionId, from = 0, to = Infinity) {
    return this.log
      .filter((e) => e.seq >= from && e.seq < to && e.msg.method === "session/update" && e.msg.params?.sessionId === sessionId)
      .map((e) => ({ seq: e.seq, ...e.msg.params.update }));
  }

  /** The agent's requests of `method` with from <= seq < to. */
  requests(method, from = 0, to = Infinity) {
    return this.log.filter((e) => e.seq >= from && e.seq < to && e.msg.method === method && "id" in e.msg).map((e) => ({ seq: e.seq, ...e.msg.params }));
  }

  async initialize() {
    // Obsidian's "Agent Client" plugin (RAIT-09/obsidian-agent-client,
    // src/adapters/acp/acp.adapter.ts) sends exactly this: no file system,
    // a terminal it can host, no clientInfo.
    const params = this.obsidian
      ? {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: true },
        }
      : null;
    const { result } = await this.call(acp.methods.agent.initialize, params ?? {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {
        fs: { readTextFile: this.clientFs, writeTextFile: this.clientFs },
        terminal: false,
        ...(this.notices ? { session: { notices: {} } } : {}),
      },
      clientInfo: { name: "axon-acp-test", title: "axon ACP test client", version: "1.0.0" },
    });
    assert.equal(result.protocolVersion, 1, "initialize: protocolVersion");
    assert.equal(result.agentCapabilities?.loadSession, true, "initialize: agentCapabilities.loadSession");
    assert.equal(result.agentInfo?.name, "axon", "initialize: agentInfo.name");
    return result;
  }

  /** session/new in the workspace; checks the modes the contract lists. */
  async newSession() {
    const { result } = await this.call(acp.methods.agent.session.new, { cwd: cwd(), mcpServers: [] });
    assert.equal(typeof result.sessionId, "string");
    assert.ok(result.sessionId.length > 0, "session/new: empty sessionId");
    assert.equal(result.modes?.currentModeId, "ask", "session/new: the first mode");
    assert.deepEqual(
      result.modes.availableModes.map((m) => m.id),
      ["ask", "auto", "read-only", "plan"],
      "session/new: availableModes",
    );
    return result.sessionId;
  }

  async setMode(sessionId, modeId) {
    const { result, at } = await this.call(acp.methods.agent.session.setMode, { sessionId, modeId });
    assert.deepEqual(result, {}, "session/set_mode result");
    await this.waitFor(
      `current_mode_update ${modeId}`,
      (m) => m.method === "session/update" && m.params?.sessionId === sessionId && m.params.update?.sessionUpdate === "current_mode_update" && m.params.update.currentModeId === modeId,
      0,
    );
    return at;
  }

  /**
   * A prompt (a text, or an array of content blocks): its result and the
   * updates that came before the result.
   */
  async prompt(sessionId, text) {
    const { result, from, at } = await this.call(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: typeof text === "string" ? [{ type: "text", text }] : text,
    });
    return { result, from, at, updates: this.updates(sessionId, from, at) };
  }

  /**
   * Ends the agent now (SIGKILL, as an editor does when it drops an agent),
   * after checking that the SDK delivered every update the wire carried.
   */
  async finish() {
    if (this.finished) return;
    this.finished = true;
    // Let the SDK dispatch what it has already read.
    await new Promise((resolve) => setImmediate(resolve));
    const sent = this.log.filter((e) => e.msg.method === "session/update").length;
    if (sent !== this.handledUpdates) {
      problems.push(`${this.label}: ${sent} session/update notifications on the wire, the SDK delivered ${this.handledUpdates}`);
    }
    this.kill();
  }

  kill() {
    this.connection.close();
    if (!this.exited) this.child.kill("SIGKILL");
  }
}

/** The session's cwd: the workspace, absolute and without symlinks. */
function cwd() {
  return fs.realpathSync(WORKSPACE);
}

function inWorkspace(name) {
  return path.join(cwd(), name);
}

/** The tool calls in `updates`, by id in order of appearance, each with its updates. */
function toolCalls(updates) {
  const calls = new Map();
  for (const u of updates) {
    if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") continue;
    if (!calls.has(u.toolCallId)) {
      assert.equal(u.sessionUpdate, "tool_call", `tool call ${u.toolCallId}: its first update is a ${u.sessionUpdate}, not tool_call`);
      calls.set(u.toolCallId, { id: u.toolCallId, first: u, events: [] });
    }
    calls.get(u.toolCallId).events.push(u);
  }
  for (const call of calls.values()) {
    call.kind = call.first.kind;
    // Statuses in order; a repeated status is not a new state. A
    // tool_call without one is pending (ACP's default: the official Rust
    // schema omits it when serialising).
    call.statuses = call.events.map((e) => e.status ?? (e.sessionUpdate === "tool_call" ? "pending" : undefined)).filter((s, i, all) => s != null && s !== all.slice(0, i).findLast((x) => x != null));
    // Content replaces content (ACP): what a client shows in the end.
    call.finalContent = call.events.findLast((e) => e.content != null)?.content ?? [];
    call.texts = call.events.flatMap((e) => e.content ?? []).filter((c) => c.type === "content" && c.content?.type === "text").map((c) => c.content.text);
    call.seqOf = (status) => call.events.find((e) => (e.status ?? (e.sessionUpdate === "tool_call" ? "pending" : undefined)) === status)?.seq;
  }
  return [...calls.values()];
}

function messageText(updates, kind = "agent_message_chunk") {
  return updates
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => {
      assert.equal(u.content.type, "text", `${kind} with ${u.content.type} content`);
      return u.content.text;
    })
    .join("");
}

/** The permission request for `call`: asked while pending, answered before it runs. */
function checkAsked(agent, call, from, to) {
  const asked = agent.requests("session/request_permission", from, to).filter((r) => r.toolCall.toolCallId === call.id);
  assert.equal(asked.length, 1, `permission requests for ${call.id}`);
  const [request] = asked;
  assert.deepEqual(
    request.options.map((o) => [o.optionId, o.kind]),
    PERMISSION_OPTIONS.map((o) => [o, o]),
    "permission options",
  );
  const pending = call.seqOf("pending");
  assert.ok(pending !== undefined && pending < request.seq, `${call.id}: no pending tool_call before its permission request (pending at #${pending}, request at #${request.seq})`);
  const started = call.seqOf("in_progress");
  if (started !== undefined) assert.ok(started > request.seq, `${call.id}: in_progress before the permission request`);
  return request;
}

function notAsked(agent, call, from, to) {
  const asked = agent.requests("session/request_permission", from, to).filter((r) => r.toolCall.toolCallId === call.id);
  assert.equal(asked.length, 0, `${call.id} (${call.kind}) asked for permission`);
}

/**
 * Answers permission requests with the option of `kind`, as an editor's
 * button does (option ids are the agent's to choose), remembering what was
 * asked.
 */
function answerPermissions(agent, kind, asked) {
  agent.onPermission = (params) => {
    const option = params.options.find((o) => o.kind === kind);
    asked.push({ toolCallId: params.toolCall.toolCallId, title: params.toolCall.title, options: params.options.map((o) => [o.optionId, o.kind, o.name]), answer: option?.optionId });
    if (!option) {
      problems.push(`no ${kind} option in ${JSON.stringify(params.options)}`);
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  };
}

/** A short form of an update for the summary line. */
function brief(u) {
  const out = { type: u.sessionUpdate };
  if (u.toolCallId) out.id = u.toolCallId;
  if (u.kind) out.kind = u.kind;
  if (u.status) out.status = u.status;
  if (u.title) out.title = u.title;
  if (u.content?.type === "text") out.text = u.content.text;
  if (Array.isArray(u.content)) out.content = u.content.map((c) => c.type === "diff" ? `diff ${c.path}` : c.content?.text ?? c.type);
  if (u.currentModeId) out.mode = u.currentModeId;
  if (u.entries) out.entries = u.entries.map((e) => `${e.status}: ${e.content}`);
  if (u.availableCommands) out.commands = u.availableCommands.map((c) => c.name);
  if (u.used !== undefined) out.used = u.used;
  return out;
}

const scenarios = {
  // Obsidian through the community "Agent Client" plugin: `axon acp
  // --profile vault` in a vault, the plugin's own initialize, a note
  // written after the user allows it and read back.
  // Script: create_note {Ideas/axon.md}; read_note {Ideas/axon.md}; text "Noted.".
  async obsidian() {
    const agent = new Agent("obsidian", { args: ["--profile", "vault"], obsidian: true });
    await agent.initialize();
    const opened = await agent.call(acp.methods.agent.session.new, { cwd: cwd(), mcpServers: [] });
    const sessionId = opened.result.sessionId;
    const asked = [];
    answerPermissions(agent, "allow_once", asked);
    const turn = await agent.prompt(sessionId, "Write a note about axon");
    assert.equal(turn.result.stopReason, "end_turn");
    const calls = toolCalls(turn.updates);
    assert.deepEqual(calls.map((c) => c.kind), ["edit", "read"], "the vault's write then read");
    assert.equal(asked.length, 1, `one question, for the write: ${JSON.stringify(asked)}`);
    const note = fs.readFileSync(inWorkspace("Ideas/axon.md"), "utf8");
    assert.equal(note, "# axon\n\nAn agent for notes too.\n", "the note on disk");
    assert.ok(calls[1].texts.some((t) => t.includes("An agent for notes too.")), `read back ${JSON.stringify(calls[1].texts)}`);
    assert.equal(messageText(turn.updates), "Noted.");
    return { sessionId, agent, turns: [turn], asked };
  },
  // Script: text "Hello from the other model.". The model server lists
  // `some-model` (ModelInfo::Hosted). The client shows notices.
  async models() {
    const agent = new Agent("agent", { notices: true });
    await agent.initialize();
    const opened = await agent.call(acp.methods.agent.session.new, { cwd: cwd(), mcpServers: [] });
    const sessionId = opened.result.sessionId;
    const option = opened.result.configOptions?.find((o) => o.category === "model");
    assert.ok(option, `session/new offers no model option: ${JSON.stringify(opened.result.configOptions)}`);
    assert.equal(option.id, "model");
    assert.equal(option.type, "select");
    const values = option.options.map((o) => o.value);
    assert.ok(values.includes(option.currentValue) && values.includes("some-model"), `model values ${JSON.stringify(values)}`);

    const setModel = acp.methods.agent.session.setConfigOption;
    await assert.rejects(
      agent.call(setModel, { sessionId, configId: "model", value: "no-such-model" }),
      (e) => /does not offer `no-such-model`/.test(e.message),
      "a model the provider does not list is refused",
    );
    const set = await agent.call(setModel, { sessionId, configId: "model", value: "some-model" });
    assert.equal(set.result.configOptions[0].currentValue, "some-model", "the answer holds the new value");

    const turn = await agent.prompt(sessionId, "Say hello");
    assert.equal(turn.result.stopReason, "end_turn");
    const usage = turn.result.usage;
    assert.ok(usage && usage.inputTokens > 0 && usage.outputTokens > 0, `the answer's usage ${JSON.stringify(usage)}`);
    assert.equal(usage.totalTokens, usage.inputTokens + usage.outputTokens, "totalTokens");
    // What axon says besides the answer (the switch) is a notice, never
    // the answer's text.
    const all = agent.updates(sessionId);
    assert.ok(all.some((u) => u.sessionUpdate === "notice"), `no notice among ${JSON.stringify(all.map(brief))}`);
    assert.equal(messageText(turn.updates), "Hello from the other model.", "the answer's text");
    return { sessionId, agent, turns: [turn] };
  },

  // Script: a 503, then text "Hello after a retry.". The client declares no
  // notices (as Harbor's runner): the retry's warning is a thought, never
  // part of the answer's text.
  async retry_without_notices() {
    const agent = new Agent("agent");
    await agent.initialize();
    const sessionId = await agent.newSession();
    const turn = await agent.prompt(sessionId, "Say hello");
    assert.equal(turn.result.stopReason, "end_turn");
    assert.equal(messageText(turn.updates), "Hello after a retry.", "the answer's text alone");
    const thoughts = messageText(turn.updates, "agent_thought_chunk");
    assert.match(thoughts, /retrying/, `the retry is told as a thought: ${JSON.stringify(thoughts)}`);
    return { sessionId, agent, turns: [turn] };
  },

  // Script: read_file {path: notes.txt}; edit_file {notes.txt: hello -> goodbye};
  // shell {echo hi}; text "All done: notes.txt now says goodbye.".
  // Workspace: notes.txt = "one\nhello\nthree\n".
  async basic() {
    const agent = new Agent("agent");
    const init = await agent.initialize();
    assert.equal(init.agentInfo.title, "axon", "agentInfo.title");
    assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true, "promptCapabilities.embeddedContext");
    assert.equal(init.agentCapabilities.promptCapabilities.audio, false, "promptCapabilities.audio");
    assert.deepEqual(init.agentCapabilities.mcpCapabilities, { http: true, sse: false }, "mcpCapabilities");
    for (const capability of ["list", "resume", "close"]) {
      assert.ok(init.agentCapabilities.sessionCapabilities?.[capability], `sessionCapabilities.${capability}`);
    }
    const sessionId = await agent.newSession();
    const commands = await agent.waitFor("available_commands_update", (m) => m.params?.update?.sessionUpdate === "available_commands_update");
    const names = commands.msg.params.update.availableCommands.map((c) => c.name);
    for (const name of ["compact", "plan", "rules", "skills", "mcp"]) {
      assert.ok(names.includes(name), `available commands ${JSON.stringify(names)} lack ${name}`);
    }
    assert.equal(commands.msg.params.sessionId, sessionId);

    const asked = [];
    answerPermissions(agent, "allow_once", asked);
    const turn = await agent.prompt(sessionId, "Tidy notes.txt");
    assert.equal(turn.result.stopReason, "end_turn");
    const calls = toolCalls(turn.updates);
    assert.deepEqual(calls.map((c) => c.kind), ["read", "edit", "execute"], "tool call kinds in order");
    const [read, edit, shell] = calls;
    const notes = inWorkspace("notes.txt");

    assert.deepEqual(read.first.rawInput, { path: "notes.txt" }, "read_file rawInput");
    assert.equal(read.first.locations?.[0]?.path, notes, "read_file location");
    assert.ok(path.isAbsolute(read.first.locations[0].path));
    notAsked(agent, read, turn.from, turn.at);
    assert.deepEqual(read.statuses, ["in_progress", "completed"], "read_file statuses");
    assert.ok(read.texts.some((t) => t.includes("hello")), `read_file result ${JSON.stringify(read.texts)}`);

    checkAsked(agent, edit, turn.from, turn.at);
    assert.deepEqual(edit.statuses, ["pending", "in_progress", "completed"], "edit_file statuses");
    assert.equal(edit.first.locations?.[0]?.path, notes, "edit_file location");
    // ACP leaves open whether a diff holds the whole file or the changed
    // part (agents send either); it must hold the change, on the file.
    const diffsInUpdates = edit.events.filter((e) => e.sessionUpdate === "tool_call_update").flatMap((e) => e.content ?? []).filter((c) => c.type === "diff");
    assert.ok(diffsInUpdates.length > 0, "no tool_call_update of the edit carries a diff");
    for (const diff of diffsInUpdates) assert.equal(diff.path, notes, "the diff's path");
    assert.ok(
      diffsInUpdates.some((d) => d.oldText?.includes("hello") && !d.oldText.includes("goodbye") && d.newText.includes("goodbye") && !d.newText.includes("hello")),
      `the edit's diff ${JSON.stringify(diffsInUpdates)}`,
    );
    assert.ok(edit.finalContent.some((c) => c.type === "diff"), "the edit's final content lost its diff");

    // The command runs in the OS sandbox, so it is not asked about.
    notAsked(agent, shell, turn.from, turn.at);
    assert.deepEqual(shell.statuses, ["in_progress", "completed"], "shell statuses");
    assert.deepEqual(shell.first.rawInput, { command: "echo hi" }, "shell rawInput");
    assert.ok(shell.texts.some((t) => t.includes("hi")), `shell result ${JSON.stringify(shell.texts)}`);

    assert.equal(messageText(turn.updates), "All done: notes.txt now says goodbye.");
    const usage = turn.updates.filter((u) => u.sessionUpdate === "usage_update");
    assert.ok(usage.length > 0, "no usage_update at the end of the turn");
    assert.ok(usage.at(-1).used > 0 && usage.at(-1).size > 0, `usage ${JSON.stringify(usage.at(-1))}`);
    assert.equal(fs.readFileSync(notes, "utf8"), "one\ngoodbye\nthree\n", "notes.txt on disk");
    return { sessionId, agent, turns: [turn], asked, toolCallIds: calls.map((c) => c.id) };
  },

  // An editor's pasted image goes with the prompt as an ACP image block;
  // a corrupt one is refused with a message and the session goes on.
  // Script: text "A small gradient."; text "Still here.".
  // Workspace: shot.png (a PNG, 40x20).
  async image() {
    const agent = new Agent("agent");
    const init = await agent.initialize();
    assert.equal(init.agentCapabilities.promptCapabilities.image, true, "promptCapabilities.image");
    const sessionId = await agent.newSession();
    const data = fs.readFileSync(inWorkspace("shot.png")).toString("base64");
    const turn = await agent.prompt(sessionId, [
      { type: "text", text: "What is this?" },
      { type: "image", mimeType: "image/png", data },
    ]);
    assert.equal(turn.result.stopReason, "end_turn");
    assert.equal(messageText(turn.updates), "A small gradient.");
    // The same PNG cut short: its header is right, its pixels are missing.
    const corrupt = fs.readFileSync(inWorkspace("shot.png")).subarray(0, 60).toString("base64");
    let refused;
    try {
      refused = await agent.prompt(sessionId, [
        { type: "text", text: "And this?" },
        { type: "image", mimeType: "image/png", data: corrupt },
      ]);
    } catch (error) {
      refused = { error };
    }
    const told = refused.error?.message ?? JSON.stringify(refused.updates);
    assert.match(told, /Cannot read .*image/, `the corrupt image is not refused: ${told}`);
    const after = await agent.prompt(sessionId, "Are you there?");
    assert.equal(after.result.stopReason, "end_turn");
    assert.equal(messageText(after.updates), "Still here.");
    return { sessionId, agent, turns: [turn, after], told };
  },

  // /ps in an editor's prompt box (the VS Code panel's too) lists the
  // session's background commands without a model call.
  // Script: shell {command: "sleep <marker>", background: true}; text "Started.".
  async background() {
    const agent = new Agent("agent");
    await agent.initialize();
    const sessionId = await agent.newSession();
    const commands = await agent.waitFor("available_commands_update", (m) => m.params?.update?.sessionUpdate === "available_commands_update");
    const names = commands.msg.params.update.availableCommands.map((c) => c.name);
    assert.ok(names.includes("ps"), `available commands ${JSON.stringify(names)} lack ps`);
    const asked = [];
    answerPermissions(agent, "allow_once", asked);
    const turn = await agent.prompt(sessionId, "Start the server");
    assert.equal(turn.result.stopReason, "end_turn");
    const calls = toolCalls(turn.updates);
    assert.deepEqual(calls.map((c) => [c.kind, c.statuses.at(-1)]), [["execute", "completed"]], "the background shell call");
    assert.equal(messageText(turn.updates), "Started.");
    const ps = await agent.prompt(sessionId, "/ps");
    assert.equal(ps.result.stopReason, "end_turn");
    const listed = messageText(ps.updates);
    assert.match(listed, /^Background commands:\n {2}bg1 {2}sleep [0-9.]+ {2}\(running /, listed);
    assert.match(listed, /shell_kill/, listed);
    return { sessionId, agent, turns: [turn, ps], asked, listed };
  },

  // Script: write_file {denied.txt: "nope\n"}; text "Understood, not writing.".
  async deny() {
    const agent = new Agent("agent");
    await agent.initialize();
    const sessionId = await agent.newSession();
    const asked = [];
    answerPermissions(agent, "reject_once", asked);
    const turn = await agent.prompt(sessionId, "Write denied.txt");
    assert.equal(turn.result.stopReason, "end_turn");
    const calls = toolCalls(turn.updates);
    assert.equal(calls.length, 1, "one tool call");
    const [write] = calls;
    assert.equal(write.kind, "edit");
    checkAsked(agent, write, turn.from, turn.at);
    // Refused, it never runs: no in_progress.
    assert.deepEqual(write.statuses, ["pending", "failed"], "a refused call goes from pending to failed");
    assert.equal(fs.existsSync(inWorkspace("denied.txt")), false, "denied.txt was written");
    assert.equal(messageText(turn.updates), "Understood, not writing.");
    return { sessionId, agent, turns: [turn], asked, toolCallIds: calls.map((c) => c.id) };
  },

  // Script: Stall("Let me think about that..."); then text "Back again.".
  async cancel() {
    const agent = new Agent("agent");
    await agent.initialize();
    const sessionId = await agent.newSession();
    const from = agent.log.length;
    const pending = agent.prompt(sessionId, "Think slowly");
    await agent.waitFor("the first agent_message_chunk", (m) => m.params?.sessionId === sessionId && m.params.update?.sessionUpdate === "agent_message_chunk", from);
    await agent.connection.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    const turn = await pending;
    assert.equal(turn.result.stopReason, "cancelled");
    assert.ok(messageText(turn.updates).length > 0);
    assert.ok("Let me think about that...".startsWith(messageText(turn.updates)), `streamed ${JSON.stringify(messageText(turn.updates))}`);
    // The session still works after a cancelled turn.
    const again = await agent.prompt(sessionId, "Are you there?");
    assert.equal(again.result.stopReason, "end_turn");
    assert.equal(messageText(again.updates), "Back again.");
    return { sessionId, agent, turns: [turn, again], asked: [] };
  },

  // Script: read_file {notes.txt}; text "It says hello."; then (after the
  // load) text "Still hello.". Workspace: notes.txt = "hello\n".
  async load() {
    const first = new Agent("first");
    await first.initialize();
    const sessionId = await first.newSession();
    const prompt = "What does notes.txt say?";
    const turn = await first.prompt(sessionId, prompt);
    assert.equal(turn.result.stopReason, "end_turn");
    const [read] = toolCalls(turn.updates);
    assert.equal(read?.kind, "read");
    await first.finish();

    const second = new Agent("second");
    await second.initialize();
    const load = await second.call(acp.methods.agent.session.load, { sessionId, cwd: cwd(), mcpServers: [] });
    assert.equal(load.result.modes?.currentModeId, "ask", "session/load modes");
    const replay = second.updates(sessionId, load.from, load.at);
    const firstOf = (kind) => replay.findIndex((u) => u.sessionUpdate === kind);
    assert.ok(messageText(replay, "user_message_chunk").includes(prompt), `replayed user text ${JSON.stringify(messageText(replay, "user_message_chunk"))}`);
    const replayed = replay.filter((u) => u.sessionUpdate === "tool_call");
    assert.equal(replayed.length, 1, "replayed tool calls");
    assert.equal(replayed[0].toolCallId, read.id, "the replayed call keeps its id");
    assert.equal(replayed[0].kind, "read");
    assert.equal(replayed[0].status, "completed");
    assert.deepEqual(replayed[0].rawInput, { path: "notes.txt" });
    const replayedTexts = replay
      .filter((u) => u.toolCallId === read.id)
      .flatMap((u) => u.content ?? [])
      .filter((c) => c.type === "content")
      .map((c) => c.content.text);
    assert.ok(replayedTexts.some((t) => t.includes("hello")), `replayed result ${JSON.stringify(replayedTexts)}`);
    assert.equal(messageText(replay), "It says hello.");
    assert.ok(firstOf("user_message_chunk") < firstOf("tool_call") && firstOf("tool_call") < firstOf("agent_message_chunk"), "replay order");

    const listed = await second.call(acp.methods.agent.session.list, { cwd: cwd() });
    assert.ok(listed.result.sessions.some((s) => s.sessionId === sessionId && s.cwd === cwd()), `session/list ${JSON.stringify(listed.result)}`);

    const after = await second.prompt(sessionId, "And now?");
    assert.equal(after.result.stopReason, "end_turn");
    assert.equal(messageText(after.updates), "Still hello.");
    return { sessionId, agent: second, agents: [first, second], turns: [turn, after], replay: replay.map(brief), asked: [] };
  },

  // Script: write_file {ro.txt: "x\n"}; text "I cannot write here.".
  async read_only() {
    const agent = new Agent("agent");
    await agent.initialize();
    const sessionId = await agent.newSession();
    await agent.setMode(sessionId, "read-only");
    const turn = await agent.prompt(sessionId, "Write ro.txt");
    assert.equal(turn.result.stopReason, "end_turn");
    assert.equal(agent.requests("session/request_permission").length, 0, "read-only asked for permission");
    const calls = toolCalls(turn.updates);
    assert.equal(calls.length, 1, "one tool call");
    const [write] = calls;
    // Refused, it never runs: it ends failed without being in progress.
    assert.equal(write.statuses.at(-1), "failed", `statuses ${JSON.stringify(write.statuses)}`);
    assert.ok(!write.statuses.includes("completed") && !write.statuses.includes("in_progress"), `statuses ${JSON.stringify(write.statuses)}`);
    assert.equal(fs.existsSync(inWorkspace("ro.txt")), false, "ro.txt was written");
    assert.equal(messageText(turn.updates), "I cannot write here.");
    return { sessionId, agent, turns: [turn], asked: [], toolCallIds: calls.map((c) => c.id) };
  },

  // Script: read_file {notes.txt}; write_file {new.txt: "fresh\n"}; text "Done.".
  // Workspace: notes.txt = "DISK TEXT\n"; the editor's buffer says "BUFFER TEXT\n".
  async client_fs() {
    const agent = new Agent("agent", { clientFs: true });
    const reads = [];
    const writes = [];
    agent.onRead = (params) => {
      reads.push(params);
      if (params.path === inWorkspace("notes.txt")) return { content: "BUFFER TEXT\n" };
      // As an editor answers for a file it cannot open.
      throw acp.RequestError.resourceNotFound(params.path);
    };
    agent.onWrite = (params) => {
      writes.push(params);
      return {};
    };
    await agent.initialize();
    const sessionId = await agent.newSession();
    await agent.setMode(sessionId, "auto");
    const turn = await agent.prompt(sessionId, "Copy notes");
    assert.equal(turn.result.stopReason, "end_turn");
    assert.equal(agent.requests("session/request_permission").length, 0, "auto mode asked for permission");
    assert.ok(
      reads.some((r) => r.path === inWorkspace("notes.txt") && r.sessionId === sessionId),
      `fs/read_text_file calls ${JSON.stringify(reads)}`,
    );
    assert.deepEqual(
      writes.map((w) => ({ sessionId: w.sessionId, path: w.path, content: w.content })),
      [{ sessionId, path: inWorkspace("new.txt"), content: "fresh\n" }],
      "fs/write_text_file calls",
    );
    assert.equal(fs.existsSync(inWorkspace("new.txt")), false, "new.txt was written to disk, not through the client");
    assert.equal(fs.readFileSync(inWorkspace("notes.txt"), "utf8"), "DISK TEXT\n");
    const [read, write] = toolCalls(turn.updates);
    assert.deepEqual(read.statuses.at(-1), "completed", `read statuses ${JSON.stringify(read.statuses)}`);
    assert.ok(read.texts.some((t) => t.includes("BUFFER TEXT")), `read result ${JSON.stringify(read.texts)}`);
    assert.ok(!read.texts.some((t) => t.includes("DISK TEXT")), "the read saw the disk, not the buffer");
    assert.deepEqual(write.statuses.at(-1), "completed", `write statuses ${JSON.stringify(write.statuses)}`);
    assert.equal(messageText(turn.updates), "Done.");
    return { sessionId, agent, turns: [turn], asked: [], reads, writes };
  },

  // Script: submit_plan [inspect, change]; text "inspected"; text "changed".
  async plan() {
    const agent = new Agent("agent");
    await agent.initialize();
    const sessionId = await agent.newSession();
    await agent.setMode(sessionId, "plan");
    const asked = [];
    answerPermissions(agent, "allow_once", asked);
    const turn = await agent.prompt(sessionId, "Improve the notes");
    assert.equal(turn.result.stopReason, "end_turn");
    const plans = turn.updates.filter((u) => u.sessionUpdate === "plan");
    assert.ok(plans.length > 0, "no plan update");
    const proposed = plans[0];
    assert.equal(proposed.entries.length, 2, `plan entries ${JSON.stringify(proposed.entries)}`);
    assert.ok(proposed.entries[0].content.includes("inspect") && proposed.entries[1].content.includes("change"), `plan entries ${JSON.stringify(proposed.entries)}`);
    assert.ok(proposed.entries.every((e) => e.status === "pending"), `a proposed plan's entries are pending: ${JSON.stringify(proposed.entries)}`);
    const requests = agent.requests("session/request_permission", turn.from, turn.at);
    assert.equal(requests.length, 1, "one question to run the plan");
    assert.ok(proposed.seq < requests[0].seq, "the plan update did not come before the question");
    // One option to run it, one to keep planning (ids are the agent's).
    assert.deepEqual(requests[0].options.map((o) => o.kind).sort(), ["allow_once", "reject_once"], `options ${JSON.stringify(requests[0].options)}`);
    const ran = turn.updates.filter((u) => u.seq > requests[0].seq);
    const text = messageText(ran);
    assert.ok(text.includes("inspected") && text.indexOf("inspected") < text.indexOf("changed"), `the steps' text ${JSON.stringify(text)}`);
    const last = plans.at(-1);
    assert.ok(last.seq > requests[0].seq && last.entries.length === 2 && last.entries.every((e) => e.status === "completed"), `the last plan update ${JSON.stringify(last)}`);
    return { sessionId, agent, turns: [turn], asked };
  },
};

function summary(name, outcome) {
  const all = outcome.agents ?? [outcome.agent];
  return {
    scenario: name,
    ok: true,
    sessionId: outcome.sessionId,
    toolCallIds: outcome.toolCallIds ?? [],
    stopReasons: outcome.turns.map((t) => t.result.stopReason),
    updates: all.map((a) => ({ agent: a.label, updates: a.log.filter((e) => e.msg.method === "session/update").map((e) => brief(e.msg.params.update)) })),
    permissions: outcome.asked,
    replay: outcome.replay,
    reads: outcome.reads?.map((r) => r.path),
    writes: outcome.writes?.map((w) => ({ path: w.path, content: w.content })),
    told: outcome.told,
    listed: outcome.listed,
  };
}

function killAll() {
  for (const agent of agents) {
    try {
      agent.kill();
    } catch {
      // Already gone.
    }
  }
}

function report(error) {
  killAll();
  process.stderr.write(`FAILED: ${error?.stack ?? error}\n`);
  for (const problem of problems) process.stderr.write(`problem: ${problem}\n`);
  for (const agent of agents) {
    process.stderr.write(`--- ${agent.label}: messages received (${agent.log.length})\n`);
    for (const { seq, msg } of agent.log) process.stderr.write(`#${seq} ${JSON.stringify(msg).slice(0, 1500)}\n`);
    process.stderr.write(`--- ${agent.label}: stderr\n${agent.stderr}\n`);
  }
  process.exit(1);
}

process.on("exit", killAll);

const name = process.argv[2];
const scenario = scenarios[name];
if (!scenario) {
  process.stderr.write(`usage: client.mjs <${Object.keys(scenarios).join("|")}>\n`);
  process.exit(2);
}
const timer = setTimeout(() => report(new Error(`scenario ${name} did not finish within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
try {
  const outcome = await scenario();
  for (const agent of agents) await agent.finish();
  assert.deepEqual(problems, [], "protocol problems");
  clearTimeout(timer);
  killAll();
  process.stdout.write(`${JSON.stringify(summary(name, outcome))}\n`);
  process.exit(0);
} catch (error) {
  report(error);
}
