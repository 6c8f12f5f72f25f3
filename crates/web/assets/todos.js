// todos.js — the todo checklist panel (`#todos`), fed by the `todo` tool.
//
// Guarantees: the latest list replaces the previous one; each item is an
// `li[data-status]` (pending|in_progress|completed, anything else shown as
// pending) with its text as textContent; `#todos` is hidden when there is
// no list, and the side column is hidden when both its panels are.

import { h, byId } from './dom.js';

const KNOWN = new Set(['pending', 'in_progress', 'completed']);

/** The side column sits above the prompt (panels start collapsed there). */
export const stacked = window.matchMedia('(max-width: 1100px)');

/** Collapses or expands a side panel and its toggle button. */
export function setCollapsed(panel, toggle, collapsed) {
  panel.classList.toggle('collapsed', collapsed);
  toggle.setAttribute('aria-expanded', String(!collapsed));
}

/** Shows the side column only when the plan or the todo panel has content. */
export function syncSide() {
  const side = byId('side');
  if (side) side.hidden = byId('plan').hidden && byId('todos').hidden;
}

export function init() {
  const toggle = byId('todos-toggle');
  toggle.addEventListener('click', () => {
    const panel = byId('todos');
    setCollapsed(panel, toggle, !panel.classList.contains('collapsed'));
  });
}

export function reset() {
  byId('todo-list').replaceChildren();
  byId('todos').hidden = true;
  syncSide();
}

/** `items`: [{content, status}] from the todo tool's arguments. */
export function set(items) {
  const list = (Array.isArray(items) ? items : []).filter((i) => i && typeof i === 'object');
  const done = list.filter((i) => i.status === 'completed').length;
  byId('todo-list').replaceChildren(...list.map((item) => {
    const status = KNOWN.has(item.status) ? item.status : 'pending';
    return h('li', { dataset: { status } },
      h('span', { class: 'todo-box', 'aria-hidden': 'true' }),
      h('span', { class: 'todo-text', text: String(item.content ?? '') }),
      h('span', { class: 'sr-only', text: status === 'completed' ? ' (done)' : status === 'in_progress' ? ' (in progress)' : '' }));
  }));
  byId('todos-count').textContent = list.length ? `${done}/${list.length}` : '';
  const panel = byId('todos');
  // Above the prompt on small screens, a new list starts as its header only.
  if (panel.hidden && list.length) setCollapsed(panel, byId('todos-toggle'), stacked.matches);
  panel.hidden = list.length === 0;
  syncSide();
}
