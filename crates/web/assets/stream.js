// stream.js — the connection to /api/events and the order events apply in.
//
// Guarantees:
// - events apply strictly in arrival order, in batches bounded by a time
//   budget per animation frame, so a long replay never freezes the page and
//   streamed text is drawn at most once per frame;
// - `document.body.dataset.ready = "1"` is set once the replay that follows
//   a `reset` has been drawn: the server ends every replay with a
//   `replayed` event, applied in order after everything before it (a long
//   history's follow-up steps included). It is removed by the next `reset`;
// - a dropped stream reconnects (EventSource resends Last-Event-ID); a
//   refused one is recreated with back-off, unless the token was rejected
//   (401), which shows the "link expired" text and stops.

import { setConnection } from './notify.js';
import { tokenRejected, markExpired, isExpired } from './api.js';
import * as transcript from './transcript.js';

const LIVE_BUDGET_MS = 10;
const REPLAY_BUDGET_MS = 40;

let handlers = null;
let queue = [];
let head = 0;
let scheduled = false;
let replaying = false;
let source = null;
let retryDelay = 1000;

/**
 * Connects. `h`: {onReset(), onEvent(ev, live) → steps?}; `live` is false
 * for what a replay draws again.
 */
export function start(h) {
  handlers = h;
  open();
}

function open() {
  if (isExpired()) return;
  const es = new EventSource('api/events');
  source = es;
  es.onopen = () => {
    retryDelay = 1000;
    setConnection(null);
  };
  es.onerror = () => {
    if (source !== es) return;
    if (es.readyState === EventSource.CLOSED) {
      es.close();
      source = null;
      refused();
    } else {
      setConnection('Connection lost. Reconnecting…');
    }
  };
  es.addEventListener('reset', () => push({ kind: 'reset' }));
  es.addEventListener('replayed', () => push({ kind: 'replayed' }));
  es.onmessage = (e) => {
    const ev = parse(e.data);
    if (ev) push({ kind: 'event', ev });
  };
}

// The server refused the stream (or is gone): find out whether the token
// died; otherwise try again, backing off.
async function refused() {
  if (await tokenRejected()) {
    markExpired();
    return;
  }
  setConnection('Cannot reach axon. Retrying…');
  setTimeout(open, retryDelay);
  retryDelay = Math.min(retryDelay * 2, 15000);
}

function parse(text) {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' ? v : null;
  } catch {
    return null;
  }
}

function push(item) {
  queue.push(item);
  schedule();
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  // Hidden tabs get no animation frames; keep the queue short anyway.
  if (document.hidden) setTimeout(drain, 50);
  else requestAnimationFrame(drain);
}

function drain() {
  scheduled = false;
  const t0 = performance.now();
  const budget = replaying ? REPLAY_BUDGET_MS : LIVE_BUDGET_MS;
  transcript.begin();
  try {
    while (head < queue.length && performance.now() - t0 < budget) {
      const item = queue[head];
      queue[head++] = undefined;
      apply(item);
    }
  } finally {
    transcript.end();
  }
  if (head < queue.length) {
    schedule();
    return;
  }
  queue = [];
  head = 0;
}

function apply(item) {
  try {
    if (typeof item === 'function') {
      item();
    } else if (item.kind === 'reset') {
      replaying = true;
      delete document.body.dataset.ready;
      handlers.onReset();
    } else if (item.kind === 'replayed') {
      replaying = false;
      document.body.dataset.ready = '1';
    } else {
      const steps = handlers.onEvent(item.ev, !replaying);
      // Follow-up steps (a long history) run next, before later events.
      if (Array.isArray(steps) && steps.length) queue = queue.slice(0, head).concat(steps, queue.slice(head));
    }
  } catch (err) {
    console.error('axon: an event could not be shown', err);
  }
}
