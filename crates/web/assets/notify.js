// notify.js — toasts and the connection banner.
//
// Guarantees: every message shown here is set with textContent (server
// error texts are untrusted); toasts remove themselves; `#connection` is
// hidden exactly when there is no connection trouble to show.

import { h, icon, byId } from './dom.js';

const TOAST_MS = 8000;

/** Shows `message` briefly; kind is "error" or "info". */
export function toast(message, kind = 'error') {
  const box = byId('toasts');
  if (!box) return;
  const el = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status' },
    icon(kind === 'error' ? 'error' : 'info'),
    h('span', { class: 'toast-text', text: String(message) }));
  const close = h('button', { type: 'button', class: 'icon-button toast-close', 'aria-label': 'Dismiss' }, icon('x'));
  close.addEventListener('click', () => el.remove());
  el.append(close);
  box.append(el);
  while (box.childElementCount > 4) box.firstElementChild.remove();
  setTimeout(() => el.remove(), TOAST_MS);
}

/**
 * Shows connection trouble in `#connection` (kind: "reconnecting" or
 * "expired"), or hides it when `message` is null.
 */
export function setConnection(message, kind = 'reconnecting') {
  const el = byId('connection');
  if (!el) return;
  if (message == null) {
    el.hidden = true;
    el.replaceChildren();
    delete el.dataset.kind;
    return;
  }
  el.dataset.kind = kind;
  el.replaceChildren(
    kind === 'expired' ? icon('lock') : h('span', { class: 'spinner small', 'aria-hidden': 'true' }),
    h('span', { text: message }));
  el.hidden = false;
}
