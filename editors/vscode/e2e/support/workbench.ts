// workbench.ts — one test's window in a real VS Code: its own workspace
// folder, its own axon state (AXON_HOME: config, sessions, trust) and
// scripted model, opened in its own browser context on the run's shared
// code-server and Chromium (support/server.ts). A test that needs another
// .vsix or no `axon.path` gets a code-server of its own. A new test file
// needs nothing else: `Workbench.run(name, options, body)` in each test.
//
// Guarantees:
// - a test's files (workspace, AXON_HOME, the axon.env the launcher reads)
//   live under one temp folder that `close()` removes; nothing is written
//   to the real home;
// - the window is fresh: a new browser context (no storage shared with
//   another test), a workspace folder no other window opened (so VS Code's
//   workspace state, and the extension's, start empty), and its own
//   extension host;
// - `close()` closes the window and waits until every process of the test
//   (its axon and what axon started, marked AXON_E2E_TEST) has ended, so no
//   test sees another's axon; a test's failure leaves the shared server and
//   browser to the next test;
// - every console message and page error of the webviews is kept, so a test
//   can assert there was none;
// - every wait is on a condition with a generous deadline (a busy 2-core
//   machine), never a sleep.

import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { BrowserContext, FrameLocator, Page } from "playwright-core";
import { ScriptedModel, type Reply } from "../../test/support/scriptedModel";
import { AXON_BIN, CodeServer, E2E, PATIENCE_MS, sharedBrowser, sharedServer, stopMarked, VSIX } from "./server";

export { AXON_BIN, markedProcesses, parentPid, PATIENCE_MS, waitFor } from "./server";

/** Where screenshots go (looked at by whoever changes the panel). */
export const SHOTS = path.join(E2E, "screenshots");

export type WorkbenchOptions = {
  script: Reply[];
  /** Files of the workspace folder: relative path → content. */
  files?: Record<string, string>;
  /** Model names the scripted model lists (GET /v1/models); none: it does not say. */
  models?: string[];
  /** axon's config.toml (in the test's AXON_HOME); `{{AXON_HOME}}` and `{{WORKSPACE}}` in it stand for those folders. */
  axonConfig?: string;
  /** The .vsix to install (default: AXON_VSIX, else axon-vscode.vsix); another than the default gets its own code-server. */
  vsix?: string;
  /**
   * false: no `axon.path` setting and no axon on code-server's PATH, so the
   * extension must find axon itself (the one bundled in a platform .vsix);
   * the test gets its own code-server.
   */
  axonPath?: boolean;
};

export type ConsoleEntry = { type: string; text: string; url: string };

export class Workbench {
  /** Console messages and page errors from the webviews. */
  readonly webviewConsole: ConsoleEntry[] = [];
  /** Dialogs the page tried to open (a hostile answer's alert()). */
  readonly dialogs: string[] = [];
  /** The window's URL (its workspace folder open). */
  readonly url: string;

  private constructor(
    /** The temp folder of this test's files. */
    private readonly root: string,
    /**
     * The value of AXON_E2E_TEST in every process of this test: its axon
     * and what axon started (and, on a dedicated server, all of the server's).
     */
    readonly marker: string,
    private readonly server: CodeServer,
    /** Whether `server` is this test's alone (closed with it). */
    private readonly dedicated: boolean,
    private readonly context: BrowserContext,
    readonly page: Page,
    readonly model: ScriptedModel,
    /** The workspace folder the window has open (real path). */
    readonly workspace: string,
  ) {
    this.url = `${server.base}/?folder=${encodeURIComponent(workspace)}`;
  }

  /** code-server's extensions folder (where the .vsix is installed). */
  get extensionsDir(): string {
    return this.server.extensionsDir;
  }

  /** code-server's output so far (for a failing test's message; a shared server's holds earlier tests' too). */
  get log(): string {
    return this.server.log;
  }

  static async open(options: WorkbenchOptions): Promise<Workbench> {
    if (!fs.existsSync(AXON_BIN)) throw new Error(`no axon (set AXON_BIN) at ${AXON_BIN}`);
    const vsix = path.resolve(options.vsix ?? VSIX);
    const dedicated = vsix !== VSIX || options.axonPath === false;
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-e2e-")));
    const marker = crypto.randomBytes(8).toString("hex");
    const workspace = path.join(root, "workspace");
    const axonHome = path.join(root, "axon-home");
    for (const dir of [workspace, axonHome]) fs.mkdirSync(dir, { recursive: true });
    for (const [name, content] of Object.entries(options.files ?? {})) {
      fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
      fs.writeFileSync(path.join(workspace, name), content);
    }
    if (options.axonConfig) {
      const text = options.axonConfig.replaceAll("{{AXON_HOME}}", axonHome).replaceAll("{{WORKSPACE}}", workspace);
      fs.writeFileSync(path.join(axonHome, "config.toml"), text);
    }
    let model: ScriptedModel | null = null;
    let server: CodeServer | null = null;
    let context: BrowserContext | null = null;
    try {
      model = await ScriptedModel.start(options.script, { models: options.models });
      const axonEnv: Record<string, string> = {
        AXON_HOME: axonHome,
        AXON_PROVIDER: "openai",
        AXON_BASE_URL: model.openaiBase,
        OPENAI_API_KEY: "sk-test-0000000000",
        AXON_E2E_TEST: marker,
      };
      if (dedicated) {
        server = await CodeServer.start({ vsix, axon: options.axonPath === false ? "none" : "direct", env: axonEnv });
      } else {
        // Read by support/axon-launcher, the shared server's axon.path, in this workspace's axon.
        const lines = Object.entries({ ...axonEnv, AXON_E2E_AXON: AXON_BIN }).map(([key, value]) => `export ${key}=${shellQuote(value)}\n`);
        fs.writeFileSync(path.join(root, "axon.env"), lines.join(""));
        server = await sharedServer();
      }
      const browser = await sharedBrowser();
      context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(PATIENCE_MS);
      const bench = new Workbench(root, marker, server, dedicated, context, page, model, workspace);
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
      await context?.close().catch(() => {});
      await stopMarked(marker, 0).catch(() => {});
      if (dedicated) await server?.close().catch(() => {});
      await model?.close();
      fs.rmSync(root, { recursive: true, force: true });
      if (server) (error as Error).message += `\n--- code-server log\n${server.log.slice(-6000)}`;
      throw error;
    }
  }

  /**
   * Runs `body` in a fresh window and closes it however it ends; a failure
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

  /**
   * Closes the window and waits until the test's axon has ended (the closed
   * window's extension host stops it; what is left after a while is ended
   * by its marker; a dedicated code-server is closed first, with all under
   * it), then removes the test's folder.
   */
  async close(): Promise<void> {
    await this.context.close().catch(() => {});
    if (this.dedicated) await this.server.close();
    await stopMarked(this.marker, this.dedicated ? 0 : 30_000);
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

/** `value` as one word for sh. */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}
