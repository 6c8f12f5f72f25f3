// transcript.js — the conversation column: messages, reasoning, notices.
//
// Guarantees:
// - items are appended in event order; during a batch they collect in a
//   DocumentFragment that is attached once at the batch's end, so a long
//   replay costs one insertion per frame, not one per event;
// - the streaming assistant message's markdown is rendered at most once per
//   batch (so at most once per animation frame), and a finished message is
//   never rendered again (old history messages are rendered once, when they
//   first come near the viewport; until then they show as plain text);
// - the view follows new content only while the reader is at the bottom,
//   and goes back to the bottom for each new request (new activity);
// - user text, reasoning and notices are textContent; only markdown.js makes
//   markup, from assistant text.

import { h, icon, byId, clamp } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { thumbnails } from './images.js';

const STICK_PX = 48;

let root = null;
let emptyEl = null;
let toBottom = null;
let sink = null;
let depth = 0;
let stick = true;
/** scrollTop the page last pinned to; scrolling above it means "reading". */
let pinnedTop = 0;
let pinFrames = 0;
/** The assistant message tokens go to: {el, body, text, thought, thoughtText}. */
let live = null;
/** The element appended last (tokens only continue `live` while it is last). */
let last = null;
/** Text of the last finished assistant message of the running turn. */
let lastAssistantText = null;
let liveDirty = false;
/** Bodies shown as plain text until they come near the viewport → their text. */
const pending = new WeakMap();
/** Watches those bodies (created in init: its root is the transcript). */
let nearView = null;

export function init() {
  root = byId('transcript');
  emptyEl = byId('empty');
  toBottom = byId('to-bottom');
  root.addEventListener('scroll', onScroll, { passive: true });
  root.addEventListener('click', onClick);
  nearView = new IntersectionObserver(renderNearView, { root, rootMargin: '1500px 0px' });
  toBottom.addEventListener('click', () => {
    stick = true;
    toBottom.hidden = true;
    pin();
  });
}

// Following stops only when the reader scrolls UP (away from where the page
// last pinned the view); content growing under a pinned view, or items
// getting their real size (content-visibility), does not count.
function onScroll() {
  const distance = root.scrollHeight - root.scrollTop - root.clientHeight;
  if (distance < STICK_PX) stick = true;
  else if (root.scrollTop < pinnedTop - 2) stick = false;
  toBottom.hidden = stick;
}

/** Scrolls to the bottom, and again over the next frames while sizes settle. */
function pin() {
  root.scrollTop = root.scrollHeight;
  pinnedTop = root.scrollTop;
  if (pinFrames === 0) requestAnimationFrame(repin);
  pinFrames = 6;
}

function repin() {
  if (!stick) {
    pinFrames = 0;
    return;
  }
  if (root.scrollHeight - root.scrollTop - root.clientHeight > 1) {
    root.scrollTop = root.scrollHeight;
    pinnedTop = root.scrollTop;
    pinFrames = 6;
  }
  pinFrames -= 1;
  if (pinFrames > 0) requestAnimationFrame(repin);
}

// Delegated buttons: "Show all" of clamped blocks and code "Copy".
function onClick(e) {
  const more = e.target.closest('button.more');
  if (more) {
    const box = more.closest('.clamp');
    const open = box.classList.toggle('expanded');
    more.textContent = open ? 'Show less' : 'Show all';
    more.setAttribute('aria-expanded', String(open));
    return;
  }
  const copy = e.target.closest('button.copy');
  if (copy) {
    const code = copy.closest('.code-block')?.querySelector('pre');
    if (code) copyText(code).then((ok) => {
      const label = copy.querySelector('span:last-child');
      if (!ok || !label) return;
      label.textContent = 'Copied';
      setTimeout(() => { label.textContent = 'Copy'; }, 1500);
    });
  }
}

// The clipboard API needs a secure context (loopback is one; a tablet on
// the LAN is not): fall back to copying a selection of the block.
async function copyText(el) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(el.textContent);
      return true;
    } catch {
      // Refused: try the selection below.
    }
  }
  const selection = window.getSelection();
  const range = document.createRange();
  range.selectNodeContents(el);
  selection.removeAllRanges();
  selection.addRange(range);
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  selection.removeAllRanges();
  return ok;
}

