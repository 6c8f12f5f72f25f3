#!/usr/bin/env node
// scripts/package.mjs — the .vsix: the production bundle, then `vsce
// package`. With `--target PLATFORM` (vsce's platform-specific package,
// e.g. linux-x64) the axon binary named by AXON_BUNDLE_BIN goes in as
// bin/axon (bin/axon.exe for win32-*), executable, for users with no axon
// of their own (src/axonBinary.ts looks there last), with the lib/axon/
// folder beside it when it has one (a release build's llama.cpp).
//
//   node scripts/package.mjs [--target PLATFORM] [--out FILE] [--no-build]
//   (npm run package -- --target linux-x64)
//
// Guarantees: a bundled binary is only ever copied into bin/ for the
// packaging and bin/ is removed afterwards, however it ends (it is never
// committed: .gitignore); --target without AXON_BUNDLE_BIN, or
// AXON_BUNDLE_BIN without --target, or a binary that is not a regular
// file, stops before anything is written, saying what to set. Nothing is
// fetched: vsce and esbuild come from node_modules.

import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
process.chdir(root);

function fail(message) {
  console.error(`scripts/package: ${message}`);
  process.exit(2);
}

const args = process.argv.slice(2);
let target = null;
let out = null;
let build = true;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--target" && args[i + 1]) target = args[++i];
  else if (args[i] === "--out" && args[i + 1]) out = args[++i];
  else if (args[i] === "--no-build") build = false;
  else fail(`unknown argument ${args[i]}; use [--target PLATFORM] [--out FILE] [--no-build]`);
}
const bundle = process.env.AXON_BUNDLE_BIN;
if (target && !bundle) fail(`--target ${target} makes a platform-specific .vsix with axon in it: set AXON_BUNDLE_BIN to the axon binary built for ${target}`);
if (bundle && !target) fail(`AXON_BUNDLE_BIN is set: say which platform it was built for with --target (e.g. --target linux-x64)`);
if (bundle && !fs.statSync(bundle, { throwIfNoEntry: false })?.isFile()) fail(`AXON_BUNDLE_BIN=${bundle} is not a file`);
out ??= target ? `axon-vscode-${target}.vsix` : "axon-vscode.vsix";

function run(command, commandArgs) {
  const result = spawnSync(command, commandArgs, { stdio: "inherit" });
  if (result.status !== 0) throw new Error(`${command} ${commandArgs.join(" ")} failed (${result.error?.message ?? `exit ${result.status}`})`);
}

const bin = path.join(root, "bin");
fs.rmSync(bin, { recursive: true, force: true });
try {
  if (build) run(process.execPath, ["build.mjs", "--production"]);
  if (bundle) {
    fs.mkdirSync(bin);
    const name = target.startsWith("win32") ? "axon.exe" : "axon";
    fs.copyFileSync(bundle, path.join(bin, name));
    fs.chmodSync(path.join(bin, name), 0o755);
    // A release axon (scripts/dist) loads llama.cpp from lib/axon/ beside
    // itself: one library per CPU generation. A debug build has none.
    const libs = path.join(path.dirname(bundle), "lib", "axon");
    if (fs.statSync(libs, { throwIfNoEntry: false })?.isDirectory()) {
      fs.cpSync(libs, path.join(bin, "lib", "axon"), { recursive: true });
    }
  }
  const vsce = path.join(root, "node_modules", "@vscode", "vsce", "vsce");
  run(process.execPath, [vsce, "package", "--no-dependencies", "--skip-license", "--out", out, ...(target ? ["--target", target] : [])]);
} catch (error) {
  console.error(`scripts/package: ${error.message}`);
  process.exitCode = 1;
} finally {
  fs.rmSync(bin, { recursive: true, force: true });
}
