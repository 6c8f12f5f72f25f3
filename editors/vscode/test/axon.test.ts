// axon.test.ts — the extension's ACP client (ChatSession, the code the
// panel uses, minus vscode) against the REAL `axon acp` and a scripted
// OpenAI-compatible model on 127.0.0.1: the UI messages a panel receives
// for a streamed answer, an approved write (through the fs capability),
// a rejected write, and a cancelled turn.
//
// Environment: AXON_BIN (default ../../.bin/axon from editors/vscode).
// Each test has its own AXON_HOME, workspace, model and axon process, and
// disposes all of them (axon stopped, model closed, directories removed)
// however it ends. Nothing waits on time: every wait is on a condition,
// bounded by a generous deadline.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ChatSession, type ChatSessionOptions } from "../src/chatSession";
import type { FileAccess } from "../src/fileAccess";
import type * as acp from "@agentclientprotocol/sdk";
import type { AgentEvent, HostMessage, ProposedChange } from "../src/messages";
import { answerText, Recorder } from "./support/recorder";
import { ScriptedModel, type Reply } from "./support/scriptedModel";

const AXON_BIN = path.resolve(process.env.AXON_BIN ?? path.join(process.cwd(), "../../.bin/axon"));

/** Files as the editor holds them: an overlay of open buffers over the disk, writes recorded. */
class EditorFiles implements FileAccess {
  constructor(private readonly folders: string[] = []) {}
  readonly buffers = new Map<string, string>();
  readonly writes: { path: string; content: string }[] = [];
  readonly reads: string[] = [];

  roots(): readonly string[] {
    return this.folders;
  }

  async read(file: string): Promise<string> {
    this.reads.push(file);
    return this.buffers.get(file) ?? fs.promises.readFile(file, "utf8");
  }

  async write(file: string, content: string): Promise<void> {
    this.writes.push({ path: file, content });
    await fs.promises.writeFile(file, content);
  }
}

type World = {
  chat: ChatSession;
  ui: Recorder;
  files: EditorFiles;
  model: ScriptedModel;
  workspace: string;
  /** AXON_HOME (its config.toml is read when axon starts). */
  home: string;
  /** Each axon process that came up, in order. */
  started: { pid: number | undefined; sessionId: string }[];
  /** What the user was told outside the panel when axon died. */
  died: string[];
  /** What "Open diff" asked the editor to show. */
  diffsShown: ProposedChange[];
  /** Closes `chat` and opens another ChatSession (a reloaded window) on the same AXON_HOME and workspace. */
  reopen(options: Partial<ChatSessionOptions>): Promise<{ chat: ChatSession; ui: Recorder }>;
};

