// package.test.ts — scripts/package.mjs, run for real (vsce from
// node_modules, on the bundle scripts/test built): the plain .vsix holds
// the bundle, the icon, the README and the manifest and no axon; with
// `--target linux-x64` and AXON_BUNDLE_BIN it also holds bin/axon,
// executable, and says its platform; --target without AXON_BUNDLE_BIN is
// refused before anything is written; bin/ never stays behind. The .vsix
// (a zip) is listed by reading its central directory here.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-pkg-")));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

type Entry = { name: string; mode: number; text: () => string };

/** The entries of a zip file and their Unix modes (from its central directory). */
function zipEntries(file: string): Entry[] {
  const zip = fs.readFileSync(file);
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65535); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  assert.ok(end >= 0, `${file} is not a zip`);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries: Entry[] = [];
  for (let n = 0; n < count; n++) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50, "a central directory entry");
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const external = zip.readUInt32LE(at + 38);
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const local = zip.readUInt32LE(at + 42);
    const text = () => {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + size);
      return (method === 8 ? zlib.inflateRawSync(data) : data).toString("utf8");
    };
    entries.push({ name: zip.toString("utf8", at + 46, at + 46 + nameLength), mode: (external >>> 16) & 0o777, text });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

function packageScript(args: string[], env: Record<string, string | undefined>) {
  const result = spawnSync(process.execPath, ["scripts/package.mjs", "--no-build", ...args], { env: { ...process.env, AXON_BUNDLE_BIN: undefined, ...env }, encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

test("the plain .vsix holds the bundle and no axon", () => {
  const out = path.join(dir, "plain.vsix");
  const run = packageScript(["--out", out], {});
  assert.equal(run.status, 0, run.output);
  const names = zipEntries(out).map((e) => e.name);
  for (const expected of ["extension/package.json", "extension/dist/extension.js", "extension/dist/webview/panel.js", "extension/dist/webview/panel.css", "extension/media/axon.svg", "extension.vsixmanifest"]) {
    assert.ok(names.includes(expected), `${expected} in ${names.join(", ")}`);
  }
  assert.ok(!names.some((n) => n.includes("/bin/") || n.endsWith(".ts") || n.includes("node_modules") || n.endsWith(".map")), names.join(", "));
  assert.equal(fs.existsSync("bin"), false);
});

test("--target linux-x64 with AXON_BUNDLE_BIN bundles an executable bin/axon; --target alone is refused", { skip: process.platform === "win32" }, () => {
  const fake = path.join(dir, "axon-built");
  fs.writeFileSync(fake, "#!/bin/sh\necho bundled axon\n", { mode: 0o600 });
  const out = path.join(dir, "linux.vsix");
  const run = packageScript(["--target", "linux-x64", "--out", out], { AXON_BUNDLE_BIN: fake });
  assert.equal(run.status, 0, run.output);
  const entries = zipEntries(out);
  const axon = entries.find((e) => e.name === "extension/bin/axon");
  assert.ok(axon, entries.map((e) => e.name).join(", "));
  assert.equal(axon.mode & 0o111, 0o111, `bin/axon is executable in the .vsix (mode ${axon.mode.toString(8)})`);
  assert.ok(entries.some((e) => e.name === "extension/dist/extension.js"));
  const manifest = entries.find((e) => e.name === "extension.vsixmanifest")?.text() ?? "";
  assert.match(manifest, /TargetPlatform="linux-x64"/, "the manifest names the platform");
  assert.equal(axon.text(), "#!/bin/sh\necho bundled axon\n", "the binary is the one named");
  assert.equal(fs.existsSync("bin"), false, "bin/ is removed after packaging");

  const refused = packageScript(["--target", "linux-x64", "--out", path.join(dir, "none.vsix")], {});
  assert.notEqual(refused.status, 0);
  assert.match(refused.output, /set AXON_BUNDLE_BIN to the axon binary built for linux-x64/);
  assert.equal(fs.existsSync(path.join(dir, "none.vsix")), false);
  const untargeted = packageScript(["--out", path.join(dir, "none.vsix")], { AXON_BUNDLE_BIN: fake });
  assert.match(untargeted.output, /--target/);
  assert.equal(fs.existsSync(path.join(dir, "none.vsix")), false);
});
