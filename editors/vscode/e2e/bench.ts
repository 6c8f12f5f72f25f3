// bench.ts — the VS Code extension's costs, measured in a real VS Code
// (code-server + Chromium, the e2e harness) with a zero-latency scripted
// model, for bench/vscode.sh:
// - activation: from clicking the axon icon to the panel's page drawn
//   (VS Code activates the extension, resolves the view, loads the page),
//   and to axon's session up (the mode switch filled);
// - prompt → first streamed token in the panel (measured inside the
//   webview: performance.now() before the Send click, a MutationObserver
//   for the first answer text), against the same prompt sent to `axon acp`
//   directly over the extension's own ACP client code (AgentProcess) with no
//   editor: session/prompt written → first agent_message_chunk; the
//   difference is the extension's and VS Code's overhead;
// - memory after TURNS turns: VmRSS/VmHWM of the extension host process
//   and of axon (found by the run's environment marker).
// Prints a table and writes JSON to the path given as the first argument.
//
// Environment: AXON_BIN, TURNS (default 100).

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { AgentProcess } from "../src/agentProcess";
import { ScriptedModel } from "../test/support/scriptedModel";
import { closeShared } from "./support/server";
import { markedProcesses, parentPid, Workbench } from "./support/workbench";

const TURNS = Number(process.env.TURNS ?? 100);
const out = process.argv[2] ?? "vscode-bench.json";
const ANSWER = "Pong, a short streamed answer for the benchmark.";

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** VmRSS and VmHWM of `pid` in MB. */
function memory(pid: number): { rssMb: number; hwmMb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rssMb: kb("VmRSS") / 1024, hwmMb: kb("VmHWM") / 1024 };
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

/** Prompt → first agent_message_chunk through `axon acp` directly, TURNS times. */
async function direct(): Promise<number[]> {
  const axon = path.resolve(process.env.AXON_BIN ?? "../../.bin/axon");
  const model = await ScriptedModel.start(Array.from({ length: TURNS + 1 }, () => ({ text: ANSWER })));
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "axon-vscode-bench-"));
  let firstChunk: (() => void) | null = null;
  const agent = new AgentProcess(
    {
      command: axon,
      args: ["acp"],
      cwd: home,
      env: { PATH: process.env.PATH ?? "", AXON_HOME: path.join(home, ".axon"), AXON_PROVIDER: "openai", AXON_BASE_URL: model.openaiBase, OPENAI_API_KEY: "sk-test-0000000000" },
    },
    {
      onUpdate: (n) => {
        if (n.update.sessionUpdate === "agent_message_chunk") firstChunk?.();
      },
      askPermission: async () => ({ outcome: { outcome: "cancelled" } }),
      readTextFile: async () => ({ content: "" }),
      writeTextFile: async () => ({}),
    },
  );
  try {
    await agent.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } } });
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: home, mcpServers: [] });
    const times: number[] = [];
    for (let i = 0; i <= TURNS; i++) {
      const first = new Promise<number>((resolve) => (firstChunk = () => resolve(performance.now())));
      const start = performance.now();
      const done = agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `ping ${i}` }] });
      const at = await first;
      firstChunk = null;
      await done;
      if (i > 0) times.push(at - start); // the first turn is a warm-up
    }
    return times;
  } finally {
    await agent.stop();
    await model.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

async function inVsCode() {
  const script = Array.from({ length: TURNS + 1 }, () => ({ text: ANSWER }));
  const bench = await Workbench.open({ script });
  try {
    const page = bench.page;
    const item = page.locator(".activitybar .action-item").filter({ has: page.locator('[aria-label^="axon"]') }).first();
    await item.waitFor();
    const clicked = Date.now();
    await item.click();
    const panel = bench.panel();
    await panel.locator("textarea.prompt").waitFor();
    const pageDrawn = Date.now() - clicked;
    await panel.locator("select.mode option").first().waitFor({ state: "attached" });
    const sessionUp = Date.now() - clicked;

    const times: number[] = [];
    const body = panel.locator("body");
    for (let i = 0; i <= TURNS; i++) {
      await panel.locator("button.send:not([disabled])").waitFor();
      const ms = await body.evaluate(
        (_, text) =>
          new Promise<number>((resolve) => {
            const transcript = document.querySelector(".transcript")!;
            const before = transcript.querySelectorAll(".message.assistant").length;
            const observer = new MutationObserver(() => {
              const answers = transcript.querySelectorAll(".message.assistant");
              if (answers.length > before && (answers[answers.length - 1].textContent ?? "").length > 0) {
                observer.disconnect();
                resolve(performance.now() - start);
              }
            });
            observer.observe(transcript, { childList: true, subtree: true, characterData: true });
            (document.querySelector("textarea.prompt") as HTMLTextAreaElement).value = text;
            const start = performance.now();
            (document.querySelector("button.send") as HTMLButtonElement).click();
          }),
        `ping ${i}`,
      );
      if (i > 0) times.push(ms);
      // New chat every 25 turns would hide growth; the chat keeps all turns, as a user's would.
    }
    await panel.locator("button.send:not([disabled])").waitFor();
    // The window's axon carries its marker; its parent is the window's extension host.
    const axon = markedProcesses(bench.marker).find((pid) => /\bacp\b/.test(cmdline(pid)) && cmdline(pid).includes(path.basename(process.env.AXON_BIN ?? "axon")));
    const parent = axon === undefined ? 0 : parentPid(axon);
    const host = parent && /extensionHost|--type=extensionHost/.test(cmdline(parent)) ? parent : undefined;
    return {
      activation: { pageDrawnMs: pageDrawn, sessionUpMs: sessionUp },
      firstToken: times,
      extensionHost: host ? memory(host) : null,
      axon: axon ? memory(axon) : null,
    };
  } finally {
    await bench.close();
  }
}

// The shared code-server and Chromium are this script's to close, however it went.
const editor = await inVsCode().finally(closeShared);
const plain = await direct();
const summary = (xs: number[]) => ({ p50: percentile(xs, 50), p90: percentile(xs, 90), p99: percentile(xs, 99), n: xs.length });
const result = {
  turns: TURNS,
  activation: editor.activation,
  firstTokenInPanelMs: summary(editor.firstToken),
  firstTokenDirectAcpMs: summary(plain),
  extensionHostAfterTurns: editor.extensionHost,
  axonAfterTurns: editor.axon,
};
fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
fs.writeFileSync(out, JSON.stringify(result, null, 2));
const f = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "?" : n.toFixed(1));
console.log(`activation: panel page drawn ${editor.activation.pageDrawnMs} ms after the click, axon's session up ${editor.activation.sessionUpMs} ms`);
console.log(`prompt → first token, p50 / p90 / p99 over ${TURNS} turns:`);
console.log(`  in the VS Code panel   ${f(result.firstTokenInPanelMs.p50)} / ${f(result.firstTokenInPanelMs.p90)} / ${f(result.firstTokenInPanelMs.p99)} ms`);
console.log(`  axon acp directly      ${f(result.firstTokenDirectAcpMs.p50)} / ${f(result.firstTokenDirectAcpMs.p90)} / ${f(result.firstTokenDirectAcpMs.p99)} ms`);
console.log(`memory after ${TURNS} turns (VmRSS / VmHWM): extension host ${f(editor.extensionHost?.rssMb)} / ${f(editor.extensionHost?.hwmMb)} MB, axon ${f(editor.axon?.rssMb)} / ${f(editor.axon?.hwmMb)} MB`);
console.log(`written to ${out}`);
