#!/usr/bin/env node
// The `axon` command of the npm package axon-agent: it runs the native axon
// binary from the one platform package npm installed next to it (through
// optionalDependencies, each limited by its os/cpu/libc fields), the way
// Codex ships its Rust binary. It adds nothing to the run: arguments, stdio,
// exit code and signals pass through. Where no binary fits this machine, or
// the one installed is incomplete, it prints one line saying what and what
// to do, and exits 1.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

// Filled in by scripts/dist: "platform-arch-libc" -> package name.
const PLATFORMS = __PLATFORMS__;
const FRONT = "__FRONT__";

function fail(line) {
  process.stderr.write(`axon: ${line}\n`);
  process.exit(1);
}

function libc() {
  if (process.platform !== "linux") return "";
  const report = process.report && process.report.getReport();
  const header = report && report.header;
  return header && header.glibcVersionRuntime ? "glibc" : "musl";
}

const key = [process.platform, process.arch, libc()].filter(Boolean).join("-");
const pkg = PLATFORMS[key];
const known = Object.keys(PLATFORMS).join(", ");
if (!pkg) {
  fail(
    `no axon binary for ${key}; packages exist for ${known} (glibc 2.28 or later). ` +
      "Elsewhere build from source: https://github.com/axon-agent/axon#set-up",
  );
}

let dir;
try {
  dir = path.dirname(require.resolve(`${pkg}/package.json`));
} catch {
  fail(
    `the package ${pkg} (axon's binary for ${key}) is not installed, as when optional ` +
      `dependencies are skipped; reinstall with: npm install -g ${FRONT} (without --omit=optional)`,
  );
}

let meta;
try {
  meta = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
} catch (err) {
  fail(`cannot read ${path.join(dir, "package.json")} (${err.message}); reinstall with: npm install -g ${FRONT}`);
}
const bin = path.join(dir, "bin", "axon");
let size = -1;
try {
  size = fs.statSync(bin).size;
} catch {
  // reported below
}
// A size check costs one stat; a damaged or cut-short binary would otherwise
// die with an obscure exec error or a crash.
const want = meta.axon && meta.axon.size;
if (size !== want) {
  fail(
    `${bin} is missing or incomplete (${size < 0 ? "absent" : `${size} bytes`}, expected ${want}); ` +
      `reinstall with: npm install -g ${FRONT}`,
  );
}

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
// Ctrl-C reaches axon directly (same process group); the launcher only waits
// for it. Signals sent to the launcher alone are passed on.
const forward = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
for (const sig of forward) {
  process.on(sig, () => {
    if (sig !== "SIGINT") child.kill(sig);
  });
}
child.on("error", (err) => fail(`cannot run ${bin}: ${err.message}; reinstall with: npm install -g ${FRONT}`));
child.on("exit", (code, signal) => {
  if (signal) {
    for (const sig of forward) process.removeAllListeners(sig);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