/** Runs `body` with a fresh model, workspace and ChatSession; tears all down after. */
async function withAxon(script: Reply[], body: (world: World) => Promise<void>, models?: string[]): Promise<void> {
  assert.ok(fs.existsSync(AXON_BIN), `no axon binary at ${AXON_BIN} (set AXON_BIN)`);
  const model = await ScriptedModel.start(script, { models });
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-home-"));
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-ws-")));
  const ui = new Recorder();
  const files = new EditorFiles([workspace]);
  let stderr = "";
  const started: World["started"] = [];
  const died: string[] = [];
  const diffsShown: ProposedChange[] = [];
  const open = (ui: Recorder, extra: Partial<ChatSessionOptions> = {}) => new ChatSession({
    agent: {
      command: AXON_BIN,
      args: ["acp"],
      cwd: workspace,
      env: {
        PATH: process.env.PATH ?? "",
        AXON_HOME: home,
        AXON_PROVIDER: "openai",
        AXON_BASE_URL: model.openaiBase,
        OPENAI_API_KEY: "sk-test-0000000000",
      },
    },
    files,
    post: ui.post,
    onStderr: (text) => {
      stderr = (stderr + text).slice(-8000);
    },
    onStarted: (pid, sessionId) => started.push({ pid, sessionId }),
    onAgentDied: (message) => died.push(message),
    openDiff: (change) => void diffsShown.push(change),
    ...extra,
  });
  let chat = open(ui);
  const reopen = async (extra: Partial<ChatSessionOptions>) => {
    await chat.dispose();
    const next = new Recorder();
    chat = open(next, extra);
    return { chat, ui: next };
  };
  try {
    await body({ chat, ui, files, model, workspace, home, started, died, diffsShown, reopen });
  } catch (error) {
    (error as Error).message += `\n--- axon stderr\n${stderr}`;
    throw error;
  } finally {
    await chat.dispose();
    await model.close();
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

type Action = Extract<AgentEvent, { type: "action" }>;
type Observation = Extract<AgentEvent, { type: "observation" }>;
type Asked = Extract<AgentEvent, { type: "permission_request" }>;

/** The statuses one tool call's card went through, in order. */
function statuses(events: AgentEvent[], id: string): string[] {
  return events
    .filter((e): e is Action | Observation => (e.type === "action" || e.type === "observation") && e.id === id)
    .flatMap((e) => (e.status ? [e.status] : []))
    .filter((s, i, all) => i === 0 || all[i - 1] !== s);
}

/** Answers each permission question with the option of `kind`. */
function answerWith(chat: ChatSession, ui: Recorder, kind: string): Asked[] {
  const asked: Asked[] = [];
  ui.listeners.push((message) => {
    if (message.type === "agent_event" && message.event.type === "permission_request") {
      const event = message.event;
      asked.push(event);
      const option = event.options.find((o) => o.kind === kind);
      assert.ok(option, `no ${kind} option among ${JSON.stringify(event.options)}`);
      void chat.handle({ type: "permission_response", requestId: event.requestId, optionId: option.optionId });
    }
  });
  return asked;
}

test("a prompt streams its answer as token events between turn_start and turn_end", async () => {
  const answer = "Hello **world**, here is `code`.";
  await withAxon([{ text: answer }], async ({ chat, ui }) => {
    await chat.handle({ type: "ready" });
    const modes = await ui.until("the session's modes", (e) => e.type === "modes");
    assert.deepEqual(modes.type === "modes" && modes.available.map((m) => m.id), ["ask", "auto", "read-only", "plan"]);
    assert.equal(modes.type === "modes" && modes.current, "ask");

    await chat.handle({ type: "user_message", content: "Say hello" });
    assert.deepEqual(ui.messages.find((m) => m.type === "user_message"), { type: "user_message", content: "Say hello" });
    const events = ui.events;
    const start = events.findIndex((e) => e.type === "turn_start");
    const end = events.findIndex((e) => e.type === "turn_end");
    assert.ok(start >= 0 && end > start, "turn_start then turn_end");
    assert.deepEqual(events[end], { type: "turn_end", stopReason: "end_turn" });
    const tokens = events.slice(start, end).filter((e) => e.type === "token");
    assert.ok(tokens.length > 1, `streamed in pieces: ${JSON.stringify(tokens)}`);
    assert.equal(answerText(events), answer);
    assert.ok(events.some((e) => e.type === "usage" && e.used > 0 && e.size > 0), "a usage event");

    // A panel that loads now is replayed the answer as one entry, not one per token.
    const replayed: AgentEvent[] = [];
    await chat.handle({ type: "ready" }, (m) => m.type === "agent_event" && replayed.push(m.event));
    assert.deepEqual(replayed.filter((e) => e.type === "token"), [{ type: "token", content: answer }]);
  });
});

test("an approved write asks on its card, goes through the editor's fs, and shows a diff", async () => {
  const script: Reply[] = [
    { calls: [{ name: "read_file", args: { path: "notes.txt" } }] },
    { calls: [{ name: "write_file", args: { path: "new.txt", content: "fresh\nlines\n" } }] },
    { text: "Wrote new.txt." },
  ];
  await withAxon(script, async ({ chat, ui, files, workspace }) => {
    fs.writeFileSync(path.join(workspace, "notes.txt"), "DISK TEXT\n");
    files.buffers.set(path.join(workspace, "notes.txt"), "BUFFER TEXT\n");
    const asked = answerWith(chat, ui, "allow_once");
    await chat.handle({ type: "user_message", content: "Copy notes" });
    const events = ui.events;
    assert.deepEqual(events.at(-1), { type: "turn_end", stopReason: "end_turn" });

    const actions = events.filter((e): e is Action => e.type === "action");
    assert.deepEqual(actions.map((a) => a.kind), ["read", "edit"], "tool calls");
    const [read, write] = actions;
    // The read saw the editor's buffer, not the disk, and was not asked about.
    assert.ok(files.reads.includes(path.join(workspace, "notes.txt")), `reads ${JSON.stringify(files.reads)}`);
    const readTexts = events.filter((e): e is Observation => e.type === "observation" && e.id === read.id).flatMap((e) => e.content ?? []);
    assert.ok(readTexts.some((c) => c.type === "text" && c.text.includes("BUFFER TEXT")), `read result ${JSON.stringify(readTexts)}`);
    assert.equal(statuses(events, read.id).at(-1), "completed");

    assert.equal(asked.length, 1, "one question");
    assert.equal(asked[0].toolCallId, write.id, "asked on the write's card");
    assert.deepEqual(asked[0].options.map((o) => o.kind).sort(), ["allow_always", "allow_once", "reject_always", "reject_once"]);
    const resolved = events.find((e) => e.type === "permission_resolved");
    assert.deepEqual(resolved, { type: "permission_resolved", requestId: asked[0].requestId, optionId: asked[0].options.find((o) => o.kind === "allow_once")!.optionId });
    assert.deepEqual(statuses(events, write.id), ["pending", "in_progress", "completed"]);

    assert.deepEqual(files.writes, [{ path: path.join(workspace, "new.txt"), content: "fresh\nlines\n" }], "written through the fs capability");
    assert.equal(fs.readFileSync(path.join(workspace, "new.txt"), "utf8"), "fresh\nlines\n");
    const diffs = events
      .filter((e): e is Action | Observation => (e.type === "action" || e.type === "observation") && e.id === write.id)
      .flatMap((e) => e.content ?? [])
      .filter((c) => c.type === "diff");
    assert.ok(diffs.length > 0, "the write's card shows a diff");
    const diff = diffs.at(-1)!;
    assert.ok(diff.type === "diff" && diff.path === path.join(workspace, "new.txt"));
    assert.deepEqual(diff.type === "diff" && diff.lines.filter((l) => l.op === "+").map((l) => l.text), ["fresh", "lines"]);
    assert.equal(answerText(events), "Wrote new.txt.");
  });
});

test("the host hears when axon asks for permission and when the turn ends", async () => {
  const script: Reply[] = [
    { calls: [{ name: "write_file", args: { path: "told.txt", content: "x\n" } }] },
    { text: "Done." },
  ];
  await withAxon(script, async ({ reopen }) => {
    const told: string[] = [];
    const { chat, ui } = await reopen({ onAttention: (message) => told.push(message) });
    answerWith(chat, ui, "allow_once");
    await chat.handle({ type: "user_message", content: "Write it" });
    assert.deepEqual(ui.events.at(-1), { type: "turn_end", stopReason: "end_turn" });
    assert.equal(told.length, 2, JSON.stringify(told));
    assert.match(told[0], /^axon needs your permission: .*told\.txt/);
    assert.equal(told[1], "axon has finished");
  });
});

test("a rejected write changes nothing and its card ends failed", async () => {
  const script: Reply[] = [{ calls: [{ name: "write_file", args: { path: "denied.txt", content: "nope\n" } }] }, { text: "Understood, not writing." }];
  await withAxon(script, async ({ chat, ui, files, workspace }) => {
    const asked = answerWith(chat, ui, "reject_once");
    await chat.handle({ type: "user_message", content: "Write denied.txt" });
    const events = ui.events;
    assert.deepEqual(events.at(-1), { type: "turn_end", stopReason: "end_turn" });
    assert.equal(asked.length, 1);
    const [write] = events.filter((e): e is Action => e.type === "action");
    assert.equal(asked[0].toolCallId, write.id);
    assert.deepEqual(statuses(events, write.id), ["pending", "failed"]);
    assert.deepEqual(files.writes, [], "nothing written through the fs capability");
    assert.equal(fs.existsSync(path.join(workspace, "denied.txt")), false);
    assert.equal(answerText(events), "Understood, not writing.");
  });
});

test("Stop cancels the turn and keeps the partial answer; the chat goes on", async () => {
  const script: Reply[] = [{ stall: "Let me think about that..." }, { text: "Back again." }];
  await withAxon(script, async ({ chat, ui }) => {
    const turn = chat.handle({ type: "user_message", content: "Think slowly" });
    await ui.until("the first token", (e) => e.type === "token");
    await chat.handle({ type: "cancel" });
    await turn;
    const events = ui.events;
    assert.deepEqual(events.at(-1), { type: "turn_end", stopReason: "cancelled" });
    const partial = answerText(events);
    assert.ok(partial.length > 0 && "Let me think about that...".startsWith(partial), `partial answer ${JSON.stringify(partial)}`);

    // A panel that loads now is replayed the partial answer.
    const replayed: unknown[] = [];
    await chat.handle({ type: "ready" }, (m) => replayed.push(m));
    assert.equal(answerText(replayed.flatMap((m) => ((m as { type: string }).type === "agent_event" ? [(m as { event: AgentEvent }).event] : []))), partial);

    const from = ui.messages.length;
    await chat.handle({ type: "user_message", content: "Are you there?" });
    assert.equal(answerText(ui.eventsFrom(from)), "Back again.");
    assert.deepEqual(ui.eventsFrom(from).at(-1), { type: "turn_end", stopReason: "end_turn" });
  });
});

test("Stop while a question is open cancels the question and writes nothing", async () => {
  const script: Reply[] = [{ calls: [{ name: "write_file", args: { path: "held.txt", content: "no\n" } }] }];
  await withAxon(script, async ({ chat, ui, files, workspace }) => {
    ui.listeners.push((message) => {
      if (message.type === "agent_event" && message.event.type === "permission_request") void chat.handle({ type: "cancel" });
    });
    await chat.handle({ type: "user_message", content: "Write held.txt" });
    const events = ui.events;
    const asked = events.find((e): e is Asked => e.type === "permission_request");
    assert.ok(asked, "the write was asked about");
    assert.deepEqual(
      events.find((e) => e.type === "permission_resolved"),
      { type: "permission_resolved", requestId: asked.requestId, optionId: null },
      "the question was settled as cancelled",
    );
    assert.deepEqual(events.at(-1), { type: "turn_end", stopReason: "cancelled" });
    assert.ok(!statuses(events, asked.toolCallId).includes("in_progress"), `statuses ${JSON.stringify(statuses(events, asked.toolCallId))}`);
    assert.deepEqual(files.writes, []);
    assert.equal(fs.existsSync(path.join(workspace, "held.txt")), false);
  });
});

test("if axon dies, the user is told and a new axon serves the next prompt", async () => {
  const script: Reply[] = [{ text: "first" }, { text: "second" }];
  await withAxon(script, async ({ chat, ui, started, died }) => {
    await chat.handle({ type: "user_message", content: "one" });
    assert.equal(answerText(ui.events), "first");
    assert.equal(started.length, 1);
    const firstPid = started[0].pid!;
    const from = ui.messages.length;
    process.kill(firstPid, "SIGKILL");
    const notice = await ui.until("the notice that axon died", (e) => e.type === "notice", from);
    assert.ok(notice.type === "notice" && notice.level === "warning" && notice.message.includes("signal SIGKILL") && notice.message.includes("restarted"), JSON.stringify(notice));
    assert.deepEqual(died, [notice.type === "notice" ? notice.message : ""]);
    // "restarted" is said once the new axon is up, not before.
    const after = ui.eventsFrom(from);
    const modesAt = after.findIndex((e) => e.type === "modes");
    assert.ok(modesAt >= 0 && modesAt < after.indexOf(notice), `the new session comes before the notice: ${JSON.stringify(after)}`);
    assert.equal(started.length, 2);
    assert.notEqual(started[1].pid, firstPid);
    assert.notEqual(started[1].sessionId, started[0].sessionId);
    assert.throws(() => process.kill(firstPid, 0), "the first axon is gone");

    const again = ui.messages.length;
    await chat.handle({ type: "user_message", content: "two" });
    assert.equal(answerText(ui.eventsFrom(again)), "second");
  });
});

test("an axon that cannot start is reported in the panel", async () => {
  const ui = new Recorder();
  const broken = new ChatSession({
    agent: { command: path.join(os.tmpdir(), "no-such-axon-binary"), args: ["acp"], cwd: os.tmpdir(), env: {} },
    files: new EditorFiles(),
    post: ui.post,
  });
  try {
    await broken.handle({ type: "user_message", content: "hi" });
    const errors = ui.events.filter((e) => e.type === "error");
    assert.equal(errors.length, 1, `exactly one error: ${JSON.stringify(errors)}`);
    const error = errors[0];
    assert.ok(error?.type === "error" && error.message.includes("axon could not start") && error.message.includes("ENOENT"), JSON.stringify(error));
    assert.deepEqual(ui.events.at(-1), { type: "turn_end", stopReason: "error" });
  } finally {
    await broken.dispose();
  }
});

test("after MAX_RESTARTS deaths in a minute axon is not restarted until the next message", async () => {
  await withAxon([{ text: "still here" }], async ({ chat, ui, started, died }) => {
    await chat.handle({ type: "ready" });
    await ui.until("the first session", (e) => e.type === "modes");
    for (let death = 1; death <= 4; death++) {
      const from = ui.messages.length;
      process.kill(started.at(-1)!.pid!, "SIGKILL");
      await ui.until(`notice ${death}`, (e) => e.type === "notice", from);
      assert.equal(started.length, death <= 3 ? death + 1 : 4, `processes after death ${death}`);
    }
    assert.equal(died.length, 4);
    assert.ok(died.slice(0, 3).every((m) => m.includes("restarted with a new session")), JSON.stringify(died));
    assert.ok(died[3].includes("4 times in a minute") && died[3].includes("not restarted"), died[3]);

    // The next message starts axon again.
    const from = ui.messages.length;
    await chat.handle({ type: "user_message", content: "hello?" });
    assert.equal(started.length, 5);
    assert.equal(answerText(ui.eventsFrom(from)), "still here");
  });
});

test("New chat during a running turn: the old turn ends first, nothing of it reaches the new chat, the next prompt runs in the new session", async () => {
  const script: Reply[] = [{ stall: "Old answer that never ends" }, { text: "New answer." }];
  await withAxon(script, async ({ chat, ui, started }) => {
    const turn = chat.handle({ type: "user_message", content: "old question" });
    await ui.until("the old turn's first token", (e) => e.type === "token");
    const cleared = chat.handle({ type: "clear_chat" });
    // The webview enables Send on turn_end; a prompt sent then (before the new session is up) must be served.
    let next: Promise<void> | null = null;
    ui.listeners.push((m) => {
      if (m.type === "agent_event" && m.event.type === "turn_end" && !next) next = chat.handle({ type: "user_message", content: "new question" });
    });
    await cleared;
    await turn;
    const clearAt = ui.messages.findIndex((m) => m.type === "clear_chat");
    assert.ok(clearAt > 0, "clear_chat was posted");
    const before = ui.messages.slice(0, clearAt).flatMap((m) => (m.type === "agent_event" ? [m.event] : []));
    assert.deepEqual(before.at(-1), { type: "turn_end", stopReason: "cancelled" }, "the old turn ended before the chat was cleared");
    assert.ok(next, "a prompt was sent when Send came back");
    await next;
    const afterClear = ui.eventsFrom(clearAt + 1);
    assert.equal(answerText(afterClear), "New answer.");
    assert.equal(afterClear.filter((e) => e.type === "turn_end").length, 1, JSON.stringify(afterClear));
    assert.equal(afterClear.filter((e) => e.type === "error").length, 0, JSON.stringify(afterClear));

    const replayed: HostMessage[] = [];
    await chat.handle({ type: "ready" }, (m) => replayed.push(m));
    assert.ok(!JSON.stringify(replayed).includes("Old answer") && !JSON.stringify(replayed).includes("old question"), JSON.stringify(replayed));
    assert.deepEqual(new Set(started.map((s) => s.pid)).size, 1, "the same axon process");
    assert.equal(new Set(started.map((s) => s.sessionId)).size, 2, "a new session, told to onStarted");
  });
});

test("updates and questions of another session (an old chat's) are dropped and answered cancelled", async () => {
  await withAxon([], async ({ chat, ui }) => {
    await chat.handle({ type: "ready" });
    await ui.until("the session", (e) => e.type === "modes");
    const from = ui.messages.length;
    // What the ACP connection hands the session (the same handlers AgentProcess calls).
    const handlers = chat as unknown as {
      onUpdate(n: acp.SessionNotification): void;
      askPermission(r: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse>;
    };
    handlers.onUpdate({ sessionId: "some-old-session", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "stale" } } });
    const answer = await handlers.askPermission(
      {
        sessionId: "some-old-session",
        toolCall: { toolCallId: "call_old", title: "Write old.txt" },
        options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }],
      },
      new AbortController().signal,
    );
    assert.deepEqual(answer, { outcome: { outcome: "cancelled" } });
    assert.deepEqual(ui.messages.slice(from), [], "nothing shown");
  });
});

