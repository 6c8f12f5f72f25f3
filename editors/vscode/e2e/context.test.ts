// context.test.ts — the editor and the chat in a real VS Code: a tool
// call's location on its card opens the file at its line; "Add Selection to
// Chat" from the editor's context menu puts the selected lines in a chip
// that goes with the next prompt; an `@` mention in the prompt box lists
// the workspace's files as you type and the chosen one goes with the
// prompt, read by axon; the MCP servers' line shows axon's servers (its own
// MCP server ready, a missing one an error). Each checks the webview
// console for errors. Each test is its own window (workspace folder, axon
// state with its own config.toml, scripted model) on the run's shared
// code-server and Chromium (support/workbench.ts), so they run in any order.

import { test } from "node:test";
import assert from "node:assert/strict";
import { AXON_BIN, Workbench } from "./support/workbench";

const NOTES = "line one\nline two\nline three\nline four\nline five\n";

test("a tool call's location opens the file at its line", async () => {
  const script = [{ calls: [{ name: "read_file", args: { path: "notes.txt", start_line: 4 } }] }, { text: "Read the notes." }];
  await Workbench.run("location", { script, files: { "notes.txt": NOTES } }, async (bench) => {
    const panel = await bench.openPanel();
    await bench.send("Read notes.txt from line 4");
    await panel.locator(".message.assistant", { hasText: "Read the notes." }).waitFor();
    const link = panel.locator(".tool-card .tool-locations button.location", { hasText: "notes.txt:4" });
    await link.click();
    await bench.page.locator(".tabs-container .tab", { hasText: "notes.txt" }).waitFor();
    await bench.page.locator(".statusbar-item", { hasText: "Ln 4, Col 1" }).waitFor();
    await bench.screenshot("location-opened");
    assert.deepEqual(bench.consoleProblems(), []);
  });
});

test("Add Selection to Chat from the editor's context menu attaches the selected lines to the next prompt", async () => {
  const script = [{ text: "Those are lines two and three." }];
  await Workbench.run("add-selection", { script, files: { "notes.txt": NOTES } }, async (bench) => {
    const panel = await bench.openPanel();
    await bench.openFile("notes.txt");
    // Lines 2 and 3, up to the start of line 4.
    const editor = bench.page.locator(".editor-group-container.active .monaco-editor .view-lines");
    await editor.click();
    await bench.page.keyboard.press("Control+Home");
    await bench.page.keyboard.press("ArrowDown");
    await bench.page.keyboard.press("Shift+ArrowDown");
    await bench.page.keyboard.press("Shift+ArrowDown");
    await editor.locator(".view-line", { hasText: "line two" }).click({ button: "right" });
    const item = bench.page.locator(".context-view .action-item", { hasText: "axon: Add Selection to Chat" });
    await item.click();
    // The menu can drop a click that lands as it opens (seen once under
    // load: the item highlighted, the menu still open); the hovered item
    // has the focus then, and Enter runs it.
    const closed = await item.waitFor({ state: "detached", timeout: 10_000 }).then(
      () => true,
      () => false,
    );
    if (!closed) {
      await item.hover();
      await bench.page.keyboard.press("Enter");
      await item.waitFor({ state: "detached" });
    }
    const chip = panel.locator(".attachments .chip", { hasText: "notes.txt:2-3" });
    await chip.waitFor();
    await bench.screenshot("selection-chip");
    await bench.send("What do these lines say?");
    await panel.locator(".message.assistant", { hasText: "Those are lines two and three." }).waitFor();
    await panel.locator(".message.user .sent-attachments .chip", { hasText: "notes.txt:2-3" }).waitFor();
    await panel.locator(".attachments").waitFor({ state: "hidden" });
    await bench.screenshot("selection-sent");
    const request = JSON.stringify(bench.model.requests[0]);
    assert.ok(request.includes("line two\\nline three"), `the selection went to the model: ${request}`);
    assert.ok(!request.includes("line four"), "only the selected lines");
    assert.deepEqual(bench.consoleProblems(), []);
  });
});

test("an @ mention lists the workspace's files as you type; the chosen file goes with the prompt", async () => {
  const files = { "docs/kumquat.md": "The kumquat is ripe in winter.\n", "docs/other.md": "other\n", "src/main.ts": "export {};\n" };
  await Workbench.run("mention", { script: [{ text: "Kumquats ripen in winter." }], files }, async (bench) => {
    const panel = await bench.openPanel();
    const box = panel.locator("textarea.prompt");
    await box.click();
    await box.pressSequentially("When is @kum");
    const option = panel.locator(".mentions .mention", { hasText: "docs/kumquat.md" });
    await option.waitFor();
    assert.equal(await panel.locator(".mentions .mention").count(), 1, "filtered as typed");
    await bench.screenshot("mention-list");
    await box.press("Enter");
    await panel.locator(".attachments .chip", { hasText: "docs/kumquat.md" }).waitFor();
    assert.equal(await box.inputValue(), "When is @docs/kumquat.md ");
    await box.pressSequentially("ripe?");
    await box.press("Enter");
    await panel.locator(".message.assistant", { hasText: "Kumquats ripen in winter." }).waitFor();
    await bench.screenshot("mention-sent");
    const request = JSON.stringify(bench.model.requests[0]);
    assert.ok(request.includes("The kumquat is ripe in winter."), `axon read the mentioned file: ${request}`);
    assert.deepEqual(bench.consoleProblems(), []);
  });
});

test("the MCP servers' line shows each server's state, unfolded when one failed", async () => {
  // axon's own MCP server over the workspace (ready) and one that cannot start (error).
  const config = `[mcp_servers.ws]\ncommand = ${JSON.stringify(AXON_BIN)}\nargs = ["mcp", "serve", "-C", "{{WORKSPACE}}"]\nenv = { AXON_HOME = "{{AXON_HOME}}" }\nstartup_timeout_ms = 60000\n\n[mcp_servers.gone]\ncommand = "/nonexistent/axon-test-server"\n`;
  await Workbench.run("mcp", { script: [], axonConfig: config }, async (bench) => {
    const panel = await bench.openPanel();
    const line = panel.locator("details.mcp");
    await line.locator("summary", { hasText: "1 ready" }).waitFor();
    await line.locator("summary", { hasText: "1 error" }).waitFor();
    await line.locator('li.mcp-server[data-state="error"] .mcp-message', { hasText: "/nonexistent/axon-test-server" }).waitFor();
    assert.equal(await line.getAttribute("open"), "", "unfolded: a server failed");
    await bench.screenshot("mcp-servers");
    assert.deepEqual(bench.consoleProblems(), []);
  });
});
