// rewind.js — `/rewind` in the page: the session's turns, and a preview
// that asks before anything is rewound.
//
// Guarantees: a thin front end over the runtime: the turns and the preview
// lines are the server's (read from the saved session by the runtime's own
// functions), the turn and scope are passed as typed (the server checks
// them), and the only thing that changes anything is the runtime's
// `rewind` Op, sent once and only from the preview's Confirm button.
// Cancel sends nothing. After the rewind the runtime's `history` event
// redraws the conversation as it now is, and its notices say what was done.

import { h, icon } from './dom.js';
import { listTurns, rewindPreview, sendOp, ApiError } from './api.js';
import { toast } from './notify.js';
import * as transcript from './transcript.js';

const NOTHING = 'Nothing to rewind: the session has no turns yet.';

function failed(err) {
  if (err instanceof ApiError) transcript.batch(() => transcript.notice('warning', err.message, true));
  else toast(String(err?.message ?? err));
}

/** `/rewind`: the turns as a table, each with a button that previews it. */
export async function list() {
  let listed;
  try {
    listed = await listTurns();
  } catch (err) {
    failed(err);
    return false;
  }
  if (!listed.turns.length) {
    transcript.batch(() => transcript.notice('info', NOTHING, true));
    return true;
  }
  const rows = listed.turns.map((t) => h('tr', { dataset: { turn: String(t.turn) } },
    h('td', { class: 'rewind-turn', text: String(t.turn) }),
    h('td', { class: 'rewind-files', text: t.changed_files ? 'changed files' : 'no file changes' }),
    h('td', { class: 'rewind-prompt', text: String(t.prompt ?? '') }),
    h('td', { class: 'rewind-act' },
      h('button', {
        type: 'button', class: 'btn ghost', text: 'Rewind…',
        title: `Rewind to before turn ${t.turn}`,
        on: { click: () => preview(String(t.turn), '') },
      }))));
  const more = listed.total > listed.turns.length
    ? h('div', { class: 'rewind-more', text: `The newest ${listed.turns.length} of ${listed.total} turns.` })
    : null;
  transcript.batch(() => transcript.add(h('div', { class: 'notice info local rewind-list' },
    icon('info'),
    h('div', { class: 'notice-text' },
      h('div', { text: 'Turns (/rewind N goes back to before turn N: files and conversation; add `files` or `conversation` for one of them):' }),
      h('table', { class: 'rewind-table' }, h('tbody', null, rows)),
      more))));
  return true;
}

/**
 * `/rewind N [scope]`: the preview, with Confirm and Cancel in the page.
 * Answers true when the preview is shown.
 */
export async function preview(turn, scope) {
  let plan;
  try {
    plan = await rewindPreview(turn, scope);
  } catch (err) {
    failed(err);
    return false;
  }
  const confirm = h('button', { type: 'button', class: 'btn primary rewind-confirm', text: 'Rewind' });
  const cancel = h('button', { type: 'button', class: 'btn rewind-cancel', text: 'Cancel' });
  const buttons = h('div', { class: 'rewind-buttons' }, confirm, cancel);
  const el = h('div', { class: 'notice warning rewind-preview', role: 'group', 'aria-label': `Rewind to before turn ${plan.turn}?` },
    icon('warning'),
    h('div', { class: 'notice-text' },
      h('div', { class: 'rewind-lines', text: plan.lines.join('\n') }),
      h('div', { class: 'rewind-question', text: 'Rewind?' }),
      buttons));
  const settle = (text) => buttons.replaceWith(h('div', { class: 'rewind-answer', text }));
  cancel.addEventListener('click', () => settle('Not rewound: nothing was changed.'));
  confirm.addEventListener('click', async () => {
    confirm.disabled = true;
    cancel.disabled = true;
    if (await sendOp({ op: 'rewind', turn: plan.turn, scope: plan.scope })) settle('Rewinding…');
    else {
      confirm.disabled = false;
      cancel.disabled = false;
    }
  });
  transcript.batch(() => transcript.add(el));
  confirm.focus();
  return true;
}
