// scriptedModel.ts — a scripted OpenAI-compatible model on 127.0.0.1 for
// the tests, streaming chat-completions SSE the way crates/testkit's
// ScriptedServer does (text in 4-character pieces, tool-call arguments in
// 7-character pieces, a usage chunk, [DONE]).
//
// Guarantees: each POST gets the next reply of the script (500 once the
// script is used up); every request body is kept; questions about the
// model (GET /v1/models, /props, …) get 404 as from a server that does not
// say, unless `models` is given: then GET /v1/models lists them; a `stall` reply streams its text and then holds the connection open
// until `close()`, which ends every connection and the server.

import * as http from "node:http";
import type { AddressInfo } from "node:net";

export type Reply =
  | { text: string }
  | { calls: { name: string; args: unknown }[] }
  | { stall: string };

export class ScriptedModel {
  readonly requests: unknown[] = [];
  private readonly server: http.Server;
  private nextCall = 0;

  private constructor(
    private readonly script: Reply[],
    private readonly models?: string[],
  ) {
    this.server = http.createServer((req, res) => this.answer(req, res));
  }

  static async start(script: Reply[], options: { models?: string[] } = {}): Promise<ScriptedModel> {
    const model = new ScriptedModel([...script], options.models);
    await new Promise<void>((resolve) => model.server.listen(0, "127.0.0.1", resolve));
    return model;
  }

  /** The base URL for an OpenAI-format provider (AXON_BASE_URL). */
  get openaiBase(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  get remaining(): number {
    return this.script.length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const body: Buffer[] = [];
    req.on("data", (chunk: Buffer) => body.push(chunk));
    req.on("end", () => {
      if (req.method === "GET" && this.models && req.url?.replace(/\?.*/, "") === "/v1/models") {
        const data = this.models.map((id) => ({ id, object: "model", owned_by: "test" }));
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data }));
        return;
      }
      if (req.method !== "POST") {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"File Not Found"}}');
        return;
      }
      try {
        this.requests.push(JSON.parse(Buffer.concat(body).toString("utf8")));
      } catch {
        this.requests.push(null);
      }
      const reply = this.script.shift();
      if (!reply) {
        res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"the test script has no more replies"}}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const event of this.events(reply)) res.write(event);
      if (!("stall" in reply)) res.end();
    });
  }

  private events(reply: Reply): string[] {
    const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
    const chunk = (delta: unknown, finish: string | null) =>
      data({ id: "chatcmpl-test", object: "chat.completion.chunk", model: "scripted", choices: [{ index: 0, delta, finish_reason: finish }] });
    const pieces = (text: string, size: number) => {
      const chars = [...text];
      const out: string[] = [];
      for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
      return out;
    };
    const events = [chunk({ role: "assistant", content: "" }, null)];
    const text = "text" in reply ? reply.text : "stall" in reply ? reply.stall : "";
    for (const piece of pieces(text, 4)) events.push(chunk({ content: piece }, null));
    if ("stall" in reply) return events;
    const calls = "calls" in reply ? reply.calls : [];
    calls.forEach((call, index) => {
      const id = `call_${this.nextCall++}`;
      events.push(chunk({ tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: "" } }] }, null));
      for (const piece of pieces(JSON.stringify(call.args), 7)) {
        events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null));
      }
    });
    events.push(chunk({}, calls.length ? "tool_calls" : "stop"));
    events.push(data({ id: "chatcmpl-test", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } }));
    events.push("data: [DONE]\n\n");
    return events;
  }
}
