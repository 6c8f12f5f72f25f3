// panel.test.ts — the chat panel in a real VS Code: it opens (axon's
// session up: the mode switch filled), a prompt's answer streams in as
// Markdown, Stop keeps what streamed so far, a hostile answer runs no
// script, and the chat is resumed (axon's session/load) after the window
// reloads; the model picker sends the next turn to the chosen model, and
// an earlier session is resumed from the Sessions list; a plan is approved
// from the plan panel and runs. Each checks the
// webview console for errors. Each test is its own window (workspace
// folder, axon state, scripted model) on the run's shared code-server and
// Chromium (support/workbench.ts), so they run in any order.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { HOSTILE } from "../test/support/hostile";
import { Workbench } from "./support/workbench";

test("the panel opens and a prompt streams an answer", async () => {
  await Workbench.run("answer", { script: [{ text: "Hello from **axon**, streamed in pieces." }] }, async (bench) => {
    const panel = await bench.openPanel();
    await bench.send("Say hello");
    await panel.locator(".message.user", { hasText: "Say hello" }).waitFor();
    await panel.locator(".message.assistant strong", { hasText: "axon" }).waitFor();
    await panel.locator(".message.assistant", { hasText: "streamed in pieces." }).waitFor();
    await panel.locator("button.send:not([disabled])").waitFor();
    await bench.screenshot("answer");
    assert.deepEqual(bench.consoleProblems(), []);
  });
});

test("Stop ends the turn and keeps the partial answer", async () => {
  await Workbench.run("stop", { script: [{ stall: "A partial answer, still going" }] }, async (bench) => {
    const panel = await bench.openPanel();
    await bench.send("Write a lot");
    await panel.locator(".message.assistant", { hasText: "A partial answer, still going" }).waitFor();
    await panel.locator("button.stop:not([disabled])").click();
    await panel.locator(".line.notice", { hasText: "Stopped." }).waitFor();
    await panel.locator("button.send:not([disabled])").waitFor();
    await bench.screenshot("stopped");
    assert.equal((await panel.locator(".message.assistant").textContent())?.trim(), "A partial answer, still going");
    assert.deepEqual(bench.consoleProblems(), []);
  });
});

test("a hostile answer runs no script and loads nothing", async () => {
  const answer = [...HOSTILE, "End of the hostile answer."].join("\n\n");
  await Workbench.run("hostile", { script: [{ text: answer }] }, async (bench) => {
    const panel = await bench.openPanel();
    await bench.send("Be hostile");
    await panel.locator(".message.assistant", { hasText: "End of the hostile answer." }).waitFor();
    await bench.screenshot("hostile");
    const transcript = panel.locator(".transcript");
    const found = await transcript.evaluate((root) => {
      const bad: string[] = [];
      for (const el of root.querySelectorAll("script, img, iframe, svg, math, object, embed, style, link, form")) bad.push(`<${el.tagName.toLowerCase()}>`);
      for (const el of root.querySelectorAll("*")) {
        for (const attr of el.attributes) {
          if (attr.name.startsWith("on") || attr.name === "style" || attr.name === "src") bad.push(`${el.tagName.toLowerCase()}[${attr.name}]`);
          if (attr.name === "href" && /^\s*(javascript|data|vbscript|file):/i.test(attr.value)) bad.push(`a[href=${attr.value}]`);
        }
      }
      return { bad, pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? null };
    });
    assert.deepEqual(found, { bad: [], pwned: null });
    assert.deepEqual(bench.dialogs, [], "no alert()");
    assert.deepEqual(bench.consoleProblems(), [], "no CSP violation or error");
  });
});

