// header.js — the top bar: workspace, model, mode switch, approval select,
// context meter, MCP servers.
//
// Guarantees: what it shows is what the last events said (session_started,
// mode_changed, model_changed, turn_completed, mcp_status). The mode switch
// and approval select follow `mode_changed`, whichever front end (tab, TUI)
// switched them, so every tab and a replay show the session's own state;
// this tab's click shows its choice at once, once the server took the op
// (the runtime may apply it only after the running turn, and its
// mode_changed then confirms it). Server names and error messages are
// textContent. `#context-meter` carries data-used/data-window.

import { h, byId, basename, formatTokens } from './dom.js';
import { state } from './state.js';
import { sendOp } from './api.js';

export function init() {
  for (const mode of ['react', 'plan']) {
    byId(`mode-${mode}`).addEventListener('click', () => chooseMode(mode));
  }
  const select = byId('approval');
  select.addEventListener('change', async () => {
    const approval = select.value;
    if (approval === state.approval) return;
    if (await sendOp({ op: 'set_approval', approval })) setApproval(approval);
    else select.value = state.approval;
  });
  // The model name invites switching: it starts a `/model NAME` command.
  byId('model').addEventListener('click', () => {
    const prompt = byId('prompt');
    prompt.value = '/model ';
    prompt.focus();
    prompt.setSelectionRange(prompt.value.length, prompt.value.length);
    prompt.dispatchEvent(new Event('input'));
  });
  byId('servers').addEventListener('click', (e) => {
    const pill = e.target.closest('.server');
    if (!pill) return;
    const open = !pill.classList.contains('open');
    for (const other of byId('servers').querySelectorAll('.server.open')) other.classList.remove('open');
    pill.classList.toggle('open', open);
    pill.setAttribute('aria-expanded', String(open));
  });
  document.addEventListener('click', (e) => {
    if (!e.target.closest('#servers')) closeServerPopups();
  });
}

export function closeServerPopups() {
  for (const pill of byId('servers').querySelectorAll('.server.open')) {
    pill.classList.remove('open');
    pill.setAttribute('aria-expanded', 'false');
  }
}

/** Asks for another mode (set_mode); the switch follows once accepted. */
export async function chooseMode(mode) {
  if (mode === state.mode) return true;
  const ok = await sendOp({ op: 'set_mode', mode });
  if (ok) setMode(mode);
  return ok;
}

export function reset() {
  renderAll();
}

/** `session_started`: the whole bar. */
export function setSession(info) {
  state.session = info;
  state.sessionId = info.session_id ?? null;
  state.workspace = String(info.workspace ?? '');
  state.provider = String(info.provider ?? '');
  state.model = String(info.model ?? '');
  state.contextWindow = Number(info.context_window) || 0;
  state.contextTokens = Number(info.context_tokens) || 0;
  state.cost.usd = typeof info.cost_usd === 'number' ? info.cost_usd : null;
  state.mode = info.mode === 'plan' ? 'plan' : 'react';
  state.approval = ['ask', 'auto', 'read_only'].includes(info.approval) ? info.approval : 'ask';
  const servers = new Map();
  for (const s of Array.isArray(info.mcp_servers) ? info.mcp_servers : []) {
    if (s && typeof s.name === 'string') servers.set(s.name, { name: s.name, state: s.state, message: s.message });
  }
  state.servers = servers;
  renderAll();
}

function renderAll() {
  const name = state.workspace ? basename(state.workspace) : 'axon';
  const ws = byId('workspace');
  ws.textContent = name;
  ws.title = state.workspace;
  document.title = state.workspace ? `${name} · axon` : 'axon';
  renderModel();
  setMode(state.mode);
  setApproval(state.approval);
  renderContext();
  renderServers();
}

function renderModel() {
  const el = byId('model');
  el.replaceChildren(h('span', { class: 'model-name', text: state.model || 'no model' }));
  if (state.provider) el.append(h('span', { class: 'provider', text: state.provider }));
  el.title = state.model ? `${state.provider} ${state.model}: /model NAME switches` : '';
}

export function setMode(mode) {
  state.mode = mode;
  byId('mode-react').setAttribute('aria-pressed', String(mode === 'react'));
  byId('mode-plan').setAttribute('aria-pressed', String(mode === 'plan'));
  document.body.dataset.mode = mode;
}

