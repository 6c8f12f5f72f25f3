// history.js — draws a `history` event: the conversation now shown.
//
// Guarantees: the transcript is cleared and redrawn from the messages
// alone; a text-protocol tool-results message (a user message starting
// with "Results of your tool calls, in order:") is never shown as the
// user's; a user message shows the user's own text, and each attachment
// the runtime added to it (a quoted file or text, an image) as a chip with
// its name, never its quoted content; each assistant tool call becomes a
// finished card holding the first `role: tool` message after that
// assistant message that answers its id (ids repeat across model calls,
// so a call is never paired with an earlier or a much later answer). The
// work is split into one step per message so the caller can spread a long
// history over frames.

import * as transcript from './transcript.js';
import * as cards from './cards.js';
import * as plan from './plan.js';
import * as todos from './todos.js';

export const TEXT_RESULTS_HEADER = 'Results of your tool calls, in order:';

/** How many of the newest history messages are rendered right away. */
const EAGER_MESSAGES = 60;

/**
 * How the runtime quotes an attachment (crates/runtime/src/attach.rs
 * `quote`): "\n<attachment name=NAME>\nBODY\n</attachment>", NAME written
 * as a Rust string literal (`{:?}`).
 */
const OPENER = /\n<attachment name="((?:[^"\\]|\\.)*)">\n/y;
const OPENER_START = '\n<attachment name="';
const CLOSER = '\n</attachment>';

function parts(message) {
  return Array.isArray(message.content) ? message.content.filter((p) => p && typeof p === 'object') : [];
}

function textOf(message) {
  return parts(message).filter((p) => p.type === 'text').map((p) => String(p.text ?? '')).join('');
}

function thinkingOf(message) {
  return parts(message).filter((p) => p.type === 'thinking' && p.text).map((p) => String(p.text));
}

/** A Rust `{:?}` string literal's content, unescaped. */
function unquote(literal) {
  return literal.replace(/\\(u\{([0-9a-fA-F]{1,6})\}|.)/g, (whole, esc, hex) => {
    if (hex) {
      const code = parseInt(hex, 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return { n: '\n', r: '\r', t: '\t', 0: '\0' }[esc] ?? esc;
  });
}

/**
 * The attachments quoted in `text` from `at` to its end, each
 * OPENER…CLOSER, one right after another: their names, or null when the
 * rest of the text is not exactly that (then it is the user's own text).
 */
function quotedFrom(text, at) {
  const names = [];
  let pos = at;
  while (pos < text.length) {
    OPENER.lastIndex = pos;
    const open = OPENER.exec(text);
    if (!open) return null;
    // A body ends at the closer that ends the text or starts the next quote.
    let end = text.indexOf(CLOSER, OPENER.lastIndex);
    for (;;) {
      if (end < 0) return null;
      const after = end + CLOSER.length;
      if (after === text.length || text.startsWith(OPENER_START, after)) break;
      end = text.indexOf(CLOSER, end + 1);
    }
    names.push(unquote(open[1]));
    pos = end + CLOSER.length;
  }
  return names;
}

/**
 * A user message as the user sent it: {text, names, images}. The runtime
 * keeps the user's text first and each attachment after it (a quoted text
 * part, an image part); quotes run into the text are found too.
 */
export function userOf(message) {
  let text = '';
  let first = true;
  const names = [];
  const images = [];
  for (const p of parts(message)) {
    if (p.type === 'text') {
      const t = String(p.text ?? '');
      // The first text part is the user's own, whatever it says.
      const quoted = !first && t.startsWith(OPENER_START) ? quotedFrom(t, 0) : null;
      first = false;
      if (quoted) names.push(...quoted);
      else text += t;
    } else if ((p.type === 'image' || p.type === 'audio') && typeof p.media_type === 'string') {
      names.push(p.media_type || p.type);
      if (p.type === 'image' && typeof p.data === 'string') images.push({ media_type: p.media_type, data: p.data });
    }
  }
  // Quotes run into the user's text: peel them off its end.
  for (let at = text.indexOf(OPENER_START); at >= 0; at = text.indexOf(OPENER_START, at + 1)) {
    const quoted = quotedFrom(text, at);
    if (quoted) {
      names.unshift(...quoted);
      text = text.slice(0, at);
      break;
    }
  }
  return { text, names, images };
}

/**
 * For each assistant message's tool calls, in order: the first `role: tool`
 * message after it with the call's id (undefined if none).
 */
function pairResults(list) {
  const answers = new Map();
  const next = new Map();
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i];
    if (m.role === 'tool' && m.tool_call_id != null) {
      next.set(m.tool_call_id, m);
    } else if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      answers.set(m, m.tool_calls.map((call) => (call && call.id != null ? next.get(call.id) : undefined)));
    }
  }
  return answers;
}

/**
 * Clears what is shown and answers the steps that draw `messages`, one
 * function per message, to run in order.
 */
export function steps(messages) {
  const list = Array.isArray(messages) ? messages.filter((m) => m && typeof m === 'object') : [];
  transcript.clear();
  cards.reset();
  plan.reset();
  todos.reset();
  const answers = pairResults(list);
  // Only the newest messages are rendered at once; older ones render their
  // markdown when scrolled near (a long history is ready in a blink).
  const eager = list.length - EAGER_MESSAGES;
  return list.map((m, i) => () => drawMessage(m, answers.get(m), i < eager));
}

function drawMessage(m, results, lazy) {
  if (m.role === 'user') {
    const { text, names, images } = userOf(m);
    if (text.startsWith(TEXT_RESULTS_HEADER)) return;
    if (text || names.length) transcript.user(text, names, images);
  } else if (m.role === 'assistant') {
    transcript.assistantDone(textOf(m), thinkingOf(m), lazy);
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
    calls.forEach((call, k) => {
      if (call && call.id != null) cards.fromHistory(call, results ? results[k] : undefined);
    });
  }
}