test("Open diff hands the editor the change axon proposed, while it is asked and before anything is written", async () => {
  const script: Reply[] = [{ calls: [{ name: "write_file", args: { path: "shown.txt", content: "proposed\n" } }] }, { text: "Not written." }];
  await withAxon(script, async ({ chat, ui, workspace, diffsShown }) => {
    const target = path.join(workspace, "shown.txt");
    ui.listeners.push((message) => {
      if (message.type !== "agent_event" || message.event.type !== "permission_request") return;
      const { requestId, toolCallId, options } = message.event;
      void (async () => {
        await chat.handle({ type: "open_diff", toolCallId, path: "/not/a/proposed/path" });
        await chat.handle({ type: "open_diff", toolCallId, path: target });
        assert.equal(fs.existsSync(target), false, "looking wrote nothing");
        await chat.handle({ type: "permission_response", requestId, optionId: options.find((o) => o.kind === "reject_once")!.optionId });
      })();
    });
    await chat.handle({ type: "user_message", content: "Write shown.txt" });
    assert.equal(diffsShown.length, 1, "only a change axon proposed is shown");
    assert.deepEqual({ ...diffsShown[0], toolCallId: "" }, { toolCallId: "", path: target, oldText: null, newText: "proposed\n" });
    assert.equal(fs.existsSync(target), false);
  });
});

