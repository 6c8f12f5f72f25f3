// startup.test.ts — ChatSession against an "axon" that never answers (a
// shell script that starts a child of its own and waits): startup gives up
// at its deadline, Stop and dispose end a pending startup, and stopping
// axon ends the commands it started (its whole process group).
//
// Guarantees: each test has its own directory and disposes its ChatSession;
// every wait is on a condition bounded by a deadline; the script's
// processes are checked gone at the end (SIGKILLed by the test if not, so
// a failure leaves nothing behind).

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ChatSession } from "../src/chatSession";
import { Recorder, waitFor } from "./support/recorder";

const noFiles = { roots: () => [], read: async () => "", write: async () => {} };

/** Whether `pid` is a live (not zombie) process. */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    if (fs.existsSync("/proc/self")) return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}


/** A hung "axon": records its pid and its child's (a sleep), then waits forever without a word. */
async function withHungAxon(startupTimeoutMs: number, body: (chat: ChatSession, ui: Recorder, pids: () => Promise<number[]>) => Promise<void>) {
  if (process.platform === "win32") return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-hung-"));
  const script = path.join(dir, "axon");
  const pidFile = path.join(dir, "pids");
  fs.writeFileSync(script, `#!/bin/sh\necho $$ > "${pidFile}.tmp"\nsleep 1000 &\necho $! >> "${pidFile}.tmp"\nmv "${pidFile}.tmp" "${pidFile}"\nwait\n`, { mode: 0o755 });
  const ui = new Recorder();
  const chat = new ChatSession({
    agent: { command: script, args: ["acp"], cwd: dir, env: { PATH: process.env.PATH ?? "" } },
    files: noFiles,
    post: ui.post,
    startupTimeoutMs,
  });
  const pids = () => waitFor("pid file", () => (fs.existsSync(pidFile) ? fs.readFileSync(pidFile, "utf8").trim().split("\n").map(Number) : undefined));
  try {
    await body(chat, ui, pids);
    const [shell, child] = await pids();
    await waitFor("the hung axon to be gone", () => (alive(shell) ? undefined : true));
    await waitFor("the command it started to be gone too", () => (alive(child) ? undefined : true));
  } finally {
    await chat.dispose();
    if (fs.existsSync(pidFile)) for (const pid of fs.readFileSync(pidFile, "utf8").trim().split("\n").map(Number)) if (alive(pid)) process.kill(pid, "SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test("a startup that never answers fails at its deadline with one error; the process and its children are stopped", { timeout: 30_000 }, async () => {
  await withHungAxon(500, async (chat, ui) => {
    await chat.handle({ type: "user_message", content: "hi" });
    const errors = ui.events.filter((e) => e.type === "error");
    assert.equal(errors.length, 1, JSON.stringify(ui.events));
    assert.ok(errors[0].type === "error" && errors[0].message.includes("did not answer within 0.5 s"), errors[0].type === "error" ? errors[0].message : "");
    assert.deepEqual(ui.events.at(-1), { type: "turn_end", stopReason: "error" });
  });
});

test("Stop while axon is starting stops that process at once", { timeout: 30_000 }, async () => {
  await withHungAxon(60_000, async (chat, ui, pids) => {
    const turn = chat.handle({ type: "user_message", content: "hi" });
    await pids();
    const t0 = Date.now();
    await chat.handle({ type: "cancel" });
    await turn;
    assert.ok(Date.now() - t0 < 10_000, "not the 60 s deadline");
    assert.equal(ui.events.filter((e) => e.type === "error").length, 1, JSON.stringify(ui.events));
    assert.deepEqual(ui.events.at(-1), { type: "turn_end", stopReason: "error" });
  });
});

test("New chat and dispose while axon is starting do not wait for it", { timeout: 30_000 }, async () => {
  await withHungAxon(60_000, async (chat, _ui, pids) => {
    void chat.handle({ type: "ready" });
    await pids();
    const t0 = Date.now();
    await chat.dispose();
    assert.ok(Date.now() - t0 < 10_000, "dispose did not wait for the deadline");
  });
});