/** Starts a batch: appended items wait in a fragment until `end()`. */
export function begin() {
  if (depth++ === 0) sink = document.createDocumentFragment();
}

/** Ends a batch: renders the live message once, attaches new items. */
export function end() {
  if (--depth > 0) return;
  if (live && liveDirty) renderLive();
  if (sink.firstChild) root.append(sink);
  sink = null;
  emptyEl.hidden = root.firstElementChild !== null;
  if (stick) pin();
}

/** Runs `fn` as one batch. */
export function batch(fn) {
  begin();
  try {
    fn();
  } finally {
    end();
  }
}

/** Appends an item (finishing the streaming message before it). */
export function add(el) {
  finishLive();
  (sink ?? root).append(el);
  last = el;
}

/** Forgets everything shown. */
export function clear() {
  nearView.disconnect();
  live = null;
  last = null;
  liveDirty = false;
  lastAssistantText = null;
  root.replaceChildren();
  if (sink) sink.replaceChildren();
  stick = true;
  pinnedTop = 0;
  toBottom.hidden = true;
}

// ---- assistant messages ---------------------------------------------------

function newAssistant(streaming) {
  const body = h('div', { class: 'body markdown' });
  const el = h('article', { class: streaming ? 'msg assistant streaming' : 'msg assistant' }, body);
  return { el, body, text: '', thought: null, thoughtText: null };
}

function ensureLive() {
  if (live && last === live.el) return live;
  const m = newAssistant(true);
  add(m.el);
  live = m;
  return m;
}

function renderLive() {
  live.body.replaceChildren(renderMarkdown(live.text));
  liveDirty = false;
}

function thoughtBlock(text, streaming) {
  const content = document.createTextNode(text);
  const el = h('details', { class: streaming ? 'thought live' : 'thought' },
    h('summary', {},
      icon('spark'),
      h('span', { class: 'thought-label', text: streaming ? 'Thinking…' : 'Reasoning' })),
    h('div', { class: 'thought-body' }, content));
  return { el, content };
}

function settleThought(m) {
  if (!m.thought || !m.thought.classList.contains('live')) return;
  m.thought.classList.remove('live');
  const label = m.thought.querySelector('.thought-label');
  if (label) label.textContent = 'Reasoning';
}

/** Finishes the streaming message: final render, then it is never re-rendered. */
function finishLive(stopped = false) {
  const m = live;
  if (!m) return;
  live = null;
  if (liveDirty) {
    m.body.replaceChildren(renderMarkdown(m.text));
    liveDirty = false;
  }
  settleThought(m);
  m.el.classList.remove('streaming');
  if (stopped) {
    m.el.classList.add('stopped');
    m.el.append(h('div', { class: 'stopped-tag' }, icon('stop'), h('span', { text: 'Stopped' })));
  }
  if (!m.text.trim() && !m.thought && !stopped) {
    m.el.remove();
    if (last === m.el) last = null;
    return;
  }
  if (m.text.trim()) lastAssistantText = m.text;
}

/** A piece of the streamed reply. */
export function token(text) {
  const m = ensureLive();
  settleThought(m);
  m.text += text;
  liveDirty = true;
}

/** A piece of streamed reasoning, shown in a collapsed "Thinking…" block. */
export function thought(text) {
  const m = ensureLive();
  if (!m.thought) {
    const t = thoughtBlock('', true);
    m.thought = t.el;
    m.thoughtText = t.content;
    m.el.insertBefore(t.el, m.body);
  }
  m.thoughtText.appendData(text);
}

/** The final answer of a run: shown only when the stream did not show it. */
export function answer(text) {
  const wanted = String(text).trim();
  if (!wanted) return;
  if (live && last === live.el) {
    if (live.text.trim() === wanted) return;
    if (!live.text.trim()) {
      live.text = String(text);
      liveDirty = true;
      return;
    }
  } else if (lastAssistantText != null && lastAssistantText.trim() === wanted) {
    return;
  }
  assistantDone(String(text), []);
}

