// plan.js — the plan panel (`#plan`): goal, steps, Approve / Edit / Reject.
//
// Guarantees: `#plan` is hidden when there is no plan; the answer buttons
// exist only while the plan is a draft waiting for approval; Save sends
// `edit_plan` with the WHOLE plan (id, status, timestamps and every step's
// other fields kept; new steps get fresh ids and status "pending"); step
// text is shown with textContent and edited in plain form controls.

import { h, icon, byId } from './dom.js';
import { sendOp } from './api.js';
import { syncSide, stacked, setCollapsed } from './todos.js';

const STEP_STATUSES = new Set(['pending', 'running', 'completed', 'failed', 'skipped']);

let plan = null;
/** A draft copy while editing, else null. */
let draft = null;
let busy = false;

export function init() {
  const toggle = byId('plan-toggle');
  toggle.addEventListener('click', () => {
    setCollapsed(byId('plan'), toggle, !byId('plan').classList.contains('collapsed'));
  });
}

export function reset() {
  plan = null;
  draft = null;
  render();
}

/** `plan_proposed`: a plan waits for approval. */
export function proposed(p) {
  plan = clone(p);
  draft = null;
  busy = false;
  // A plan waiting for an answer is always shown open.
  setCollapsed(byId('plan'), byId('plan-toggle'), false);
  render();
}

/** `plan_changed`: the plan being carried out changed. */
export function changed(p) {
  const wasWaiting = waiting();
  plan = clone(p);
  if (plan.status !== 'draft') draft = null;
  // Once it runs, small screens keep just its header (status and progress).
  if (wasWaiting && !waiting() && stacked.matches) setCollapsed(byId('plan'), byId('plan-toggle'), true);
  render();
}

export function stepStarted(id) {
  const step = plan && plan.steps.find((s) => s.id === id);
  if (!step) return;
  step.status = 'running';
  render();
}

export function stepComplete(id, result) {
  const step = plan && plan.steps.find((s) => s.id === id);
  if (!step) return;
  step.result = String(result ?? '');
  render();
}

function clone(p) {
  const copy = JSON.parse(JSON.stringify(p ?? {}));
  if (!Array.isArray(copy.steps)) copy.steps = [];
  return copy;
}

function waiting() {
  return plan && plan.status === 'draft';
}

function render() {
  const panel = byId('plan');
  panel.hidden = !plan;
  syncSide();
  if (!plan) return;
  const status = String(plan.status ?? '');
  const badge = byId('plan-status');
  const done = plan.steps.filter((st) => st.status === 'completed' || st.status === 'skipped').length;
  badge.textContent = status === 'draft' ? 'waiting for approval'
    : status === 'executing' ? `running · ${done}/${plan.steps.length}` : status;
  badge.dataset.status = status;
  panel.dataset.status = status;

  const shown = draft ?? plan;
  const body = byId('plan-body');
  const steps = h('ol', { class: 'steps' }, shown.steps.map((step, i) => draft ? editStep(step, i) : viewStep(step)));
  const parts = [
    draft
      ? h('label', { class: 'plan-goal editing' }, h('span', { class: 'field-label', text: 'Goal' }),
        inputFor(h('textarea', { class: 'goal', rows: '2' }), draft, 'goal'))
      : h('p', { class: 'plan-goal', text: String(plan.goal ?? '') }),
    steps,
    actions(),
  ];
  body.replaceChildren(...parts.filter(Boolean));
}

function viewStep(step) {
  const status = STEP_STATUSES.has(step.status) ? step.status : 'pending';
  return h('li', { class: 'step', dataset: { status, id: String(step.id) } },
    h('span', { class: 'step-icon', 'aria-hidden': 'true' }),
    h('div', { class: 'step-main' },
      h('div', { class: 'description', text: String(step.description ?? '') }),
      step.expected_outcome ? h('div', { class: 'expected', text: String(step.expected_outcome) }) : null,
      step.result ? h('div', { class: 'step-result', text: String(step.result) }) : null,
      h('span', { class: 'sr-only', text: ` (${status})` })));
}

function editStep(step, index) {
  const remove = h('button', { type: 'button', class: 'icon-button remove-step', 'aria-label': `Remove step ${index + 1}`, title: 'Remove step' }, icon('x'));
  remove.addEventListener('click', () => {
    draft.steps.splice(index, 1);
    render();
  });
  return h('li', { class: 'step editing', dataset: { status: step.status, id: String(step.id) } },
    h('span', { class: 'step-icon', 'aria-hidden': 'true' }),
    h('div', { class: 'step-main' },
      inputFor(h('textarea', { class: 'description', rows: '2', 'aria-label': `Step ${index + 1}` }), step, 'description'),
      inputFor(h('input', { class: 'expected', type: 'text', placeholder: 'Expected outcome', 'aria-label': `Expected outcome of step ${index + 1}` }), step, 'expected_outcome')),
    remove);
}

function inputFor(el, target, key) {
  el.value = String(target[key] ?? '');
  el.addEventListener('input', () => { target[key] = el.value; });
  return el;
}

function button(id, label, kind, onClick) {
  const b = h('button', { type: 'button', id, class: `btn ${kind}`.trim(), text: label, disabled: busy });
  b.addEventListener('click', onClick);
  return b;
}

function actions() {
  if (!waiting()) return null;
  if (draft) {
    const add = h('button', { type: 'button', class: 'btn ghost add-step' }, icon('plus'), h('span', { text: 'Add step' }));
    add.addEventListener('click', () => {
      const id = draft.steps.reduce((max, s) => Math.max(max, Number(s.id) || 0), 0) + 1;
      draft.steps.push({ id, description: '', expected_outcome: '', status: 'pending' });
      render();
      const fields = byId('plan-body').querySelectorAll('textarea.description');
      fields[fields.length - 1]?.focus();
    });
    return h('div', { class: 'plan-actions' }, add, h('span', { class: 'spacer' }),
      button('plan-cancel', 'Cancel', '', () => { draft = null; render(); }),
      button('plan-save', 'Save', 'primary', save));
  }
  return h('div', { class: 'plan-actions' },
    button('plan-approve', 'Approve', 'primary', () => answer({ op: 'approve_plan' }, () => {
      plan.status = 'approved';
      if (stacked.matches) setCollapsed(byId('plan'), byId('plan-toggle'), true);
    })),
    button('plan-edit', 'Edit', '', () => { draft = clone(plan); render(); byId('plan-body').querySelector('textarea.description')?.focus(); }),
    button('plan-reject', 'Reject', 'danger', () => answer({ op: 'reject_plan' }, () => { plan = null; })));
}

async function answer(op, onSent) {
  busy = true;
  render();
  const ok = await sendOp(op);
  busy = false;
  if (ok) onSent();
  render();
}

async function save() {
  const edited = clone(draft);
  edited.steps = edited.steps.filter((s) => String(s.description).trim());
  if (!edited.steps.length) return;
  edited.updated_at = Date.now();
  busy = true;
  render();
  const ok = await sendOp({ op: 'edit_plan', plan: edited });
  busy = false;
  if (ok) {
    plan = edited;
    draft = null;
  }
  render();
}
