// recorder.ts — what a panel would receive, for the tests: every
// HostMessage a ChatSession posts, and waiting on a condition over them.
//
// Guarantees: `until` re-checks its condition on every message (no
// polling, no sleeps) and fails after a generous deadline naming what it
// waited for and what arrived; `waitFor`, for states no message announces
// (files, processes), polls and fails the same way.

import type { AgentEvent, HostMessage } from "../../src/messages";

export const PATIENCE_MS = 60_000;

/**
 * Waits until `probe` gives a value, for a state no message announces (a
 * file appearing, a process gone): checked every 20 ms, failing after
 * `ms` with what it waited for.
 */
export async function waitFor<T>(what: string, probe: () => T | undefined, ms = PATIENCE_MS): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export class Recorder {
  readonly messages: HostMessage[] = [];
  private waiters: (() => void)[] = [];
  /** Called with every message after it is recorded (a test playing the user). */
  readonly listeners: ((message: HostMessage) => void)[] = [];

  readonly post = (message: HostMessage): void => {
    this.messages.push(message);
    for (const listener of this.listeners) listener(message);
    for (const wake of [...this.waiters]) wake();
  };

  get events(): AgentEvent[] {
    return this.messages.flatMap((m) => (m.type === "agent_event" ? [m.event] : []));
  }

  /** The events from message index `from` on. */
  eventsFrom(from: number): AgentEvent[] {
    return this.messages.slice(from).flatMap((m) => (m.type === "agent_event" ? [m.event] : []));
  }

  /** Resolves with the first event (from message `from` on) that `pred` accepts. */
  until<T extends AgentEvent>(what: string, pred: (e: AgentEvent) => e is T, from?: number): Promise<T>;
  until(what: string, pred: (e: AgentEvent) => boolean, from?: number): Promise<AgentEvent>;
  until(what: string, pred: (e: AgentEvent) => boolean, from = 0): Promise<AgentEvent> {
    return new Promise((resolve, reject) => {
      const look = () => {
        const found = this.eventsFrom(from).find(pred);
        if (found) {
          done();
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${what} within ${PATIENCE_MS} ms; got ${JSON.stringify(this.messages).slice(-4000)}`));
      }, PATIENCE_MS);
      const done = () => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== look);
      };
      this.waiters.push(look);
      look();
    });
  }
}

/** The streamed answer text among `events`. */
export function answerText(events: AgentEvent[]): string {
  return events.map((e) => (e.type === "token" ? e.content : "")).join("");
}