/**
 * A finished assistant message (history, or an answer that did not stream).
 * `lazy`: show the plain text now and render its markdown only when it
 * nears the viewport (old messages of a long history).
 */
export function assistantDone(text, thinking, lazy = false) {
  if (!text.trim() && !thinking.length) return;
  const m = newAssistant(false);
  for (const t of thinking) m.el.insertBefore(thoughtBlock(t, false).el, m.body);
  if (text && lazy) {
    m.body.textContent = text;
    m.body.classList.add('unrendered');
    pending.set(m.body, text);
    nearView.observe(m.body);
  } else if (text) {
    m.body.append(renderMarkdown(text));
  }
  add(m.el);
  if (text.trim()) lastAssistantText = text;
}

function renderNearView(entries) {
  for (const entry of entries) {
    if (!entry.isIntersecting) continue;
    const body = entry.target;
    nearView.unobserve(body);
    const text = pending.get(body);
    if (text === undefined) continue;
    pending.delete(body);
    body.classList.remove('unrendered');
    body.replaceChildren(renderMarkdown(text));
  }
}

/** The reply streamed since the last model call is void: take it back. */
export function restart(reason) {
  if (live && last === live.el) {
    live.el.remove();
    live = null;
    liveDirty = false;
    last = null;
  }
  notice('info', reason ? `The reply broke off and is asked again: ${reason}` : 'The reply broke off and is asked again.');
}

// ---- turns -------------------------------------------------------------------

export function turnStarted() {
  lastAssistantText = null;
  root.setAttribute('aria-busy', 'true');
}

/** The turn ended: finish the streaming message; say why it stopped early. */
export function turnCompleted(stopReason) {
  root.removeAttribute('aria-busy');
  const cancelled = stopReason === 'cancelled';
  if (live && last === live.el) {
    finishLive(cancelled);
  } else {
    finishLive();
    if (cancelled) add(h('div', { class: 'turn-end' }, icon('stop'), h('span', { text: 'Stopped' })));
  }
  if (stopReason === 'max_iterations') {
    add(h('div', { class: 'turn-end' }, icon('warning'), h('span', { text: 'Stopped: the iteration limit was reached before an answer.' })));
  }
}

// ---- other items -------------------------------------------------------------

/**
 * A user's prompt: its text, a chip per attachment named in `names` (a
 * file's path, a text's name, an image's media type), and the `images`
 * ({media_type, data}) themselves when known, as thumbnails.
 */
export function user(text, names = [], images = []) {
  const body = h('div', { class: 'body', text: String(text) });
  const chips = (Array.isArray(names) ? names : [])
    .filter((n) => typeof n === 'string' && n)
    .map((n) => h('span', { class: 'chip', title: n },
      icon(/^(image|audio)\//.test(n) ? 'image' : 'file'), h('span', { text: n })));
  const shown = thumbnails(images);
  const bubble = clamp(body, String(text), 14, 'bubble');
  add(h('article', { class: 'msg user' }, String(text) ? bubble : null,
    shown.length ? h('div', { class: 'prompt-images' }, shown) : null,
    chips.length ? h('div', { class: 'attachments' }, chips) : null));
  // A new request is new activity: the view goes to it and follows.
  stick = true;
  toBottom.hidden = true;
  pin();
}

/** An info / warning / error notice. */
export function notice(level, message, local = false) {
  const kind = ['info', 'warning', 'error'].includes(level) ? level : 'info';
  add(h('div', { class: `notice ${kind}${local ? ' local' : ''}`, role: kind === 'error' ? 'alert' : null },
    icon(kind),
    h('div', { class: 'notice-text', text: String(message) })));
}

/** A plan step begins: a divider in the conversation. */
export function stepMarker(step, description) {
  add(h('div', { class: 'step-marker' },
    h('span', { class: 'step-no', text: `Step ${step}` }),
    h('span', { class: 'step-desc', text: String(description ?? '') })));
}