test("a reopened chat resumes the last session: its history is replayed and the model sees it", async () => {
  const script: Reply[] = [{ text: "First answer." }, { text: "Second answer." }];
  await withAxon(script, async ({ chat, ui, model, started, reopen }) => {
    await chat.handle({ type: "user_message", content: "First question" });
    assert.equal(answerText(ui.events), "First answer.");
    const last = started.at(-1)!.sessionId;

    const again = await reopen({ resumeSessionId: last });
    await again.chat.handle({ type: "ready" });
    assert.equal(started.at(-1)!.sessionId, last, "the same session is live again");
    const replayed = again.ui.events;
    assert.ok(replayed.some((e) => e.type === "user_text" && e.content.includes("First question")), JSON.stringify(replayed));
    assert.equal(answerText(replayed), "First answer.");
    await again.chat.handle({ type: "user_message", content: "Second question" });
    assert.ok(JSON.stringify(model.requests[1]).includes("First answer."), "the model saw the first exchange");
  });
});

test("a resumed session's cost goes on from what it spent: the panel hears it before anything is said", async () => {
  await withAxon([{ text: "First answer." }], async ({ chat, ui, home, started, reopen }) => {
    // The preset's model, priced: each scripted call (12 input, 7 output
    // tokens) costs $0.026.
    fs.writeFileSync(path.join(home, "config.toml"), '[prices."gpt-4.1"]\ninput = 1000.0\noutput = 2000.0\n');
    await chat.handle({ type: "user_message", content: "First question" });
    const spent = await ui.until("the turn's usage with its cost", (e) => e.type === "usage" && e.cost !== undefined);
    assert.ok(spent.type === "usage" && Math.abs(spent.cost!.amount - 0.026) < 1e-9, JSON.stringify(spent));
    const last = started.at(-1)!.sessionId;

    const again = await reopen({ resumeSessionId: last });
    await again.chat.handle({ type: "ready" });
    const resumed = await again.ui.until("the resumed session's usage", (e) => e.type === "usage");
    assert.ok(
      resumed.type === "usage" && resumed.cost !== undefined && Math.abs(resumed.cost.amount - 0.026) < 1e-9,
      JSON.stringify(again.ui.events),
    );
  });
});

