// diff.js — unified diffs as coloured lines, and the other previews.
//
// Guarantees: diff, command and argument text is shown with textContent
// only. A diff line keeps its leading "+", "-" or " " so its text is the
// diff's text; line numbers live in a data attribute drawn by CSS and are
// not part of the text. Lines are `.add`, `.del`, `.hunk`, `.ctx` or `.meta`
// (the `--- a/` / `+++ b/` file header is summarised in the head instead).

import { h, icon, clamp, prettyJson } from './dom.js';

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;
/** A hunk without line numbers (an edit replayed from its arguments). */
const BARE_HUNK = '@@ @@';
const SHOWN_LINES = 40;

/** A diff line's line number, when its hunk has them. */
function numbered(n) {
  return n === null ? {} : { n: String(n) };
}

/** The `.diff` element of a `diff` preview ({path, diff, created}); a
 * hunk header `@@ @@` starts lines without numbers. */
export function renderDiff(preview) {
  const text = String(preview.diff ?? '');
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();

  const body = h('div', { class: 'diff-lines' });
  let adds = 0;
  let dels = 0;
  let inHunk = false;
  let oldLine = 0;
  let newLine = 0;
  for (const line of lines) {
    if (line === BARE_HUNK) {
      inHunk = true;
      oldLine = null;
      newLine = null;
      continue;
    }
    const hunk = HUNK.exec(line);
    if (hunk) {
      inHunk = true;
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      body.append(h('div', { class: 'hunk', text: line }));
      continue;
    }
    if (!inHunk) {
      if (line.startsWith('--- ') || line.startsWith('+++ ')) continue;
      body.append(h('div', { class: 'meta', text: line }));
      continue;
    }
    const first = line[0];
    if (first === '+') {
      adds++;
      body.append(h('div', { class: 'add', dataset: numbered(newLine), text: line }));
      if (newLine !== null) newLine++;
    } else if (first === '-') {
      dels++;
      body.append(h('div', { class: 'del', dataset: numbered(oldLine), text: line }));
      if (oldLine !== null) oldLine++;
    } else if (first === '\\') {
      body.append(h('div', { class: 'meta', text: line }));
    } else {
      if (oldLine !== null) oldLine++;
      body.append(h('div', { class: 'ctx', dataset: numbered(newLine), text: line }));
      if (newLine !== null) newLine++;
    }
  }

  const head = h('div', { class: 'diff-head' },
    icon('file'),
    h('span', { class: 'diff-path', text: String(preview.path ?? '') }),
    preview.created ? h('span', { class: 'badge new', text: 'new file' }) : null,
    h('span', { class: 'diff-stat' },
      h('span', { class: 'stat-add', text: `+${adds}` }),
      h('span', { class: 'stat-del', text: `−${dels}` })));
  return h('div', { class: 'diff' }, head, clamp(body, text, SHOWN_LINES, 'diff-clamp'));
}

/** The element showing any preview kind; unknown kinds show the call's arguments. */
export function renderPreview(preview, call) {
  const kind = preview && typeof preview === 'object' ? preview.kind : null;
  switch (kind) {
    case 'diff':
      return renderDiff(preview);
    case 'command':
      return h('div', { class: 'preview command' },
        h('div', { class: 'command-line' },
          h('span', { class: 'prompt-sign', 'aria-hidden': 'true', text: '$' }),
          h('code', { text: String(preview.command ?? '') })),
        h('div', { class: 'workdir', text: [
          preview.workdir && preview.workdir !== '.' ? `in ${preview.workdir}` : null,
          preview.sandbox ? `sandboxed: ${preview.sandbox}` : 'not sandboxed: runs with your full rights',
        ].filter(Boolean).join(' · ') }));
    case 'mcp':
      return h('div', { class: 'preview mcp' },
        h('div', { class: 'preview-label' },
          h('span', { class: 'server', text: String(preview.server ?? '') }),
          h('span', { text: ' · ' }),
          h('span', { class: 'mcp-tool', text: String(preview.tool ?? '') })),
        jsonBlock(preview.arguments));
    case 'invalid':
      return h('div', { class: 'preview invalid' }, icon('warning'), h('span', { text: String(preview.message ?? '') }));
    case 'arguments':
      return h('div', { class: 'preview arguments' }, jsonBlock(preview.arguments));
    default:
      return h('div', { class: 'preview arguments' }, jsonBlock(call ? call.arguments : preview));
  }
}

function jsonBlock(value) {
  const text = prettyJson(value);
  return clamp(h('pre', { class: 'json', text }), text, 12);
}
