// attention.js — a call waiting for approval is never missed: it is
// scrolled into view when it arrives, and while one is off-screen the tab
// title and the header say so (`#approval-flag`, which scrolls to it).
// While the page is hidden or not focused, a desktop notification says
// that a call or a form waits, a plan waits, or a turn ended.
//
// Guarantees: the flag and the title's mark are shown exactly while some
// approval element is in the page, waiting, and not visible in the
// transcript; answering it (here or in another tab) clears them. A
// notification comes only for a live event (never a replay's), only with
// the browser's permission (asked on the user's first prompt, once), and
// one at a time per kind (its tag replaces the last).

import { byId } from './dom.js';

const MARK = '● Approval needed · ';

/** Waiting approval elements → whether each is on screen. */
const waiting = new Map();
let observer = null;

export function init() {
  observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (waiting.has(entry.target)) waiting.set(entry.target, entry.isIntersecting);
    }
    update();
  }, { root: byId('transcript'), threshold: 0.5 });
  byId('approval-flag').addEventListener('click', () => {
    const first = [...waiting.keys()].find((el) => el.isConnected);
    if (first) first.scrollIntoView({ block: 'center' });
  });
}

/** An approval `el` now waits: shown to the user at once. */
export function waitingOn(el) {
  if (!observer || waiting.has(el)) return;
  waiting.set(el, false);
  observer.observe(el);
  // It may still be in a batch's fragment: reveal it once it is drawn.
  requestAnimationFrame(() => {
    if (waiting.has(el) && el.isConnected) el.scrollIntoView({ block: 'center' });
  });
}

/** The approval `el` was answered or withdrawn. */
export function answered(el) {
  if (!observer || !waiting.delete(el)) return;
  observer.unobserve(el);
  update();
}

/** Everything shown was cleared (a new conversation, a replay). */
export function reset() {
  for (const el of waiting.keys()) observer?.unobserve(el);
  waiting.clear();
  update();
}

function update() {
  const hidden = [...waiting.entries()].some(([el, seen]) => el.isConnected && !seen);
  byId('approval-flag').hidden = !hidden;
  const title = document.title.startsWith(MARK) ? document.title.slice(MARK.length) : document.title;
  document.title = hidden ? MARK + title : title;
}

/** Asks, once, for leave to notify (from a user's gesture: a prompt sent). */
export function askToNotify() {
  if (!('Notification' in window) || Notification.permission !== 'default') return;
  // A dismissed question leaves the permission at 'default': ask once only.
  try {
    if (localStorage.getItem('axon.notifyAsked')) return;
    localStorage.setItem('axon.notifyAsked', '1');
  } catch {
    // Storage off: asking again is the lesser harm.
  }
  try {
    const asked = Notification.requestPermission();
    if (asked && typeof asked.catch === 'function') asked.catch(() => {});
  } catch {
    // An old browser's callback form, or none: no notifications.
  }
}

/** A desktop notification for a live event that waits on an absent user. */
export function notify(ev) {
  if (!('Notification' in window) || Notification.permission !== 'granted') return;
  if (!document.hidden && document.hasFocus()) return;
  let body;
  switch (ev.type) {
    case 'approval_requested':
      body = `axon needs your permission to use ${String(ev.call?.name ?? 'a tool')}`;
      break;
    case 'elicitation':
      body = `${String(ev.server ?? 'An MCP server')} asks you for input`;
      break;
    case 'plan_proposed':
      body = 'axon proposes a plan for you to approve';
      break;
    case 'turn_completed':
      if (ev.stop_reason === 'cancelled') return;
      body = ev.stop_reason === 'end_turn' ? 'axon has finished' : `axon stopped (${String(ev.stop_reason).replace(/_/g, ' ')})`;
      break;
    default:
      return;
  }
  try {
    const shown = new Notification('axon', { body, tag: `axon-${ev.type}` });
    shown.onclick = () => {
      window.focus();
      shown.close();
    };
  } catch {
    // Some browsers allow notifications only from a service worker.
  }
}