test("a session that cannot be resumed gives a new one and says why", async () => {
  await withAxon([{ text: "Fresh." }], async ({ chat, started, reopen }) => {
    await chat.handle({ type: "ready" });
    const again = await reopen({ resumeSessionId: "no-such-session-0000" });
    await again.chat.handle({ type: "user_message", content: "Hi" });
    const notice = again.ui.events.find((e) => e.type === "notice");
    assert.ok(notice && notice.type === "notice" && notice.message.includes("no-such-session-0000"), JSON.stringify(again.ui.events));
    assert.notEqual(started.at(-1)!.sessionId, "no-such-session-0000");
    assert.equal(answerText(again.ui.events), "Fresh.");
  });
});

test("the model picker: axon's `model` config option is offered, and choosing one sends the next turn to it", async () => {
  await withAxon(
    [{ text: "From model b." }],
    async ({ chat, ui, model }) => {
      await chat.handle({ type: "ready" });
      const offered = await ui.until("the model picker's choices", (e) => e.type === "models");
      assert.ok(offered.type === "models");
      assert.ok(offered.available.some((m) => m.id === "scripted-b"), JSON.stringify(offered));
      const from = ui.messages.length;
      await chat.handle({ type: "set_model", configId: offered.configId, model: "scripted-b" });
      const chosen = await ui.until("the new current model", (e) => e.type === "models", from);
      assert.equal(chosen.type === "models" && chosen.current, "scripted-b");
      await chat.handle({ type: "user_message", content: "Hi" });
      assert.equal((model.requests[0] as { model?: string }).model, "scripted-b");

      // A model the provider does not list is refused, and said so.
      const before = ui.messages.length;
      await chat.handle({ type: "set_model", configId: offered.configId, model: "no-such-model" });
      const refused = ui.eventsFrom(before).find((e) => e.type === "error");
      assert.ok(refused && refused.type === "error" && refused.message.includes("no-such-model"), JSON.stringify(ui.eventsFrom(before)));
    },
    ["scripted-a", "scripted-b"],
  );
});

