// events.js — what each server event does to the page.
//
// Guarantees: every AgentEvent type of schema 1 is handled as the spec
// says; unknown types (custom, future ones) and malformed events are
// ignored, never fatal. `reset` forgets everything shown; the `prompt`
// agent event draws the user's message when the turn answering it starts
// (never drawn optimistically, so every tab shows it once, in its place);
// `mode_changed` sets the mode switch and approval select, whichever front
// end changed them. A handler may answer a list of follow-up steps (a long
// history) that the stream runs over frames.

import { state, reset as resetState } from './state.js';
import * as transcript from './transcript.js';
import * as cards from './cards.js';
import * as plan from './plan.js';
import * as todos from './todos.js';
import * as header from './header.js';
import * as sidebar from './sidebar.js';
import * as input from './input.js';
import * as history from './history.js';
import * as attention from './attention.js';
import * as images from './images.js';

/** `event: reset` — the server replays the session from its start next. */
export function onReset() {
  resetState();
  transcript.clear();
  cards.reset();
  plan.reset();
  todos.reset();
  header.reset();
  input.setRunning(false);
}

function setRunning(running) {
  state.running = running;
  input.setRunning(running);
}

/** One AgentEvent (`live`: not a replay's); answers follow-up steps or undefined. */
export function onEvent(ev, live = false) {
  if (!ev || typeof ev !== 'object') return undefined;
  if (live) attention.notify(ev);
  switch (ev.type) {
    case 'session_started':
      header.setSession(ev);
      sidebar.setCurrent(ev.session_id ?? null);
      sidebar.refreshSoon();
      break;
    case 'history':
      return history.steps(ev.messages);
    case 'session_saved':
      sidebar.setCurrent(ev.session_id ?? null);
      sidebar.refreshSoon();
      break;
    case 'turn_started':
      setRunning(true);
      transcript.turnStarted();
      break;
    case 'prompt':
      // Right after its turn's turn_started: the turn before it has ended.
      // The images this page sent with it show in the message itself.
      if (typeof ev.text === 'string') transcript.user(ev.text, ev.attachments, images.sentWith(ev.text));
      break;
    case 'mode_changed':
      header.modeChanged(ev);
      break;
    case 'turn_completed':
      transcript.turnCompleted(ev.stop_reason);
      cards.settle();
      setRunning(false);
      header.setCost(ev.session_cost_usd);
      header.setContext(ev.context_tokens);
      // The session file is synced before turn_completed is sent.
      sidebar.refreshSoon(100);
      break;
    case 'token':
      if (typeof ev.text === 'string') transcript.token(ev.text);
      break;
    case 'thought':
      if (typeof ev.text === 'string') transcript.thought(ev.text);
      break;
    case 'turn_restarted':
      transcript.restart(String(ev.reason ?? ''));
      break;
    case 'approval_requested':
      cards.approvalRequested(ev.call, ev.preview, ev.rule);
      break;
    case 'action':
      cards.action(ev);
      break;
    case 'observation':
      cards.observation(ev);
      break;
    case 'subagent':
      cards.subagent(ev);
      break;
    case 'tool_progress':
      cards.toolProgress(ev);
      break;
    case 'plan_proposed':
      if (ev.plan) plan.proposed(ev.plan);
      break;
    case 'plan_changed':
      if (ev.plan) plan.changed(ev.plan);
      break;
    case 'step_started':
      plan.stepStarted(ev.step);
      transcript.stepMarker(ev.step, ev.description);
      break;
    case 'step_complete':
      plan.stepComplete(ev.step, ev.result);
      break;
    case 'answer':
      if (typeof ev.text === 'string') transcript.answer(ev.text);
      break;
    case 'mcp_status':
      header.serverStatus(ev);
      break;
    case 'model_changed':
      header.modelChanged(ev);
      break;
    case 'usage':
      header.addUsage(ev.usage);
      break;
    case 'info':
    case 'warning':
    case 'error':
      transcript.notice(ev.type, String(ev.message ?? ''));
      break;
    case 'background_commands':
      // A snapshot: one a replay draws again would be stale ("running 5 s").
      if (live) transcript.notice('info', backgroundText(Array.isArray(ev.commands) ? ev.commands : []));
      break;
    default:
      // header, custom and types added later: nothing to show.
      break;
  }
  return undefined;
}

/** A `background_commands` list as `/ps` shows it (the TUI's words). */
export function backgroundText(commands) {
  if (!commands.length) return 'No background commands: the agent starts them with `shell` and `background: true`.';
  const running = commands.filter((c) => c.ended == null);
  const ended = commands.filter((c) => c.ended != null);
  const lines = ['Background commands:'];
  for (const c of [...running, ...ended]) {
    const took = duration(Number(c.seconds) || 0);
    const state = c.ended == null ? `running ${took}` : `ended: ${c.ended} after ${took}`;
    const unread = Number(c.unread) > 0 ? `, ${c.unread} bytes unread` : '';
    lines.push(`  ${c.id}  ${c.command}  (${state}${unread})`);
  }
  if (running.length) lines.push('The agent reads them with shell_output and stops them with shell_kill; they end with the session.');
  return lines.join('\n');
}

function duration(s) {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
