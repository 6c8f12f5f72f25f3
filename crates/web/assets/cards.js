// cards.js — one card per tool call: name, arguments, preview, approval,
// result.
//
// Guarantees: one card per tool call, not per call id: ids repeat across
// model calls (the text protocol numbers blocks block_1, block_2… afresh
// in every reply; servers without ids get call_0…). An id's events go to
// its NEWEST card (approval_requested, action and observation of one call
// land on it), and a new card starts when an approval_requested or action
// comes for a card that already had its action or ended, or an observation
// for one that already has its result. `data-state` is always one of
// running|waiting|done|error|refused; approval buttons exist only while
// the call waits and are removed once answered (here or in any other
// tab); arguments, previews and results are textContent (images from
// tools only as base64 data: URLs of raster types).

import { h, icon, clamp, prettyJson } from './dom.js';
import { renderPreview } from './diff.js';
import { sendOp } from './api.js';
import { serverOfTool } from './state.js';
import * as transcript from './transcript.js';
import * as todos from './todos.js';
import * as attention from './attention.js';

const ARG_LINES = 6;
const RESULT_LINES = 8;
const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** call id → its newest card record */
let cards = new Map();
/** Cards not finished yet (a turn's end takes their approval away). */
let open = new Set();

export function reset() {
  cards = new Map();
  open = new Set();
  attention.reset();
}

const STATE_LABEL = {
  running: 'Running',
  waiting: 'Waiting for approval',
  done: 'Done',
  error: 'Failed',
  refused: 'Refused',
};

/** Tools whose whole content is shown in a panel (the todo list, the
 * plan): their card is one line. */
const PANELED = new Set(['todo', 'submit_plan']);

/** A one-line summary of a call: its path, command, pattern... */
function summaryOf(call) {
  const a = call && call.arguments;
  if (!a || typeof a !== 'object') return '';
  if (call.name === 'todo' && Array.isArray(a.items)) {
    const done = a.items.filter((i) => i && i.status === 'completed').length;
    return `${done} of ${a.items.length} done`;
  }
  if (call.name === 'submit_plan' && Array.isArray(a.steps)) {
    return `${a.steps.length} step${a.steps.length === 1 ? '' : 's'}, in the plan panel`;
  }
  for (const key of ['path', 'file_path', 'command', 'pattern', 'query', 'url', 'name', 'skill']) {
    if (typeof a[key] === 'string' && a[key]) return a[key];
  }
  const first = Object.values(a).find((v) => typeof v === 'string' && v);
  return first ? first.split('\n')[0] : '';
}

function build(call, preview) {
  const name = String(call.name ?? 'tool');
  const server = serverOfTool(name, preview);
  const status = h('span', { class: 'card-status', 'aria-hidden': 'true' });
  const stateLabel = h('span', { class: 'state-label' });
  const head = h('div', { class: 'card-head' },
    status,
    h('span', { class: 'tool-name', text: name }),
    server ? h('span', { class: 'server', title: `MCP server ${server}`, text: server }) : null,
    h('span', { class: 'card-summary', text: summaryOf(call) }),
    stateLabel);
  const body = h('div', { class: 'card-body' });
  const el = h('div', { class: PANELED.has(name) ? 'card compact' : 'card', dataset: { callId: String(call.id), tool: name } }, head, body);
  const card = { el, body, stateLabel, call, state: null, acted: false, args: null, preview: null, approval: null, result: null };
  if (!PANELED.has(name)) setArgs(card, call.arguments);
  return card;
}

function setArgs(card, args) {
  if (card.args || args === undefined) return;
  const text = prettyJson(args);
  if (!text || text === '{}') return;
  card.args = clamp(h('pre', { class: 'args', text }), text, ARG_LINES, 'args-wrap');
  card.body.prepend(card.args);
}

function setState(card, state) {
  card.state = state;
  card.el.dataset.state = state;
  card.stateLabel.textContent = STATE_LABEL[state] ?? '';
}

/**
 * The runtime sends a call's approval_requested, then its action, then its
 * observation: a card that has had its action (or ended) belongs to an
 * earlier call when another approval_requested or action comes for its id.
 */
function pastAction(card) {
  return card.acted || card.result !== null || ['done', 'error', 'refused'].includes(card.state);
}

/** A card that has its result: the id's next observation is another call's. */
function answered(card) {
  return card.result !== null;
}

/** A new card for `call`, now its id's newest. */
function create(call, preview) {
  const card = build(call, preview);
  cards.set(call.id, card);
  open.add(card);
  transcript.add(card.el);
  return card;
}

/**
 * The card `call`'s event goes to: the id's newest card unless `isOther`
 * says that card belongs to an earlier call with the same id.
 */
function ensure(call, preview, isOther) {
  const card = cards.get(call.id);
  if (!card || isOther(card)) return create(call, preview);
  if (card.call.arguments === undefined && call.arguments !== undefined) {
    card.call = call;
    setArgs(card, call.arguments);
  }
  return card;
}

