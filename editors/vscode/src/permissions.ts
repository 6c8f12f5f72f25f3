// permissions.ts — the agent's `session/request_permission` questions,
// waiting for the user's answer on the tool call's card. Pure (no vscode).
//
// Guarantees: each question is announced once (`permission_request`) and
// settled exactly once (`permission_resolved`): by the user's choice, by
// `cancelAll` (the turn was cancelled or the chat cleared), or by the
// agent withdrawing the request (its AbortSignal). An answer naming an
// option the agent did not offer is ignored, so the webview cannot invent
// one; a cancelled question answers ACP's `cancelled` outcome.

import type { RequestPermissionRequest, RequestPermissionResponse } from "@agentclientprotocol/sdk";
import type { AgentEvent, PermissionChoice } from "./messages";

type Pending = {
  optionIds: Set<string>;
  settle: (optionId: string | null) => void;
};

export class PermissionQuestions {
  private readonly pending = new Map<string, Pending>();
  private nextId = 1;

  constructor(private readonly emit: (event: AgentEvent) => void) {}

  /** Asks the user; resolves with the agent's answer once the user (or a cancel) decides. */
  ask(request: RequestPermissionRequest, signal?: AbortSignal): Promise<RequestPermissionResponse> {
    const requestId = `perm-${this.nextId++}`;
    const options: PermissionChoice[] = request.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind }));
    return new Promise((resolve) => {
      const onAbort = () => settle(null);
      const settle = (optionId: string | null) => {
        if (!this.pending.delete(requestId)) return;
        signal?.removeEventListener("abort", onAbort);
        this.emit({ type: "permission_resolved", requestId, optionId });
        resolve(optionId === null ? { outcome: { outcome: "cancelled" } } : { outcome: { outcome: "selected", optionId } });
      };
      this.pending.set(requestId, { optionIds: new Set(options.map((o) => o.optionId)), settle });
      this.emit({
        type: "permission_request",
        requestId,
        toolCallId: request.toolCall.toolCallId,
        title: request.toolCall.title ?? "",
        options,
      });
      if (signal?.aborted) settle(null);
      else signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** The user's choice for `requestId` (null: dismissed, answered as cancelled). */
  answer(requestId: string, optionId: string | null): void {
    const question = this.pending.get(requestId);
    if (!question) return;
    if (optionId !== null && !question.optionIds.has(optionId)) return;
    question.settle(optionId);
  }

  /** Settles every open question as cancelled. */
  cancelAll(): void {
    for (const question of [...this.pending.values()]) question.settle(null);
  }

  get openCount(): number {
    return this.pending.size;
  }
}