test("sessions: listed newest first, an earlier one resumed in place of the current chat (history replayed, the model sees it), New chat after", async () => {
  const script: Reply[] = [{ text: "First answer." }, { text: "Second answer." }, { text: "Third answer." }];
  await withAxon(script, async ({ chat, ui, model, started }) => {
    await chat.handle({ type: "user_message", content: "First question" });
    const first = started.at(-1)!.sessionId;
    await chat.handle({ type: "clear_chat" });
    await chat.handle({ type: "user_message", content: "Second question" });
    const second = started.at(-1)!.sessionId;
    assert.notEqual(first, second);

    let from = ui.messages.length;
    await chat.handle({ type: "list_sessions" });
    const listed = await ui.until("the sessions list", (e) => e.type === "sessions", from);
    assert.ok(listed.type === "sessions");
    assert.equal(listed.current, second);
    assert.deepEqual(listed.sessions.map((s) => s.id), [second, first], "newest first");

    from = ui.messages.length;
    await chat.handle({ type: "resume_session", sessionId: first });
    assert.deepEqual(ui.messages[from], { type: "clear_chat" }, "the panel is cleared first");
    const replayed = ui.eventsFrom(from);
    assert.ok(replayed.some((e) => e.type === "user_text" && e.content.includes("First question")), JSON.stringify(replayed));
    assert.equal(answerText(replayed), "First answer.");
    assert.equal(started.at(-1)!.sessionId, first);
    await chat.handle({ type: "user_message", content: "Third question" });
    const third = JSON.stringify(model.requests[2]);
    assert.ok(third.includes("First answer.") && !third.includes("Second answer."), third);

    // The list is an answer, not part of the chat: a panel that loads is not shown it again.
    const again: HostMessage[] = [];
    await chat.handle({ type: "ready" }, (m) => again.push(m));
    assert.ok(!again.some((m) => m.type === "agent_event" && m.event.type === "sessions"));
  });
});

