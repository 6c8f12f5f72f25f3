// input.js — the prompt box: send, stop, history, mentions, images.
//
// Guarantees: Enter sends and Shift+Enter adds a line; a prompt is sent as
// one `user_turn` whose attachments are exactly the `@mentions` that name
// known workspace files and the images pasted or dropped (images.js); the
// user's message is NOT drawn here (it appears from the runtime's `prompt`
// event when its turn starts, in every tab alike, so a prompt queued
// behind a running turn shows after it); a failed send puts the text and
// the images back. ArrowUp/ArrowDown on the first/last line
// recall the last 100 prompts, kept per workspace in localStorage.

import { byId } from './dom.js';
import { state } from './state.js';
import { sendOp } from './api.js';
import * as complete from './complete.js';
import * as commands from './commands.js';
import * as attention from './attention.js';
import * as images from './images.js';

const HISTORY_MAX = 100;

let ta = null;
let sending = false;
/** History navigation: index into entries (entries.length = the draft). */
let nav = null;

export function init() {
  ta = byId('prompt');
  complete.init(ta, byId('complete'), commands.commandList);
  ta.addEventListener('input', () => {
    nav = null;
    autosize();
    complete.update();
    syncSend();
  });
  ta.addEventListener('keydown', onKey);
  images.init(ta, document.querySelector('.composer-box'), syncSend);
  byId('send').addEventListener('click', () => submit());
  byId('stop').addEventListener('click', () => stop());
  window.addEventListener('resize', autosize);
  syncSend();
}

/** Shows Stop while a turn runs. */
export function setRunning(running) {
  byId('stop').hidden = !running;
  document.body.classList.toggle('running', running);
}

export function stop() {
  return sendOp({ op: 'cancel' });
}

export function focus() {
  ta.focus();
}

function syncSend() {
  byId('send').disabled = sending || (!ta.value.trim() && !images.any());
}

// Grows with its text up to 40% of the window, then scrolls.
function autosize() {
  ta.style.height = 'auto';
  const max = Math.round(window.innerHeight * 0.4);
  ta.style.height = `${Math.min(ta.scrollHeight, max)}px`;
  ta.style.overflowY = ta.scrollHeight > max ? 'auto' : 'hidden';
}

function onKey(e) {
  if (complete.onKey(e)) return;
  if (e.isComposing || e.keyCode === 229) return;
  if (e.key === 'Enter' && !e.shiftKey && !e.altKey) {
    e.preventDefault();
    submit();
    return;
  }
  if (e.shiftKey || e.altKey || e.ctrlKey || e.metaKey) return;
  if (e.key === 'ArrowUp' && !ta.value.slice(0, ta.selectionStart).includes('\n')) {
    if (recall(-1)) e.preventDefault();
  } else if (e.key === 'ArrowDown' && !ta.value.slice(ta.selectionEnd).includes('\n')) {
    if (recall(1)) e.preventDefault();
  }
}

function storageKey() {
  return `axon:history:${state.workspace || 'default'}`;
}

function loadHistory() {
  try {
    const list = JSON.parse(localStorage.getItem(storageKey()) || '[]');
    return Array.isArray(list) ? list.filter((x) => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function remember(text) {
  const list = loadHistory().filter((x) => x !== text);
  list.push(text);
  try {
    localStorage.setItem(storageKey(), JSON.stringify(list.slice(-HISTORY_MAX)));
  } catch {
    // Storage full or disabled: history is a convenience.
  }
}

// Moves through the history; false when there is nothing further that way.
function recall(delta) {
  const entries = loadHistory();
  if (!nav) {
    if (delta > 0 || !entries.length) return false;
    nav = { entries, index: entries.length, draft: ta.value };
  }
  const next = nav.index + delta;
  if (next < 0 || next > nav.entries.length) return false;
  const saved = nav;
  const text = next === saved.entries.length ? saved.draft : saved.entries[next];
  ta.value = text;
  saved.index = next;
  nav = next === saved.entries.length ? null : saved;
  complete.close();
  autosize();
  syncSend();
  ta.setSelectionRange(text.length, text.length);
  return true;
}

/** File mentions (`@path`) that name known workspace files, in order. */
async function mentions(text) {
  if (!/(^|\s)@\S/.test(text)) return [];
  const known = new Set(await complete.knownFiles());
  const found = [];
  for (const m of text.matchAll(/(?:^|\s)@(\S+)/g)) {
    let path = m[1];
    if (!known.has(path)) path = path.replace(/[.,;:!?)\]}'"]+$/, '');
    if (known.has(path) && !found.includes(path)) found.push(path);
  }
  return found.map((path) => ({ type: 'file', path }));
}

/** Sends the prompt (or runs its `/command`). */
export async function submit() {
  const text = ta.value;
  if ((!text.trim() && !images.any()) || sending) return;
  complete.close();
  sending = true;
  syncSend();
  let ok;
  try {
    if (/^\/\S/.test(text.trimStart()) && !images.any()) {
      ok = await commands.run(text.trim());
    } else {
      const attachments = await mentions(text);
      const pictures = images.take(text);
      attachments.push(...pictures.attachments);
      const op = { op: 'user_turn', text };
      if (attachments.length) op.attachments = attachments;
      ta.value = '';
      autosize();
      attention.askToNotify();
      ok = await sendOp(op);
      if (!ok) {
        pictures.restore();
        if (!ta.value) ta.value = text;
      }
    }
  } finally {
    sending = false;
  }
  if (ok) {
    if (text.trim()) remember(text);
    if (ta.value === text) ta.value = '';
  }
  nav = null;
  autosize();
  syncSend();
}
