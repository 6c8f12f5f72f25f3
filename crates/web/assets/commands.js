// commands.js — the `/` commands of the prompt.
//
// Guarantees: a command either sends the Op(s) the spec names or shows a
// local notice built from what session_started said (no model call for
// /help, /mcp, /skills, /rules, /model without a name; /ps asks the
// session, which answers at once even mid-turn); `/rewind` shows
// the server's list of turns or its preview, and sends its Op only once
// the user confirms (rewind.js); `/NAME task` for a
// loaded skill sends "Use the skill NAME: task". An unknown command is
// reported and not sent to the model.

import { state, usableSkills } from './state.js';
import { sendOp } from './api.js';
import { toast } from './notify.js';
import * as transcript from './transcript.js';
import * as header from './header.js';
import * as sidebar from './sidebar.js';
import * as rewind from './rewind.js';

const BUILTIN = [
  { name: 'help', args: '', hint: 'List the commands' },
  { name: 'clear', args: '', hint: 'Start a new conversation' },
  { name: 'plan', args: '[goal]', hint: 'Plan mode; propose a plan for the goal' },
  { name: 'react', args: '', hint: 'ReAct mode: work on prompts at once' },
  { name: 'compact', args: '', hint: 'Summarise the oldest part of the conversation' },
  { name: 'rewind', args: '[N [files|conversation]]', hint: 'List the turns, or go back to before turn N (asks first)' },
  { name: 'sessions', args: '', hint: 'Open the saved sessions' },
  { name: 'resume', args: 'ID', hint: 'Continue a saved session' },
  { name: 'mcp', args: '', hint: 'Show the MCP servers' },
  { name: 'ps', args: '', hint: 'Show the background commands' },
  { name: 'skills', args: '', hint: 'Show the skills' },
  { name: 'rules', args: '', hint: 'Show the rules' },
  { name: 'model', args: '[name]', hint: 'Show the model, or switch to another' },
  { name: 'export', args: '', hint: 'Download this session as Markdown' },
];

/** Everything `/` completes: the built-ins, then each loaded skill. */
export function commandList() {
  const names = new Set(BUILTIN.map((c) => c.name));
  const skills = usableSkills()
    .filter((s) => !names.has(s.name))
    .map((s) => ({ name: s.name, args: 'task', hint: String(s.description || 'Skill') }));
  return [...BUILTIN, ...skills];
}

function say(text) {
  transcript.batch(() => transcript.notice('info', text, true));
}

/**
 * Runs a `/...` line. Answers true when it was handled (the prompt may be
 * cleared), false when it was not (unknown command, or its Op failed).
 */
export async function run(line) {
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(line.trim());
  if (!m) return false;
  const name = m[1];
  const rest = m[2].trim();
  switch (name) {
    case 'help':
      say(helpText());
      return true;
    case 'clear':
      return sendOp({ op: 'new_conversation' });
    case 'plan':
      if (!(await header.chooseMode('plan'))) return false;
      return rest ? sendOp({ op: 'user_turn', text: rest }) : true;
    case 'react':
      return header.chooseMode('react');
    case 'compact':
      return sendOp({ op: 'compact' });
    case 'rewind': {
      const [turn, scope] = rest.split(/\s+/).filter(Boolean);
      return turn === undefined ? rewind.list() : rewind.preview(turn, scope ?? '');
    }
    case 'sessions':
      sidebar.setOpen(true);
      return true;
    case 'resume':
      return sendOp(rest ? { op: 'resume', id: rest } : { op: 'resume' });
    case 'mcp':
      say(mcpText());
      return true;
    case 'ps':
      return sendOp({ op: 'list_background' });
    case 'skills':
      say(skillsText());
      return true;
    case 'rules':
      say(rulesText());
      return true;
    case 'model':
      if (!rest) {
        say(state.model
          ? `Model: ${state.model} (${state.provider}), context window ${state.contextWindow.toLocaleString()} tokens.\n/model NAME switches to another model of the same provider.`
          : 'No model is known yet.');
        return true;
      }
      return sendOp({ op: 'switch_model', model: rest });
    case 'export':
      return exportCurrent();
    default: {
      const skill = usableSkills().find((s) => s.name === name);
      if (skill) return sendOp({ op: 'user_turn', text: `Use the skill ${skill.name}: ${rest}`.trimEnd() });
      toast(`Unknown command /${name}. /help lists the commands.`);
      return false;
    }
  }
}

function exportCurrent() {
  if (!state.sessionId) {
    toast('Nothing is saved yet: the session is saved with its first prompt.', 'info');
    return false;
  }
  const a = document.createElement('a');
  a.href = `api/sessions/${encodeURIComponent(state.sessionId)}/export`;
  a.download = `${state.sessionId}.md`;
  document.body.append(a);
  a.click();
  a.remove();
  return true;
}

function helpText() {
  const lines = ['Commands:'];
  for (const c of BUILTIN) lines.push(`  /${c.name}${c.args ? ` ${c.args}` : ''} — ${c.hint}`);
  const skills = usableSkills();
  if (skills.length) {
    lines.push('', 'Skills:');
    for (const s of skills) lines.push(`  /${s.name} task — ${s.description || ''}`.trimEnd());
  }
  lines.push('', 'Keys: Enter sends · Shift+Enter new line · ↑/↓ history · @ mentions a file · Esc stops the turn');
  return lines.join('\n');
}

function mcpText() {
  if (!state.servers.size) return 'No MCP servers are configured.';
  const lines = ['MCP servers:'];
  for (const s of state.servers.values()) lines.push(`  ${s.name}: ${s.state}${s.message ? ` — ${s.message}` : ''}`);
  return lines.join('\n');
}

function skillsText() {
  const skills = state.session && Array.isArray(state.session.skills) ? state.session.skills : [];
  if (!skills.length) return 'No skills are loaded.';
  const lines = ['Skills:'];
  for (const s of skills) lines.push(`  ${s.name} (${s.state}, ${s.source}): ${s.description}`);
  return lines.join('\n');
}

function rulesText() {
  const rules = state.session && Array.isArray(state.session.rules) ? state.session.rules : [];
  return rules.length ? `Rules:\n${rules.map((r) => `  ${r}`).join('\n')}` : 'No rules are set.';
}
