// panel.test.ts — the first scenarios in a real VS Code: the panel opens
// (axon's session up: the mode switch filled), a prompt's answer streams
// into it as Markdown.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Workbench } from "./support/workbench";

test("the panel opens and a prompt streams an answer", async () => {
  await Workbench.run("answer", { script: [{ text: "Hello from **axon**, streamed in pieces." }] }, async (bench) => {
  const panel = await bench.openPanel();
  await bench.send("Say hello");
  await panel.locator(".message.assistant strong", { hasText: "axon" }).waitFor();
  await panel.locator(".message.assistant", { hasText: "streamed in pieces." }).waitFor();
  await bench.screenshot("answer");
  assert.deepEqual(bench.consoleProblems(), []);
  });
});
