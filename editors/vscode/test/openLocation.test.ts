// openLocation.test.ts — a tool call's location link (`open_location` from
// the panel) through ChatSession, the host's code minus vscode: a place
// inside a workspace folder reaches the editor resolved, with its line;
// anything else is refused with a notice naming it and never reaches the
// editor. No axon is started: the link needs none.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ChatSession } from "../src/chatSession";
import { parseWebviewMessage } from "../src/messages";
import { Recorder } from "./support/recorder";

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-loc-")));
const root = path.join(base, "ws");
fs.mkdirSync(path.join(root, "src"), { recursive: true });
fs.writeFileSync(path.join(root, "src", "a.ts"), "one\ntwo\n");
fs.mkdirSync(path.join(base, "outside"));
fs.symlinkSync(path.join(base, "outside"), path.join(root, "out"));
after(() => fs.rmSync(base, { recursive: true, force: true }));

test("open_location opens a place inside the workspace at its line, and refuses any other", async () => {
  const opened: [string, number | undefined][] = [];
  const ui = new Recorder();
  const chat = new ChatSession({
    // Never started: opening a link needs no axon.
    agent: { command: path.join(base, "no-axon-here"), args: ["acp"], cwd: root, env: {} },
    files: { roots: () => [root], read: async () => "", write: async () => {} },
    post: ui.post,
    openLocation: (file, line) => void opened.push([file, line]),
  });
  const open = async (raw: unknown) => {
    const message = parseWebviewMessage(raw);
    assert.ok(message, JSON.stringify(raw));
    await chat.handle(message);
  };
  await open({ type: "open_location", path: path.join(root, "src", "..", "src", "a.ts"), line: 2 });
  await open({ type: "open_location", path: path.join(root, "src") });
  assert.deepEqual(opened, [
    [path.join(root, "src", "a.ts"), 2],
    [path.join(root, "src"), undefined],
  ]);
  assert.equal(ui.events.length, 0, "nothing said for a good link");

  await open({ type: "open_location", path: "/etc/passwd", line: 1 });
  await open({ type: "open_location", path: path.join(root, "out", "x.txt") });
  await open({ type: "open_location", path: "src/a.ts" });
  assert.equal(opened.length, 2, "a refused place never reaches the editor");
  const notices = ui.events.map((e) => (e.type === "notice" ? e.message : JSON.stringify(e)));
  assert.equal(notices.length, 3, JSON.stringify(notices));
  assert.ok(notices[0].includes("/etc/passwd") && notices[0].includes("outside the workspace folders"), notices[0]);
  assert.ok(notices[1].includes(path.join(base, "outside", "x.txt")), notices[1]);
  assert.ok(notices[2].includes("not an absolute path"), notices[2]);

  // An editor that cannot open it (a file gone meanwhile) is reported, not thrown.
  const failing = new ChatSession({
    agent: { command: path.join(base, "no-axon-here"), args: ["acp"], cwd: root, env: {} },
    files: { roots: () => [root], read: async () => "", write: async () => {} },
    post: ui.post,
    openLocation: async () => {
      throw new Error("no such file");
    },
  });
  await failing.handle({ type: "open_location", path: path.join(root, "src", "a.ts"), line: 9 });
  const last = ui.events.at(-1);
  assert.ok(last?.type === "notice" && last.message.includes("no such file"), JSON.stringify(last));
  await chat.dispose();
  await failing.dispose();
});
