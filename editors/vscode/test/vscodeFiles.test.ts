// vscodeFiles.test.ts — VscodeFiles (src/vscodeFiles.ts) against the
// stand-in `vscode` module (test/support/vscode.ts): files not open in the
// editor are read and written on disk without opening a document (no
// language server sees them, no format-on-save runs); an open file is read
// from its buffer and written as one edit, then saved.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { VscodeFiles } from "../src/vscodeFiles";
import { calls, FakeDocument, Uri, workspace } from "./support/vscode";

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-vf-")));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test("the roots are the workspace folders, else the fallback folder", () => {
  assert.deepEqual(new VscodeFiles("/home/me").roots(), ["/home/me"]);
  workspace.workspaceFolders = [{ uri: Uri.file(dir) }];
  assert.deepEqual(new VscodeFiles("/home/me").roots(), [dir]);
  workspace.workspaceFolders = undefined;
});

test("a file that is not open is read and written on disk, no document opened", async () => {
  const files = new VscodeFiles(dir);
  fs.writeFileSync(path.join(dir, "closed.txt"), "on disk\n");
  assert.equal(await files.read(path.join(dir, "closed.txt")), "on disk\n");
  await files.write(path.join(dir, "sub", "new.txt"), "created\n");
  assert.equal(fs.readFileSync(path.join(dir, "sub", "new.txt"), "utf8"), "created\n");
  assert.deepEqual(calls, { openTextDocument: 0, applyEdit: 0, fsRead: 1, fsWrite: 1 });
});

test("an open file is read from its buffer and written as one edit, then saved", async () => {
  const files = new VscodeFiles(dir);
  const file = path.join(dir, "open.txt");
  fs.writeFileSync(file, "disk\n");
  const doc = new FakeDocument(Uri.file(file), "unsaved buffer\n");
  workspace.textDocuments.push(doc);
  const before = { ...calls };
  assert.equal(await files.read(file), "unsaved buffer\n");
  await files.write(file, "agent text\n");
  assert.equal(doc.text, "agent text\n");
  assert.equal(doc.saves, 1);
  assert.equal(fs.readFileSync(file, "utf8"), "agent text\n");
  assert.deepEqual(calls, { ...before, applyEdit: before.applyEdit + 1 });
});

test("a relative path is refused", async () => {
  await assert.rejects(() => new VscodeFiles(dir).read("open.txt"), /not an absolute path/);
});
