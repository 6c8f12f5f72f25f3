// bundled.test.ts — the platform-specific .vsix with axon inside, in a real
// VS Code: built by scripts/package.mjs (--target linux-x64, AXON_BUNDLE_BIN
// the axon under test), installed with no `axon.path` setting and no axon
// on PATH, the chat answers, and the axon that runs is the bundled one
// (its executable is bin/axon in the installed extension). Checks the
// webview console for errors. Another .vsix and no `axon.path`: the test
// gets a code-server of its own (support/workbench.ts), in the run's shared
// Chromium.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { AXON_BIN, markedProcesses, waitFor, Workbench } from "./support/workbench";

const EXTENSION = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-bundled-")));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test("a .vsix with axon bundled runs its own axon when there is no other", { skip: process.platform !== "linux" || process.arch !== "x64" }, async () => {
  const vsix = path.join(dir, "axon-vscode-linux-x64.vsix");
  // The bundle the .vsix under test was built from (npm run package), with axon added.
  execFileSync(process.execPath, ["scripts/package.mjs", "--no-build", "--target", "linux-x64", "--out", vsix], {
    cwd: EXTENSION,
    env: { ...process.env, AXON_BUNDLE_BIN: AXON_BIN },
    stdio: "pipe",
    timeout: 300_000,
  });
  await Workbench.run("bundled", { script: [{ text: "Hello from the bundled axon." }], vsix, axonPath: false }, async (bench) => {
    const panel = await bench.openPanel();
    await bench.send("Say hello");
    await panel.locator(".message.assistant", { hasText: "Hello from the bundled axon." }).waitFor();
    await bench.screenshot("bundled");
    const running = await waitFor("the running axon's executable", () =>
      markedProcesses(bench.marker)
        .map((pid) => {
          try {
            return fs.readlinkSync(`/proc/${pid}/exe`);
          } catch {
            return "";
          }
        })
        .find((exe) => path.basename(exe) === "axon"),
    );
    assert.ok(running.startsWith(bench.extensionsDir) && running.endsWith(path.join("bin", "axon")), `axon runs from the installed extension: ${running}`);
    assert.deepEqual(bench.consoleProblems(), []);
  });
});
