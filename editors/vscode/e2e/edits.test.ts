// edits.test.ts — axon's writes in a real VS Code: an edit to an open file
// is looked at in VS Code's diff editor ("Open diff") before it is allowed,
// lands in the editor's buffer (and on disk, saved) and is undone by Undo; a
// denied write changes nothing; read-only mode refuses a write without
// asking. Each checks the webview console for errors. Each test is its own
// window (workspace folder, axon state, scripted model) on the run's shared
// code-server and Chromium (support/workbench.ts), so they run in any order.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { waitFor, Workbench } from "./support/workbench";

const ORIGINAL = "alpha\nbeta\ngamma\n";
const edit = { calls: [{ name: "edit_file", args: { path: "notes.txt", old_str: "beta", new_str: "BETA from axon" } }] };

test("an edit is approved after its diff is seen, lands in the buffer, and Undo takes it back", async () => {
  await Workbench.run("edit-approved", { script: [edit, { text: "Edited notes.txt." }], files: { "notes.txt": ORIGINAL } }, async (bench) => {
    const file = path.join(bench.workspace, "notes.txt");
    await bench.openFile("notes.txt");
    const panel = await bench.openPanel();
    await bench.send("Change beta");

    // The question is on the card, with the red/green diff and "Open diff".
    const card = panel.locator(".tool-card.asking");
    await card.locator(".diff-lines .add", { hasText: "BETA from axon" }).waitFor();
    await card.locator("button.open-diff").click();
    const diff = bench.page.locator(".monaco-diff-editor");
    await diff.locator(".editor.modified .view-lines", { hasText: "BETA from axon" }).waitFor();
    await diff.locator(".editor.original .view-lines", { hasText: "beta" }).waitFor();
    await bench.page.locator(".tabs-container .tab", { hasText: "proposed change" }).waitFor();
    await bench.screenshot("edit-diff-editor");
    assert.equal(fs.readFileSync(file, "utf8"), ORIGINAL, "looking at the diff wrote nothing");

    await card.locator("button.approval.allow_once").click();
    await panel.locator(".message.assistant", { hasText: "Edited notes.txt." }).waitFor();
    await panel.locator('.tool-card[data-status="completed"]').waitFor();
    await waitFor("the edit on disk (saved)", () => fs.readFileSync(file, "utf8").includes("BETA from axon"));

    // The change is in the editor's buffer, as one step of its undo history.
    await bench.page.locator(".tabs-container .tab", { hasText: "notes.txt" }).filter({ hasNotText: "proposed" }).click();
    await waitFor("the edit in the editor", async () => (await bench.editorText()).includes("BETA from axon"));
    await bench.screenshot("edit-approved");
    await bench.page.locator(".editor-group-container.active .monaco-editor .view-lines").click();
    await bench.page.keyboard.press("Control+Z");
    await bench.screenshot("edit-undone");
    await waitFor("Undo to take the edit back", async () => (await bench.editorText()) === ORIGINAL);
    assert.deepEqual(bench.consoleProblems(), []);
  });
});

test("a denied write changes nothing", async () => {
  const script = [edit, { text: "Understood, leaving it." }];
  await Workbench.run("edit-denied", { script, files: { "notes.txt": ORIGINAL } }, async (bench) => {
    const file = path.join(bench.workspace, "notes.txt");
    await bench.openFile("notes.txt");
    const panel = await bench.openPanel();
    await bench.send("Change beta");
    await panel.locator(".tool-card.asking button.approval.reject_once").click();
    await panel.locator(".message.assistant", { hasText: "Understood, leaving it." }).waitFor();
    await panel.locator(".tool-card.asking").waitFor({ state: "detached" });
    await bench.screenshot("edit-denied");
    assert.equal(fs.readFileSync(file, "utf8"), ORIGINAL);
    assert.equal(await bench.editorText(), ORIGINAL);
    assert.equal(bench.model.remaining, 0);
    assert.deepEqual(bench.consoleProblems(), []);
  });
});

test("read-only mode refuses a write without asking", async () => {
  const script = [{ calls: [{ name: "write_file", args: { path: "new.txt", content: "should not exist\n" } }] }, { text: "I cannot write in read-only mode." }];
  await Workbench.run("read-only", { script }, async (bench) => {
    const panel = await bench.openPanel();
    await panel.locator("select.mode").selectOption("read-only");
    await bench.send("Create new.txt");
    await panel.locator(".message.assistant", { hasText: "cannot write" }).waitFor();
    await bench.screenshot("read-only");
    assert.equal(await panel.locator("button.approval").count(), 0, "nothing was asked");
    assert.equal(await panel.locator('.tool-card[data-status="completed"]').count(), 0, "no tool call succeeded");
    assert.equal(fs.existsSync(path.join(bench.workspace, "new.txt")), false);
    assert.deepEqual(bench.consoleProblems(), []);
  });
});