test("plan mode: the plan is shown and its question is asked on a switch_mode card; approving runs it", async () => {
  const steps = [{ description: "write done.txt", expected_outcome: "done.txt exists" }];
  const script: Reply[] = [
    { calls: [{ name: "submit_plan", args: { steps } }] },
    { calls: [{ name: "write_file", args: { path: "done.txt", content: "done\n" } }] },
    { text: "The plan ran." },
  ];
  await withAxon(script, async ({ chat, ui, workspace }) => {
    await chat.handle({ type: "set_mode", mode: "plan" });
    ui.listeners.push((message) => {
      if (message.type !== "agent_event" || message.event.type !== "permission_request") return;
      const option = message.event.options.find((o) => o.kind === "allow_once");
      void chat.handle({ type: "permission_response", requestId: message.event.requestId, optionId: option!.optionId });
    });
    await chat.handle({ type: "user_message", content: "Plan and write done.txt" });
    const events = ui.events;
    const plan = events.find((e) => e.type === "plan");
    assert.ok(plan && plan.type === "plan" && plan.entries.some((e) => e.content.includes("write done.txt")), JSON.stringify(events));
    const asked = events.filter((e): e is Asked => e.type === "permission_request");
    const card = events.find((e): e is Action => e.type === "action" && e.id === asked[0]?.toolCallId);
    assert.equal(card?.kind, "switch_mode", "the plan question's card");
    assert.ok(fs.existsSync(path.join(workspace, "done.txt")), "the approved plan ran");
  });
});

test("attachments: a selection goes as an embedded resource and a mentioned file as a resource_link; the model sees both, the chips go", async () => {
  await withAxon([{ text: "Seen both." }], async ({ chat, ui, model, workspace }) => {
    fs.mkdirSync(path.join(workspace, "src"));
    fs.writeFileSync(path.join(workspace, "src", "kumquat notes.md"), "The kumquat is ripe.\n");
    fs.writeFileSync(path.join(workspace, "a.ts"), "one\nconst persimmon = 2;\nthree\n");
    await chat.handle({ type: "ready" });

    assert.equal(chat.addSelection({ path: path.join(workspace, "a.ts"), label: "a.ts", startLine: 2, endLine: 2, text: "const persimmon = 2;" }), null);
    await chat.handle({ type: "attach_file", path: path.join(workspace, "src", "kumquat notes.md") });
    // A file outside the workspace, or a folder, is refused with a notice and not attached.
    await chat.handle({ type: "attach_file", path: "/etc/hostname" });
    await chat.handle({ type: "attach_file", path: path.join(workspace, "src") });
    const chips = ui.messages.filter((m): m is Extract<HostMessage, { type: "attachments" }> => m.type === "attachments");
    assert.deepEqual(chips.at(-1)?.items.map((c) => c.label), ["a.ts:2", "src/kumquat notes.md"]);
    const refusals = ui.events.filter((e) => e.type === "notice").map((e) => (e.type === "notice" ? e.message : ""));
    assert.equal(refusals.length, 2, JSON.stringify(refusals));
    assert.ok(refusals[0].includes("/etc/hostname") && refusals[0].includes("outside"), refusals[0]);
    assert.ok(refusals[1].includes("not a file"), refusals[1]);

    await chat.handle({ type: "user_message", content: "Compare these" });
    assert.deepEqual(ui.messages.find((m) => m.type === "user_message"), { type: "user_message", content: "Compare these", attachments: ["a.ts:2", "src/kumquat notes.md"] });
    assert.deepEqual(ui.messages.filter((m) => m.type === "attachments").at(-1), { type: "attachments", items: [] }, "the prompt took the chips");
    assert.equal(answerText(ui.events), "Seen both.");
    const request = JSON.stringify(model.requests[0]);
    assert.ok(request.includes("const persimmon = 2;"), `the selection reached the model: ${request}`);
    assert.ok(request.includes("The kumquat is ripe."), `axon read the linked file: ${request}`);
    assert.ok(request.includes("Compare these"), request);
  });
});

