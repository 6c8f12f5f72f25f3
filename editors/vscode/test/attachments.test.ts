// attachments.test.ts — the composer's attachments (src/attachments.ts),
// pure: the chips, the ACP content blocks a prompt carries (what `axon acp`
// takes: an embedded text `resource` for a selection, a `resource_link` for
// a file, an `image` block for a pasted or dropped image), the `@`
// mention's file matching and the excludes it applies.

import { test } from "node:test";
import assert from "node:assert/strict";
import { excludeGlob, matchFiles, MAX_SELECTION_CHARS, PendingAttachments, promptBlocks } from "../src/attachments";
import { imageRefusal, MAX_IMAGE_BYTES, MAX_PROMPT_IMAGES_CHARS } from "../src/images";

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

/** The 8-byte PNG signature and a little more, base64 (the host checks type and size; axon the bytes). */
const PNG = Buffer.from("\x89PNG\r\n\x1a\n0000", "latin1").toString("base64");

test("an image becomes a chip with its thumbnail and goes as an ACP image block", () => {
  const pending = new PendingAttachments();
  pending.addFile("/w/README.md", "README.md");
  assert.equal(pending.addImage({ name: "shot.png", mimeType: "image/png", data: PNG }), null);
  assert.deepEqual(pending.chips().at(-1), { id: "a2", kind: "image", label: "shot.png", title: "shot.png (image/png)", image: { mimeType: "image/png", data: PNG } });
  assert.deepEqual(promptBlocks("what is this?", pending.take()), [
    { type: "text", text: "what is this?" },
    { type: "resource_link", name: "README.md", uri: "file:///w/README.md" },
    { type: "image", mimeType: "image/png", data: PNG },
  ]);
});

test("other types, data that is not base64 and images past the limits are refused, saying why", () => {
  const pending = new PendingAttachments();
  const svg = pending.addImage({ name: "logo.svg", mimeType: "image/svg+xml", data: PNG });
  assert.match(svg ?? "", /Cannot attach logo\.svg: only PNG, JPEG, GIF and WebP images can be attached \(this is image\/svg\+xml\)/);
  assert.match(pending.addImage({ name: "x.png", mimeType: "image/png", data: "not base64!" }) ?? "", /x\.png: its data is not base64/);
  // One image past axon's limit: refused before it is read (the panel asks) and when sent (the host checks).
  assert.match(imageRefusal("big.jpg", "image/jpeg", MAX_IMAGE_BYTES + 1) ?? "", /big\.jpg: the image is 20\.0 MB, over the 20\.0 MB limit/);
  assert.equal(imageRefusal("ok.webp", "image/webp", MAX_IMAGE_BYTES), null);
  assert.match(pending.addImage({ name: "big.png", mimeType: "image/png", data: "A".repeat(Math.ceil((MAX_IMAGE_BYTES + 1) / 3) * 4) }) ?? "", /big\.png: the image is 20\.0 MB, over the 20\.0 MB limit/);
  // Together past what one prompt carries: 16 MiB of base64 each, three fit exactly.
  const part = "A".repeat(16 * 1024 * 1024);
  assert.equal(part.length * 3, MAX_PROMPT_IMAGES_CHARS);
  const refusals = [0, 1, 2, 3].map((i) => pending.addImage({ name: `p${i}.png`, mimeType: "image/png", data: part }));
  assert.deepEqual(refusals.slice(0, 3), [null, null, null]);
  assert.match(refusals[3] ?? "", /Cannot attach p3\.png: one prompt carries at most 36\.0 MB of images/);
  assert.equal(pending.size, 3, "nothing refused was attached");
});
