// axonBinary.test.ts — which axon the extension runs (src/axonBinary.ts),
// with real files in a temp folder: the setting, else PATH (in order,
// executable files only), else the bundled bin/axon if it is executable,
// else `axon` with a hint naming every place looked at.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { resolveAxon } from "../src/axonBinary";

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-bin-")));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const make = (file: string, mode: number) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, "#!/bin/sh\nexit 0\n", { mode });
  fs.chmodSync(file, mode);
  return file;
};
const empty = path.join(dir, "empty");
const plain = path.join(dir, "plain"); // holds an axon that is not executable
const first = path.join(dir, "first");
const second = path.join(dir, "second");
const ext = path.join(dir, "ext");
fs.mkdirSync(empty);
make(path.join(plain, "axon"), 0o644);
make(path.join(second, "axon"), 0o755);
fs.mkdirSync(path.join(first, "axon"), { recursive: true }); // a folder named axon
const bundled = make(path.join(ext, "bin", "axon"), 0o755);
const lookup = { configured: "", pathEnv: [empty, plain, first, second].join(":"), extensionPath: ext, platform: "linux" as const };

test("the setting axon.path wins, as written", { skip: process.platform === "win32" }, () => {
  assert.deepEqual(resolveAxon({ ...lookup, configured: "/opt/axon/bin/axon" }), { command: "/opt/axon/bin/axon", source: "setting" });
});

test("else the first executable axon on PATH (not a folder, not a file without x)", { skip: process.platform === "win32" }, () => {
  assert.deepEqual(resolveAxon(lookup), { command: path.join(second, "axon"), source: "path" });
});

test("else the bundled bin/axon, if it is executable", { skip: process.platform === "win32" }, () => {
  assert.deepEqual(resolveAxon({ ...lookup, pathEnv: [empty, plain].join(":") }), { command: bundled, source: "bundled" });
  assert.deepEqual(resolveAxon({ ...lookup, pathEnv: undefined }), { command: bundled, source: "bundled" });
  fs.chmodSync(bundled, 0o644);
  try {
    const none = resolveAxon({ ...lookup, pathEnv: empty });
    assert.equal(none.command, "axon");
    assert.equal(none.source, "none");
    assert.match(none.hint ?? "", new RegExp(`axon.path is empty.*not on PATH.*${bundled.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} is not executable.*set axon.path`));
  } finally {
    fs.chmodSync(bundled, 0o755);
  }
});

test("with nothing anywhere, the hint says this .vsix bundles no axon", { skip: process.platform === "win32" }, () => {
  const none = resolveAxon({ ...lookup, pathEnv: empty, extensionPath: path.join(dir, "no-ext") });
  assert.equal(none.source, "none");
  assert.match(none.hint ?? "", /this \.vsix bundles no axon/);
});

test("on Windows PATH is split at ; and axon.exe is looked for", () => {
  const seen: string[] = [];
  const found = resolveAxon({
    configured: "",
    pathEnv: "C:\\tools;D:\\axon",
    extensionPath: "C:\\ext",
    platform: "win32",
    isExecutable: (file) => {
      seen.push(file);
      return file === "D:\\axon\\axon.exe";
    },
  });
  assert.deepEqual(seen, ["C:\\tools\\axon.exe", "D:\\axon\\axon.exe"]);
  assert.deepEqual(found, { command: "D:\\axon\\axon.exe", source: "path" });
});
