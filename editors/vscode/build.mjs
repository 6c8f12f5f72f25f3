// build.mjs — esbuild bundles: the extension host (dist/extension.js,
// CommonJS, `vscode` external), the webview (dist/webview/panel.js and
// panel.css, the only files a webview may load), and with --tests each
// test/*.test.ts to out/test/ (node packages left external, loaded from
// node_modules; `vscode` is test/support/vscode.ts, a stand-in), and with
// --e2e each e2e/*.test.ts to e2e/out/ (its packages, playwright-core, from
// e2e/node_modules; e2e/support in a chunk they share), with --bench e2e/bench.ts (bench/vscode.sh). Nothing is fetched; everything comes from node_modules.

import * as esbuild from "esbuild";
import { readdirSync } from "node:fs";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");
const e2e = process.argv.includes("--e2e");
const bench = process.argv.includes("--bench");

const common = { bundle: true, logLevel: "warning", sourcemap: !production, minify: production, legalComments: "external" };

await esbuild.build({
  ...common,
  entryPoints: ["src/extension.ts"],
  outfile: "dist/extension.js",
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
});

await esbuild.build({
  ...common,
  entryPoints: { panel: "webview/main.ts" },
  outdir: "dist/webview",
  platform: "browser",
  format: "iife",
  target: "es2022",
  loader: { ".css": "css" },
  inject: [],
});
await esbuild.build({ ...common, entryPoints: { panel: "webview/panel.css" }, outdir: "dist/webview" });

if (tests) {
  const entryPoints = readdirSync("test").filter((f) => f.endsWith(".test.ts")).map((f) => `test/${f}`);
  await esbuild.build({
    ...common,
    entryPoints,
    outdir: "out/test",
    platform: "node",
    format: "esm",
    outExtension: { ".js": ".mjs" },
    target: "node20",
    packages: "external",
    // Unit tests of vscode-using modules get the stand-in; the real API exists only in VS Code.
    alias: { vscode: "./test/support/vscode.ts" },
    sourcemap: true,
  });
}

if (e2e || bench) {
  const entryPoints = readdirSync("e2e")
    .filter((f) => (e2e && f.endsWith(".test.ts")) || (bench && f === "bench.ts"))
    .map((f) => `e2e/${f}`);
  await esbuild.build({
    ...common,
    entryPoints,
    outdir: "e2e/out",
    platform: "node",
    format: "esm",
    outExtension: { ".js": ".mjs" },
    target: "node20",
    packages: "external",
    sourcemap: true,
    // One copy of e2e/support in a shared chunk: the test files run in one
    // process (e2e/run) and share its code-server and Chromium.
    splitting: true,
  });
}
