// fileAccess.test.ts — the ACP fs capability's checks (fileAccess.ts) with
// a FileAccess over a temporary directory: only absolute paths inside a
// workspace folder (after resolving symlinks and `..`) of the live session
// reach the files; anything else is ACP's invalid-params error naming the
// path and why.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { insideRoots, readTextFile, writeTextFile, type FileAccess } from "../src/fileAccess";

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-fs-")));
const root = path.join(base, "ws");
const outside = path.join(base, "outside");
fs.mkdirSync(root);
fs.mkdirSync(outside);
fs.writeFileSync(path.join(root, "a.txt"), "one\ntwo\nthree\n");
fs.writeFileSync(path.join(outside, "secret.txt"), "secret\n");
fs.symlinkSync(outside, path.join(root, "link"));
after(() => fs.rmSync(base, { recursive: true, force: true }));

const touched: string[] = [];
const files: FileAccess = {
  roots: () => [root],
  read: async (p) => {
    touched.push(p);
    return fs.promises.readFile(p, "utf8");
  },
  write: async (p, content) => {
    touched.push(p);
    await fs.promises.mkdir(path.dirname(p), { recursive: true });
    await fs.promises.writeFile(p, content);
  },
};
const SESSION = "sess-1";

async function refused(run: () => Promise<unknown>, ...words: string[]) {
  const before = touched.length;
  await assert.rejects(run, (error: { code?: number; message?: string }) => {
    assert.equal(error.code, -32602, `invalid params: ${JSON.stringify(error)}`);
    for (const w of words) assert.ok(error.message?.includes(w) || JSON.stringify(error).includes(w), `${JSON.stringify(error)} names ${w}`);
    return true;
  });
  assert.equal(touched.length, before, "the files were not touched");
}

test("reads and writes inside the workspace go through, line/limit applied", async () => {
  assert.deepEqual(await readTextFile(files, { sessionId: SESSION, path: path.join(root, "a.txt"), line: 2, limit: 1 }, SESSION), { content: "two" });
  await writeTextFile(files, { sessionId: SESSION, path: path.join(root, "new", "deep.txt"), content: "x" }, SESSION);
  assert.equal(fs.readFileSync(path.join(root, "new", "deep.txt"), "utf8"), "x");
});

test("a relative path is refused", async () => {
  await refused(() => readTextFile(files, { sessionId: SESSION, path: "a.txt" }, SESSION), "a.txt", "absolute");
  await refused(() => writeTextFile(files, { sessionId: SESSION, path: "b.txt", content: "x" }, SESSION), "b.txt", "absolute");
});

test("a path outside the workspace folders is refused: directly, through .., or through a symlink", async () => {
  await refused(() => readTextFile(files, { sessionId: SESSION, path: path.join(outside, "secret.txt") }, SESSION), "secret.txt", "outside");
  await refused(() => readTextFile(files, { sessionId: SESSION, path: path.join(root, "..", "outside", "secret.txt") }, SESSION), "secret.txt", "outside");
  await refused(() => readTextFile(files, { sessionId: SESSION, path: path.join(root, "link", "secret.txt") }, SESSION), "secret.txt", "outside");
  await refused(() => writeTextFile(files, { sessionId: SESSION, path: path.join(root, "link", "planted.txt"), content: "x" }, SESSION), "planted.txt", "outside");
  await refused(() => writeTextFile(files, { sessionId: SESSION, path: path.join(base, "ws-evil", "x.txt"), content: "x" }, SESSION), "ws-evil", "outside");
  assert.equal(fs.existsSync(path.join(outside, "planted.txt")), false);
});

test("a request for another session (or with no live session) is refused", async () => {
  await refused(() => readTextFile(files, { sessionId: "other", path: path.join(root, "a.txt") }, SESSION), "other");
  await refused(() => writeTextFile(files, { sessionId: SESSION, path: path.join(root, "a.txt"), content: "x" }, null), SESSION);
});

test("a missing file inside the workspace is resource-not-found", async () => {
  await assert.rejects(
    () => readTextFile(files, { sessionId: SESSION, path: path.join(root, "missing.txt") }, SESSION),
    (error: { code?: number }) => error.code === -32002,
  );
});

test("insideRoots (the panel's links and mentions) resolves a path inside a root and refuses the rest", async () => {
  assert.equal(await insideRoots(files, path.join(root, "sub", "..", "a.txt")), path.join(root, "a.txt"));
  assert.equal(await insideRoots(files, root), root, "a workspace folder itself");
  await refused(() => insideRoots(files, "a.txt"), "a.txt", "absolute");
  await refused(() => insideRoots(files, path.join(root, "link", "secret.txt")), "secret.txt", "outside", path.join(outside, "secret.txt"));
  await refused(() => insideRoots(files, path.join(base, "ws-evil")), "ws-evil", "outside");
});