function showPreview(card, preview, call) {
  const el = renderPreview(preview, call);
  if (card.preview) card.preview.replaceWith(el);
  else if (card.approval) card.approval.before(el);
  else if (card.result) card.result.before(el);
  else card.body.append(el);
  card.preview = el;
  // A diff or command says it better than the raw arguments, and the
  // other previews show the arguments themselves: never twice.
  if (card.args && preview) card.args.hidden = true;
}

function removeApproval(card, answered) {
  if (!card.approval) return;
  attention.answered(card.approval);
  if (answered) card.approval.replaceWith(h('div', { class: 'approval-answer', text: answered }));
  else card.approval.remove();
  card.approval = null;
}

// What "always" does: the rule, saved for later sessions too. The words
// are axon_protocol::ALWAYS_SAVES (checked by a test in src/assets.rs).
const ALWAYS_SAVES = "saved for this workspace's later sessions too; `axon permissions rm` revokes it";
const alwaysText = (rule) => `${String(rule.description ?? '')} (${ALWAYS_SAVES})`;

// "Always" is offered only with the rule it would save (`rule`), named in
// its tooltip and accessible name.
function showApproval(card, rule) {
  if (card.approval) return;
  const decisions = [
    ['once', 'Allow once', 'primary', null],
    rule ? ['always', 'Always', '', alwaysText(rule)] : null,
    ['deny', 'Deny', 'danger', null],
  ].filter(Boolean);
  const buttons = decisions.map(([decision, label, kind, title]) =>
    h('button', { type: 'button', class: `btn ${kind}`.trim(), dataset: { decision }, text: label,
      title: title || null, 'aria-label': title ? `Always: ${title}` : null }));
  const el = h('div', { class: 'approval', role: 'group', 'aria-label': `Allow ${card.call.name}?` },
    h('span', { class: 'approval-question' }, icon('shield'), h('span', { text: 'Allow this call?' })),
    h('div', { class: 'approval-buttons' }, buttons),
    rule ? h('div', { class: 'approval-rule', text: `Always: ${alwaysText(rule)}` }) : null);
  el.addEventListener('click', async (e) => {
    const button = e.target.closest('button[data-decision]');
    if (!button || card.approval !== el) return;
    const decision = button.dataset.decision;
    for (const b of buttons) b.disabled = true;
    const ok = await sendOp({ op: 'approve', call_id: String(card.call.id), decision: { decision } });
    if (!ok) {
      for (const b of buttons) b.disabled = false;
      return;
    }
    if (card.approval === el) removeApproval(card, `${button.textContent}: sent`);
  });
  card.approval = el;
  if (card.result) card.result.before(el);
  else card.body.append(el);
  attention.waitingOn(el);
}

/** `approval_requested {call, preview, rule?}` */
export function approvalRequested(call, preview, rule) {
  if (!call || call.id == null) return;
  const card = ensure(call, preview, pastAction);
  showPreview(card, preview, call);
  setState(card, 'waiting');
  showApproval(card, rule);
}

/** `action {call, refused?, preview?}` */
export function action(ev) {
  const call = ev.call;
  if (!call || call.id == null) return;
  const card = ensure(call, ev.preview, pastAction);
  card.acted = true;
  removeApproval(card, null);
  if (card.el.querySelector('.approval-answer')) card.el.querySelector('.approval-answer').remove();
  if (ev.preview) showPreview(card, ev.preview, call);
  setState(card, ev.refused ? 'refused' : 'running');
  if (call.name === 'todo' && call.arguments && Array.isArray(call.arguments.items)) todos.set(call.arguments.items);
}

/** `observation {call_id, name, output}` */
export function observation(ev) {
  if (ev.call_id == null) return;
  const card = ensure({ id: ev.call_id, name: ev.name, arguments: undefined }, undefined, answered);
  finish(card, ev.output);
}

/** The text of a `tool_progress`: its message, then a percentage (or the count without a total). */
export function progressText(ev) {
  const message = typeof ev.message === 'string' ? ev.message.trim() : '';
  const progress = Number(ev.progress);
  const total = Number(ev.total);
  let amount = '';
  if (Number.isFinite(total) && total > 0 && Number.isFinite(progress)) {
    amount = `${Math.round(Math.min(100, Math.max(0, (progress / total) * 100)))}%`;
  } else if (Number.isFinite(progress) && progress > 0) {
    amount = String(progress);
  }
  if (message && amount) return `${message} · ${amount}`;
  return message || amount;
}

/** `tool_progress {call_id, message?, progress, total?}`: the running card's latest progress. */
export function toolProgress(ev) {
  if (ev.call_id == null) return;
  const card = cards.get(ev.call_id);
  if (!card || answered(card)) return;
  const text = progressText(ev);
  if (!text) return;
  if (!card.progress) {
    card.progress = h('div', { class: 'card-progress', role: 'status' });
    card.body.append(card.progress);
  }
  card.progress.textContent = text;
}

/**
 * `subagent {call_id, agent, event}`: a step of the subagent the call
 * `call_id` started, listed in that call's card above its result (as
 * text). A call of the subagent's that asked for approval has a card of
 * its own; its result ends that card.
 */