export function setApproval(approval) {
  state.approval = approval;
  byId('approval').value = approval;
  byId('approval').dataset.value = approval;
}

/** `mode_changed {mode, approval}`: the session's state, from any front end. */
export function modeChanged(ev) {
  if (ev.mode === 'react' || ev.mode === 'plan') setMode(ev.mode);
  if (['ask', 'auto', 'read_only'].includes(ev.approval)) setApproval(ev.approval);
}

/** `model_changed` */
export function modelChanged(ev) {
  state.provider = String(ev.provider ?? state.provider);
  state.model = String(ev.model ?? state.model);
  state.contextWindow = Number(ev.context_window) || state.contextWindow;
  renderModel();
  renderContext();
}

/** `turn_completed` / `session_started`: tokens the next request sends. */
export function setContext(tokens) {
  state.contextTokens = Number(tokens) || 0;
  renderContext();
}

/** `usage`: adds up the session's token use (shown in the meter's title). */
export function addUsage(usage) {
  if (!usage) return;
  state.usage.input += Number(usage.input_tokens) || 0;
  state.usage.output += Number(usage.output_tokens) || 0;
  renderContext();
}

/**
 * `turn_completed` (`session_cost_usd`) / `session_started` (`cost_usd`): the
 * session's cost so far as the runtime counts it, a resumed session's
 * earlier runs included; absent when a call's model has no known price.
 */
export function setCost(usd) {
  state.cost.usd = typeof usd === 'number' ? usd : null;
  renderContext();
}

function renderContext() {
  const meter = byId('context-meter');
  const used = state.contextTokens;
  const win = state.contextWindow;
  const ratio = win > 0 ? Math.min(1, used / win) : 0;
  meter.dataset.used = String(used);
  meter.dataset.window = String(win);
  meter.dataset.level = ratio > 0.9 ? 'high' : ratio > 0.7 ? 'mid' : 'low';
  meter.setAttribute('aria-valuenow', String(Math.round(ratio * 100)));
  const cost = state.cost.usd !== null ? ` · $${state.cost.usd.toFixed(4)}` : '';
  byId('context-text').textContent = (win ? `${formatTokens(used)} / ${formatTokens(win)}` : formatTokens(used)) + cost;
  byId('context-fill').style.width = `${(ratio * 100).toFixed(1)}%`;
  const spent = state.usage.input + state.usage.output;
  meter.title = `Context: ${used.toLocaleString()} of ${win.toLocaleString()} tokens (${Math.round(ratio * 100)}%)`
    + (spent ? `\nUsed since this page loaded: ${state.usage.input.toLocaleString()} in, ${state.usage.output.toLocaleString()} out` : '');
}

/** `mcp_status` */
export function serverStatus(ev) {
  if (typeof ev.server !== 'string') return;
  state.servers.set(ev.server, { name: ev.server, state: ev.state, message: ev.message });
  renderServers();
}

const STATE_TEXT = { connecting: 'connecting', ready: 'ready', error: 'error', closed: 'closed', needs_login: 'needs login' };

function renderServers() {
  const box = byId('servers');
  box.hidden = state.servers.size === 0;
  box.replaceChildren(...[...state.servers.values()].map((s) => {
    const st = STATE_TEXT[s.state] ? s.state : 'unknown';
    const label = `${s.name}: ${STATE_TEXT[st] ?? String(s.state)}${s.message ? ` (${s.message})` : ''}`;
    return h('button', {
      type: 'button',
      class: 'server',
      dataset: { name: s.name, state: st },
      title: label,
      'aria-label': `MCP server ${label}`,
      'aria-expanded': 'false',
    },
    h('span', { class: 'dot', 'aria-hidden': 'true' }),
    h('span', { class: 'server-name', text: s.name }),
    h('span', { class: 'server-pop', role: 'tooltip' },
      h('span', { class: 'server-pop-title' }, h('span', { class: 'dot', 'aria-hidden': 'true' }), h('span', { text: `${s.name} · ${STATE_TEXT[st] ?? String(s.state)}` })),
      s.message ? h('span', { class: 'server-pop-msg', text: String(s.message) }) : null));
  }));
}