test("the chat is resumed after a window reload", async () => {
  const script = [{ text: "First answer, before the reload." }, { text: "Second answer, same session." }];
  await Workbench.run("resume", { script }, async (bench) => {
    let panel = await bench.openPanel();
    await bench.send("First question");
    await panel.locator(".message.assistant", { hasText: "First answer, before the reload." }).waitFor();
    await panel.locator("button.send:not([disabled])").waitFor();

    await bench.reload();
    panel = await bench.openPanel();
    // axon's session/load replays the history into the new panel.
    await panel.locator(".message.user", { hasText: "First question" }).waitFor();
    await panel.locator(".message.assistant", { hasText: "First answer, before the reload." }).waitFor();
    await bench.send("Second question");
    await panel.locator(".message.assistant", { hasText: "Second answer, same session." }).waitFor();
    await bench.screenshot("resumed");
    // The model saw the first exchange: the session went on in axon, not only on screen.
    const second = JSON.stringify(bench.model.requests[1]);
    assert.ok(second.includes("First question") && second.includes("First answer, before the reload."), second);
    assert.deepEqual(bench.consoleProblems(), []);
  });
});

test("the model picker and the sessions list", async () => {
  const script = [{ text: "Answer from model b." }, { text: "Answer in the second chat." }];
  await Workbench.run("models-sessions", { script, models: ["scripted-a", "scripted-b"] }, async (bench) => {
    const panel = await bench.openPanel();
    const picker = panel.locator("select.model");
    await picker.locator('option[value="scripted-b"]').waitFor({ state: "attached" });
    await picker.selectOption("scripted-b");
    await bench.send("First chat");
    await panel.locator(".message.assistant", { hasText: "Answer from model b." }).waitFor();
    assert.equal((bench.model.requests[0] as { model?: string }).model, "scripted-b");

    await panel.locator("button.new-chat").click();
    await panel.locator(".message").first().waitFor({ state: "detached" });
    await bench.send("Second chat");
    await panel.locator(".message.assistant", { hasText: "Answer in the second chat." }).waitFor();
    await panel.locator("button.send:not([disabled])").waitFor();

    await panel.locator("button.sessions-button").click();
    const items = panel.locator(".sessions button.session");
    await items.nth(1).waitFor();
    assert.equal(await items.count(), 2);
    await bench.screenshot("sessions-list");
    await panel.locator(".sessions button.session:not(.current)").click();
    await panel.locator(".message.user", { hasText: "First chat" }).waitFor();
    await panel.locator(".message.assistant", { hasText: "Answer from model b." }).waitFor();
    assert.equal(await panel.locator(".message.assistant", { hasText: "second chat" }).count(), 0);
    await bench.screenshot("session-resumed");
    assert.deepEqual(bench.consoleProblems(), []);
  });
});

test("plan mode: the plan is approved from the plan panel and runs", async () => {
  const steps = [{ description: "write done.txt", expected_outcome: "done.txt exists" }];
  const script = [
    { calls: [{ name: "submit_plan", args: { steps } }] },
    { calls: [{ name: "write_file", args: { path: "done.txt", content: "done\n" } }] },
    { text: "The plan ran." },
  ];
  await Workbench.run("plan", { script }, async (bench) => {
    const panel = await bench.openPanel();
    await panel.locator("select.mode").selectOption("plan");
    await bench.send("Plan and write done.txt");
    await panel.locator(".plan li", { hasText: "write done.txt" }).waitFor();
    await panel.locator(".plan-controls button.plan-approve").waitFor();
    await bench.screenshot("plan-question");
    await panel.locator(".plan-controls button.plan-approve").click();
    await panel.locator(".plan-controls").waitFor({ state: "hidden" });
    // Running the plan, the write is asked about on its own card.
    await panel.locator(".tool-card.asking button.approval.allow_once").click();
    await panel.locator(".message.assistant", { hasText: "The plan ran." }).waitFor();
    await bench.screenshot("plan-ran");
    assert.equal(fs.readFileSync(path.join(bench.workspace, "done.txt"), "utf8"), "done\n");
    assert.deepEqual(bench.consoleProblems(), []);
  });
});