test("MCP servers: axon reports each server's state to the panel (_axon/mcp_servers, asked for in the capabilities), the whole list at each change", async () => {
  await withAxon([], async ({ chat, ui, home, workspace }) => {
    // axon's own MCP server (becomes ready) and one that cannot start (error).
    fs.writeFileSync(
      path.join(home, "config.toml"),
      `[mcp_servers.ws]\ncommand = ${JSON.stringify(AXON_BIN)}\nargs = ["mcp", "serve", "-C", ${JSON.stringify(workspace)}]\nenv = { AXON_HOME = ${JSON.stringify(home)} }\nstartup_timeout_ms = 60000\n\n[mcp_servers.gone]\ncommand = "/nonexistent/axon-test-server"\n`,
    );
    await chat.handle({ type: "ready" });
    const settled = await ui.until("both servers settled", (e) => {
      if (e.type !== "mcp_servers") return false;
      const state = (name: string) => e.servers.find((s) => s.name === name)?.state;
      return state("ws") === "ready" && state("gone") === "error";
    });
    assert.ok(settled.type === "mcp_servers");
    const gone = settled.servers.find((s) => s.name === "gone");
    assert.ok(gone?.message && gone.message.length > 0, `the error says why: ${JSON.stringify(settled)}`);
    const lists = ui.events.filter((e) => e.type === "mcp_servers");
    assert.ok(lists.length >= 2, "a first list as the session opened, then the changes");
    assert.ok(lists.every((l) => l.type === "mcp_servers" && l.servers.length === 2), JSON.stringify(lists));
  });
});

/** A whole 1×1 PNG, base64. */
const DOT_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

test("images: a pasted image goes as an ACP image block the model sees, and the user's message carries it", async () => {
  await withAxon([{ text: "A dot." }], async ({ chat, ui, model }) => {
    await chat.handle({ type: "ready" });
    await chat.handle({ type: "attach_image", name: "dot.png", mimeType: "image/png", data: DOT_PNG });
    const chips = ui.messages.filter((m): m is Extract<HostMessage, { type: "attachments" }> => m.type === "attachments");
    assert.deepEqual(chips.at(-1)?.items, [{ id: "a1", kind: "image", label: "dot.png", title: "dot.png (image/png)", image: { mimeType: "image/png", data: DOT_PNG } }]);
    await chat.handle({ type: "user_message", content: "What is this?" });
    assert.deepEqual(ui.messages.find((m) => m.type === "user_message"), {
      type: "user_message",
      content: "What is this?",
      attachments: ["dot.png"],
      images: [{ mimeType: "image/png", data: DOT_PNG }],
    });
    assert.equal(answerText(ui.events), "A dot.");
    const request = JSON.stringify(model.requests[0]);
    assert.ok(request.includes(`data:image/png;base64,${DOT_PNG}`), `the model was sent the image: ${request}`);
    assert.ok(request.includes("What is this?"), request);
  });
});

test("images: with a model that takes none (axon offers no image prompts), an image is not attached and the panel says why", async () => {
  await withAxon([{ text: "Text only." }], async ({ chat, ui, model, home }) => {
    fs.writeFileSync(path.join(home, "config.toml"), `model = "gpt-3.5-turbo"\n`);
    await chat.handle({ type: "ready" });
    await chat.handle({ type: "attach_image", name: "dot.png", mimeType: "image/png", data: DOT_PNG });
    const notices = ui.events.filter((e) => e.type === "notice").map((e) => (e.type === "notice" ? e.message : ""));
    assert.ok(notices.some((n) => n.includes("dot.png") && n.includes("does not take images")), JSON.stringify(notices));
    assert.equal(ui.messages.filter((m) => m.type === "attachments").length, 0, "no chip");
    await chat.handle({ type: "user_message", content: "Hello" });
    assert.ok(!JSON.stringify(model.requests[0]).includes("image"), "no image went");
  });
});
