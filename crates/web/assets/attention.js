// attention.js — a call waiting for approval is never missed: it is
// scrolled into view when it arrives, and while one is off-screen the tab
// title and the header say so (`#approval-flag`, which scrolls to it).
//
// Guarantees: the flag and the title's mark are shown exactly while some
// approval element is in the page, waiting, and not visible in the
// transcript; answering it (here or in another tab) clears them.

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
