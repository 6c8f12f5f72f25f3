// attachments.test.ts — the composer's attachments (src/attachments.ts),
// pure: the chips, the ACP content blocks a prompt carries (what `axon acp`
// takes: an embedded text `resource` for a selection, a `resource_link` for
// a file), the `@` mention's file matching and the excludes it applies.

import { test } from "node:test";
import assert from "node:assert/strict";
import { excludeGlob, matchFiles, MAX_SELECTION_CHARS, PendingAttachments, promptBlocks } from "../src/attachments";

const selection = { path: "/w/src/a b.ts", label: "src/a b.ts", startLine: 3, endLine: 5, text: "three\nfour\nfive\n" };

test("a selection and files become chips, a file once; a prompt takes them all", () => {
  const pending = new PendingAttachments();
  assert.equal(pending.addSelection(selection), null);
  pending.addFile("/w/README.md", "README.md");
  pending.addFile("/w/README.md", "README.md");
  assert.deepEqual(pending.chips(), [
    { id: "a1", kind: "selection", label: "src/a b.ts:3-5", title: "/w/src/a b.ts, lines 3-5" },
    { id: "a2", kind: "file", label: "README.md", title: "/w/README.md" },
  ]);
  assert.equal(pending.remove("a1"), true);
  assert.equal(pending.remove("a1"), false, "gone already");
  assert.equal(pending.addSelection({ ...selection, startLine: 7, endLine: 7 }), null);
  assert.deepEqual(pending.chips().map((c) => c.label), ["README.md", "src/a b.ts:7"]);
  assert.deepEqual(pending.take().map((a) => a.kind), ["file", "selection"]);
  assert.equal(pending.size, 0);
  assert.deepEqual(pending.chips(), []);
});

test("an empty or too large selection is refused with what to do", () => {
  const pending = new PendingAttachments();
  assert.match(pending.addSelection({ ...selection, text: "" }) ?? "", /empty: select some text/);
  const large = pending.addSelection({ ...selection, text: "x".repeat(MAX_SELECTION_CHARS + 1) }) ?? "";
  assert.match(large, /too large.*mention the file with @/);
  assert.equal(pending.size, 0);
});

test("a prompt's blocks: its text, a selection as an embedded resource with its lines, a file as a resource_link", () => {
  const pending = new PendingAttachments();
  pending.addSelection(selection);
  pending.addFile("/w/docs/read me.md", "docs/read me.md");
  assert.deepEqual(promptBlocks("Explain this", pending.take()), [
    { type: "text", text: "Explain this" },
    { type: "resource", resource: { uri: "file:///w/src/a%20b.ts#L3-5", mimeType: "text/plain", text: "three\nfour\nfive\n" } },
    { type: "resource_link", name: "docs/read me.md", uri: "file:///w/docs/read%20me.md" },
  ]);
  assert.deepEqual(promptBlocks("plain", []), [{ type: "text", text: "plain" }]);
});

test("a mention offers names starting with the query first, then names containing it, then paths; bounded", () => {
  const files = ["src/main.ts", "src/domain.ts", "main/README.md", "lib/maintenance.py", "test/x.ts", "MAIN.txt"].map((label) => ({ path: `/w/${label}`, label }));
  assert.deepEqual(matchFiles(files, "main").map((f) => f.label), ["MAIN.txt", "src/main.ts", "lib/maintenance.py", "src/domain.ts", "main/README.md"]);
  assert.deepEqual(matchFiles(files, "zzz"), []);
  assert.equal(matchFiles(files, "", 3).length, 3, "an empty query offers the first files, bounded");
  const many = Array.from({ length: 100 }, (_, i) => ({ path: `/w/f${i}.ts`, label: `f${i}.ts` }));
  assert.equal(matchFiles(many, "f").length, 30);
});

test("the mention list's excludes: .git and node_modules, and the settings' switched-on patterns", () => {
  assert.equal(excludeGlob(), "{**/.git,**/node_modules}");
  assert.equal(
    excludeGlob({ "**/.svn": true, "**/off": false, "**/*.{js,map}": true }, { "**/target": true, "**/.git": true }),
    "{**/.git,**/node_modules,**/.svn,**/target}",
  );
});
