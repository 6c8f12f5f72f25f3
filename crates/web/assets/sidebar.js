// sidebar.js — the sessions list: new, resume, export, delete.
//
// Guarantees: the list is this workspace's saved sessions as /api/sessions
// last answered (refreshed when a session is saved or replaced, debounced);
// the open session has class `current`; titles are textContent; Delete asks
// for confirmation first and shows the server's refusal (e.g. 409 for the
// open session). Docked on wide screens, an overlay drawer on narrow ones.

import { h, icon, byId, relativeTime } from './dom.js';
import { state } from './state.js';
import { sendOp, listSessions, deleteSession, exportUrl, isExpired } from './api.js';
import { toast } from './notify.js';

const NARROW = window.matchMedia('(max-width: 760px)');
const STORE_KEY = 'axon:sidebar-open';

let sessions = [];
let timer = 0;
let loaded = false;

export function init() {
  byId('sidebar-toggle').addEventListener('click', () => setOpen(!isOpen()));
  byId('sidebar-close').addEventListener('click', () => setOpen(false));
  byId('backdrop').addEventListener('click', () => setOpen(false));
  byId('new-session').addEventListener('click', async () => {
    if (await sendOp({ op: 'new_conversation' })) {
      if (NARROW.matches) setOpen(false);
      byId('prompt').focus();
    }
  });
  byId('sessions').addEventListener('click', onListClick);
  let stored = null;
  try {
    stored = localStorage.getItem(STORE_KEY);
  } catch {
    // Storage may be disabled; the default applies.
  }
  setOpen(!NARROW.matches && stored !== '0', false);
  NARROW.addEventListener('change', () => setOpen(!NARROW.matches && isOpen(), false));
  // Relative times age; redraw them now and then.
  setInterval(render, 60_000);
}

export function isOpen() {
  return byId('app').classList.contains('sidebar-open');
}

/** Opens or closes the sidebar (remembered on wide screens). */
export function setOpen(open, remember = true) {
  byId('app').classList.toggle('sidebar-open', open);
  byId('sidebar-toggle').setAttribute('aria-expanded', String(open));
  byId('backdrop').hidden = !(open && NARROW.matches);
  byId('sidebar').inert = !open;
  if (remember && !NARROW.matches) {
    try {
      localStorage.setItem(STORE_KEY, open ? '1' : '0');
    } catch {
      // Not remembered; harmless.
    }
  }
  if (open) {
    refreshSoon(0);
    if (NARROW.matches) byId('new-session').focus();
  }
}

/** True when the sidebar is an open drawer (Esc closes it). */
export function isDrawerOpen() {
  return isOpen() && NARROW.matches;
}

/** Marks the open session. */
export function setCurrent(id) {
  state.sessionId = id ?? null;
  render();
}

/** Reloads the list soon (several triggers in a burst make one request). */
export function refreshSoon(delay = 400) {
  clearTimeout(timer);
  timer = setTimeout(refresh, delay);
}

async function refresh() {
  if (isExpired()) return;
  try {
    sessions = await listSessions();
    loaded = true;
  } catch (err) {
    if (!loaded) byId('sessions-empty').textContent = err.message;
    return;
  }
  render();
}

let renderedKey = '';

// Redraws only when something shown changed, so a refresh neither moves
// keyboard focus nor replaces the elements under the pointer.
function render() {
  const list = byId('sessions');
  const empty = byId('sessions-empty');
  empty.hidden = sessions.length > 0;
  if (loaded && !sessions.length) empty.textContent = 'No saved sessions yet.';
  const now = Date.now();
  const key = JSON.stringify([state.sessionId, sessions.map((s) => [s.id, s.title, s.messages, s.model, relativeTime(s.updated_at || s.created_at, now)])]);
  if (key === renderedKey) return;
  renderedKey = key;
  const focused = document.activeElement && list.contains(document.activeElement)
    ? { id: document.activeElement.closest('.session')?.dataset.id, cls: document.activeElement.classList[0] } : null;
  list.replaceChildren(...sessions.map((s) => {
    const current = s.id === state.sessionId;
    const title = String(s.title || '').trim() || 'Untitled session';
    const meta = [relativeTime(s.updated_at || s.created_at, now),
      Number.isFinite(s.messages) ? `${s.messages} message${s.messages === 1 ? '' : 's'}` : null]
      .filter(Boolean).join(' · ');
    return h('li', { class: current ? 'session current' : 'session', dataset: { id: s.id } },
      h('button', { type: 'button', class: 'resume', title: `${title}\n${s.id}${s.model ? `\n${s.model}` : ''}`, 'aria-current': current ? 'true' : null },
        h('span', { class: 'session-title', text: title }),
        h('span', { class: 'session-meta', text: meta })),
      h('div', { class: 'session-actions' },
        h('a', { class: 'export icon-button', href: exportUrl(s.id), download: `${s.id}.md`, title: 'Export as Markdown', 'aria-label': `Export ${title}` }, icon('download')),
        h('button', { type: 'button', class: 'delete icon-button', title: 'Delete', 'aria-label': `Delete ${title}` }, icon('trash'))));
  }));
  if (focused && focused.id) {
    const item = [...list.children].find((li) => li.dataset.id === focused.id);
    (item?.querySelector(`.${focused.cls}`) ?? item?.querySelector('button.resume'))?.focus();
  }
}

async function onListClick(e) {
  const item = e.target.closest('.session');
  if (!item) return;
  const id = item.dataset.id;
  if (e.target.closest('button.resume')) {
    if (id !== state.sessionId && !(await sendOp({ op: 'resume', id }))) return;
    if (NARROW.matches) setOpen(false);
    return;
  }
  if (e.target.closest('button.delete')) {
    const s = sessions.find((x) => x.id === id);
    const title = (s && String(s.title || '').trim()) || id;
    if (!window.confirm(`Delete the session “${title}”? This cannot be undone.`)) return;
    try {
      await deleteSession(id);
    } catch (err) {
      toast(err.message);
      return;
    }
    sessions = sessions.filter((x) => x.id !== id);
    render();
    refreshSoon();
  }
}
