// complete.js — the completion popup of the prompt: `@` files, `/` commands.
//
// Guarantees: `#complete` is an ARIA listbox of at most 10 `[role=option]`
// items, shown only while the caret is in an `@word` or in a leading
// `/command`; ArrowUp/ArrowDown move, Tab/Enter pick, Esc closes; picking
// replaces just the word being completed. The file list is fetched once
// (/api/files) and reused. Labels are textContent.

import { h } from './dom.js';
import { listFiles } from './api.js';

const MAX = 10;

let input = null;
let popup = null;
let commands = () => [];
let files = null;
let filesLoading = null;
/** {kind: 'file'|'command', start, end, items: [{value, label, hint, match}]} */
let current = null;
let active = 0;

/**
 * `commandList()` answers [{name, args, hint}] for `/` completion.
 */
export function init(textarea, listbox, commandList) {
  input = textarea;
  popup = listbox;
  commands = commandList;
  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-controls', popup.id);
  input.setAttribute('aria-expanded', 'false');
  popup.addEventListener('mousedown', (e) => e.preventDefault());
  popup.addEventListener('click', (e) => {
    const option = e.target.closest('[role=option]');
    if (option) pick(Number(option.dataset.index));
  });
  input.addEventListener('blur', () => setTimeout(() => { if (document.activeElement !== input) close(); }, 0));
  input.addEventListener('click', update);
}

/** The workspace's files, fetched once; [] while unknown. */
export function knownFiles() {
  if (files) return Promise.resolve(files);
  if (!filesLoading) {
    filesLoading = listFiles().then((list) => {
      files = list;
      return list;
    }, () => {
      filesLoading = null;
      return [];
    });
  }
  return filesLoading;
}

export function isOpen() {
  return current !== null;
}

export function close() {
  current = null;
  popup.hidden = true;
  popup.replaceChildren();
  input.setAttribute('aria-expanded', 'false');
  input.removeAttribute('aria-activedescendant');
}

/** Recomputes the popup for the caret's word (call on input/click). */
export function update() {
  const pos = input.selectionStart;
  if (pos !== input.selectionEnd) return close();
  const before = input.value.slice(0, pos);

  const slash = /^\/(\S*)$/.exec(before);
  if (slash) {
    const q = slash[1].toLowerCase();
    const items = commands()
      .filter((c) => c.name.toLowerCase().startsWith(q))
      .slice(0, MAX)
      .map((c) => ({ value: `/${c.name} `, label: `/${c.name}`, args: c.args, hint: c.hint, match: q.length + 1 }));
    return show('command', 0, pos, items);
  }

  const at = /(^|\s)@([^\s@]*)$/.exec(before);
  if (at) {
    const q = at[2];
    const start = pos - q.length - 1;
    if (!files) {
      knownFiles().then(() => { if (document.activeElement === input) update(); });
      return close();
    }
    const items = rankFiles(files, q).map((f) => ({ value: `@${f.path} `, label: f.path, hint: '', range: f.range }));
    return show('file', start, pos, items);
  }
  close();
}

/**
 * Files matching `q`: substring matches first (basename before path,
 * shorter first), then subsequence ("fuzzy") matches; at most 10.
 */
export function rankFiles(list, q) {
  const query = q.toLowerCase();
  if (!query) return list.slice(0, MAX).map((path) => ({ path, range: null }));
  const scored = [];
  for (const path of list) {
    const lower = path.toLowerCase();
    const base = lower.lastIndexOf('/') + 1;
    const idx = lower.indexOf(query, base);
    if (idx !== -1) {
      scored.push({ path, score: idx === base ? 0 : 1, range: [idx, idx + query.length] });
      continue;
    }
    const any = lower.indexOf(query);
    if (any !== -1) {
      scored.push({ path, score: 2, range: [any, any + query.length] });
      continue;
    }
    if (isSubsequence(query, lower)) scored.push({ path, score: 3, range: null });
  }
  scored.sort((a, b) => a.score - b.score || a.path.length - b.path.length || a.path.localeCompare(b.path));
  return scored.slice(0, MAX);
}

function isSubsequence(q, s) {
  let i = 0;
  for (let j = 0; j < s.length && i < q.length; j++) if (s[j] === q[i]) i++;
  return i === q.length;
}

function show(kind, start, end, items) {
  if (!items.length) return close();
  const same = current && current.kind === kind && current.items.length === items.length
    && current.items.every((it, i) => it.label === items[i].label);
  current = { kind, start, end, items };
  if (!same) active = 0;
  popup.replaceChildren(...items.map((item, i) => {
    const id = `complete-${i}`;
    return h('div', {
      id,
      role: 'option',
      class: 'option',
      dataset: { index: String(i), value: item.value },
      'aria-selected': String(i === active),
    },
    h('span', { class: 'option-label' }, labelNodes(item)),
    item.args ? h('span', { class: 'option-args', text: item.args }) : null,
    item.hint ? h('span', { class: 'option-hint', text: item.hint }) : null);
  }));
  popup.setAttribute('aria-label', kind === 'file' ? 'Files' : 'Commands');
  popup.dataset.kind = kind;
  popup.hidden = false;
  input.setAttribute('aria-expanded', 'true');
  input.setAttribute('aria-activedescendant', `complete-${active}`);
}

// The label with the matched part emphasised (as separate text nodes).
function labelNodes(item) {
  const text = item.label;
  const range = item.range ?? (item.match ? [0, Math.min(item.match, text.length)] : null);
  if (!range || range[0] === range[1]) return text;
  return [text.slice(0, range[0]), h('mark', { text: text.slice(range[0], range[1]) }), text.slice(range[1])];
}

function move(delta) {
  const n = current.items.length;
  active = (active + delta + n) % n;
  for (const el of popup.children) el.setAttribute('aria-selected', String(Number(el.dataset.index) === active));
  popup.children[active]?.scrollIntoView({ block: 'nearest' });
  input.setAttribute('aria-activedescendant', `complete-${active}`);
}

function pick(index) {
  if (!current) return;
  const item = current.items[index];
  if (!item) return;
  const v = input.value;
  input.value = v.slice(0, current.start) + item.value + v.slice(current.end);
  const caret = current.start + item.value.length;
  input.setSelectionRange(caret, caret);
  close();
  input.focus();
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

/** Handles a keydown while the popup is open; true when consumed. */
export function onKey(e) {
  if (!current || e.isComposing) return false;
  switch (e.key) {
    case 'ArrowDown':
      move(1);
      break;
    case 'ArrowUp':
      move(-1);
      break;
    case 'Tab':
      if (e.shiftKey) return false;
      pick(active);
      break;
    case 'Enter': {
      if (e.shiftKey || e.ctrlKey || e.metaKey || e.altKey) return false;
      // Already typed out in full: Enter sends, as it would without the popup.
      const typed = input.value.slice(current.start, current.end);
      if (typed === current.items[active].value.trimEnd()) {
        close();
        return false;
      }
      pick(active);
      break;
    }
    case 'Escape':
      close();
      break;
    default:
      return false;
  }
  e.preventDefault();
  e.stopPropagation();
  return true;
}