export function subagent(ev) {
  if (ev.call_id == null) return;
  let path = String(ev.agent ?? '');
  let inner = ev.event;
  while (inner && inner.type === 'subagent') {
    path += ` › ${String(inner.agent ?? '')}`;
    inner = inner.event;
  }
  if (!inner || typeof inner !== 'object') return;
  const card = cards.get(ev.call_id);
  if (inner.type === 'observation' && inner.call_id !== ev.call_id) {
    const asked = cards.get(inner.call_id);
    if (asked && asked !== card && open.has(asked) && !answered(asked)) finish(asked, inner.output);
  }
  if (!card || answered(card)) return;
  let line = null;
  if (inner.type === 'action' && !inner.refused && inner.call) {
    line = `${path}: ${String(inner.call.name ?? '')} ${summaryOf(inner.call)}`;
  } else if (inner.type === 'observation') {
    const mark = inner.output && inner.output.is_error ? '✗' : '✓';
    line = `${path}: ${mark} ${String(inner.name ?? '')}`;
  } else if (inner.type === 'warning' || inner.type === 'error') {
    line = `${path}: ${String(inner.message ?? '')}`;
  }
  if (line === null) return;
  if (!card.steps) {
    card.steps = h('pre', { class: 'subagent-steps' });
    card.body.append(card.steps);
  }
  const text = card.steps.textContent;
  card.steps.textContent = (text ? `${text}\n` : '') + line.trimEnd();
}

function finish(card, output) {
  open.delete(card);
  if (card.progress) {
    card.progress.remove();
    card.progress = null;
  }
  removeApproval(card, null);
  const isError = Boolean(output && output.is_error);
  showResult(card, output, isError);
  if (card.state !== 'refused') setState(card, isError ? 'error' : 'done');
}

/** A result's text without the diff it repeats when the card shows one. */
function withoutDiff(card, text, isError) {
  const diff = card.preview && (card.preview.matches('.diff') || card.preview.querySelector('.diff'));
  if (isError || !diff) return text;
  const at = text.search(/\n(--- |@@ )/);
  return at < 0 ? text : text.slice(0, at);
}

function showResult(card, output, isError) {
  const parts = output && Array.isArray(output.content) ? output.content : [];
  const all = parts.filter((p) => p && p.type === 'text').map((p) => String(p.text ?? '')).join('\n');
  const text = withoutDiff(card, all, isError);
  const images = parts.filter((p) => p && p.type === 'image' && IMAGE_TYPES.test(p.media_type) && BASE64.test(p.data ?? ''));
  const pre = h('pre', { class: isError ? 'result error' : 'result', text: text || (images.length ? '' : '(no output)') });
  if (!text && !images.length) pre.classList.add('empty');
  const el = h('div', { class: 'result-wrap' },
    clamp(pre, text, RESULT_LINES),
    images.map((img) => h('img', { class: 'result-image', alt: 'image returned by the tool', src: `data:${img.media_type};base64,${img.data}` })));
  // A paneled card is one line: its content is in its panel.
  if (PANELED.has(card.call.name) && !isError) el.hidden = true;
  if (card.result) card.result.replaceWith(el);
  else card.body.append(el);
  card.result = el;
}

/** Turn ended: no call still waits for an answer. */
export function settle() {
  for (const card of open) {
    if (card.approval) {
      removeApproval(card, null);
      if (card.state === 'waiting') setState(card, 'refused');
    }
  }
}

/**
 * The diff an edit's arguments say it made, as a `diff` preview, for a
 * call replayed from `history` (its live preview is gone): the replaced
 * text's lines as removed, the new text's as added, without line numbers
 * (the file may have changed since). null for any other call.
 */
export function diffOfArguments(call) {
  const a = call && call.arguments;
  if (!a || typeof a !== 'object' || typeof a.path !== 'string') return null;
  const lines = (text, sign) => (text === '' ? [] : text.replace(/\n$/, '').split('\n').map((l) => sign + l));
  let body;
  if (call.name === 'edit_file' && typeof a.old_str === 'string' && typeof a.new_str === 'string') {
    body = [...lines(a.old_str, '-'), ...lines(a.new_str, '+')];
  } else if (call.name === 'write_file' && typeof a.content === 'string') {
    body = lines(a.content, '+');
  } else {
    return null;
  }
  return { kind: 'diff', path: a.path, diff: ['@@ @@', ...body].join('\n') + '\n', created: false };
}

/**
 * A finished call from `history`: always a card of its own (an id may
 * repeat), holding the tool message that answered it; a refused call is
 * "Refused", an edit shows its diff instead of its arguments.
 */
export function fromHistory(call, toolMessage) {
  if (!call || call.id == null) return;
  const card = create(call);
  if (call.name === 'todo' && call.arguments && Array.isArray(call.arguments.items)) todos.set(call.arguments.items);
  const diff = diffOfArguments(call);
  if (diff) showPreview(card, diff, call);
  if (toolMessage && toolMessage.refused) setState(card, 'refused');
  if (toolMessage) {
    finish(card, { content: toolMessage.content, is_error: Boolean(toolMessage.is_error) });
  } else {
    open.delete(card);
    setState(card, 'done');
    showResult(card, { content: [] }, false);
  }
}
